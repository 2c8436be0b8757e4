"""The search behind `search_docs`, in parts: a page's text (`page_text`), the contract's
scoring (`contract`), the relevance ranking (`relevance`, over Tantivy: what it indexes in
`schema`, how it reads a query in `query`, with `names` kept whole and a question's own
words, `question_words`, weighed less), the passage a snippet shows (`passages`) and the
bound on what a query costs (`bounds`). `search_index.SearchIndex` puts them together. Only
the HTTP route imports any of it."""
