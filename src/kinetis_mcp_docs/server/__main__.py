"""`python -m kinetis_mcp_docs.server [--docs-dir DIR]`: the stdio server, importing no click."""

from __future__ import annotations

import sys

from .stdio.serve import main

if __name__ == "__main__":
    sys.exit(main())
