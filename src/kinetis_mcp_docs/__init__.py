"""Read the current Kinetis documentation from a coding agent, over MCP."""

__version__ = "1.0.0"
