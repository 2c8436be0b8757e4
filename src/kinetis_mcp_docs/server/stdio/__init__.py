"""The stdio transport: frames on stdin and stdout (`framing`), the dispatch of each
request to the MCP methods over `DocsApplication` (`dispatcher`, `methods`), and what a
process serving a client needs of its standard streams and signals. `serve` runs it."""
