"""The MCP clients this installer registers the server with, through their own CLIs only:
one class per client (`claude_code`, `codex`) over what they share (`base`), the
registration a client reports (`registration`), and a registration at another scope than
user (`scope`). `known` names them, for the commands.
"""
