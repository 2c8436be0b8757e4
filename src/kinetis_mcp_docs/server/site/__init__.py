"""The HTTP route's pages: the catalogue or a local tree (`pages`), a `fetch_page` URL made
into a path (`page_paths`), the tree's files read under bounds (`tree_files`) and watched
for changes (`tree_watch`)."""
