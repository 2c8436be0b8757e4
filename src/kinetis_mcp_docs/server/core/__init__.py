"""What `DocsApplication` is made of, knowing nothing of a wire: the catalogue, the core's
errors and the one place a page source's failure becomes one, the page window and page
search over text, and the strings the server writes (`display`, `reasons`)."""
