"""The search behind `search_docs`, in parts: a page's text (`page_text`), the contract's
scoring (`contract`), the relevance ranking (`relevance`, over Tantivy, with the
identifier-aware analysis of `identifiers`) and the passage a snippet shows (`passages`).
`search_index.SearchIndex` puts them together. Only the HTTP route imports any of it."""
