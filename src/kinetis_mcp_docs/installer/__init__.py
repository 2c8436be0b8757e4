"""Install, register and update the server.

`python -m kinetis_mcp_docs.installer.start` is what a client spawns.
"""
