"""One environment of an install directory, with the layout it lives in.

Whatever needs both an install's paths and one of its environments — its interpreter, what
is installed in it, the interpreter a byte-compile or a resolution runs — takes one
`Environment` rather than a layout and a path side by side.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..layout import InstallLayout
from .links import current_environment
from .metadata import environment_version, installed_distributions


@dataclass(frozen=True)
class Environment:
    """The environment at `path`, `layout.envs / <name>` (or one standing in for it)."""

    layout: InstallLayout
    path: Path

    @classmethod
    def current(cls, layout: InstallLayout) -> Environment | None:
        """The environment `current` points at, or None when there is none (yet)."""
        path = current_environment(layout)
        return None if path is None else cls(layout, path)

    @property
    def python(self) -> Path:
        """Its interpreter."""
        return self.layout.python(self.path)

    def version(self) -> str | None:
        """The kinetis-mcp-docs version installed in it, from its metadata."""
        return environment_version(self.path)

    def distributions(self) -> dict[str, str]:
        """Every distribution installed in it: canonical name -> version."""
        return installed_distributions(self.path)
