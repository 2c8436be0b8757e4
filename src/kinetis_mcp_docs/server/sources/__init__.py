"""Where pages come from: the seam (`page_source`), the live origin through the bounded
fetcher (`fetcher`, `content_coding`), a local docs directory (`localdocs`), and a local
tree of pages for the HTTP route (`tree_files`, `tree_watch`, `page_paths`).

Importing this package imports nothing: the spawn path pays only for what it uses.
"""
