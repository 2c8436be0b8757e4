"""The tools: one object per tool binds its schema, its typed arguments and the code that
runs it (`base`); the stdio server's page tools (`doc_tools`) and the HTTP route's site
tools (`site_tools`) are built from it.
"""
