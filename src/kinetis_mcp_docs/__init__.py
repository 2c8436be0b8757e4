"""Read the current Kinetis documentation from a coding agent, over MCP."""

__version__ = "1.0.0"
# The one MCP revision the stdio server speaks, and the one the installer's checks of a
# server ask for: here, so that neither part imports the other for it.
PROTOCOL_VERSION = "2025-06-18"
