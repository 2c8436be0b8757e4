"""Benchmarks of kinetis-mcp-docs beside a peer built on the official MCP Python SDK.

Run them with `python3 -m nox -s bench`; see `docs/performance.md` for the results.
"""
