"""`serve --http` checks for the http extra as pyproject.toml declares it."""

from __future__ import annotations

import importlib.metadata
import re

from kinetis_mcp_docs.server.http.uvicorn.serve import EXTRA_MODULES, missing_extra

# uvicorn does without it (it runs on the asyncio loop).
OPTIONAL = {"uvloop"}


def test_the_modules_checked_at_start_are_the_http_extras_requirements() -> None:
    requirements = importlib.metadata.requires("kinetis-mcp-docs") or []
    declared = set()
    for requirement in requirements:
        if re.search(r"""extra\s*==\s*["']http["']""", requirement):
            name = re.match(r"[A-Za-z0-9_.-]+", requirement)
            assert name is not None
            declared.add(name.group().lower().replace("-", "_"))
    assert declared - OPTIONAL == set(EXTRA_MODULES)
    assert missing_extra() is None  # the tests run with the extra installed
