"""The stdio MCP server and its embeddable application core.

Importing this package is cheap on purpose: the updater hands over to
`python -m kinetis_mcp_docs.server` on every client spawn.
"""
