"""What an environment holds, read from its metadata: no process is started."""

from __future__ import annotations

import importlib.metadata
import os
import re
from pathlib import Path

from ..layout import InstallLayout
from .links import current_environment

DISTRIBUTION = "kinetis-mcp-docs"
_SEPARATORS = re.compile(r"[-_.]+")


def installed_version(layout: InstallLayout) -> str | None:
    """The kinetis-mcp-docs version in `current`, read from its metadata; no process started."""
    env = current_environment(layout)
    if env is None:
        return None
    return environment_version(env)


def environment_version(env: Path) -> str | None:
    """The kinetis-mcp-docs version installed in `env`, from its metadata."""
    return installed_distributions(env).get(DISTRIBUTION)


def installed_distributions(env: Path) -> dict[str, str]:
    """Every distribution installed in `env`: canonical name -> version, from its metadata."""
    paths = [os.fspath(path) for path in sorted(env.glob("lib/python*/site-packages"))]
    return {
        canonical_name(distribution.metadata["Name"] or ""): distribution.version
        for distribution in importlib.metadata.distributions(path=paths)
    }


def canonical_name(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return _SEPARATORS.sub("-", name).lower()
