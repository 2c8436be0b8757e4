"""Where everything lives inside an install directory.

One layout serves `setup` and the spawn-time updater, so that both agree on every path:

    DIR/.kinetis-mcp-docs     marker: proves the directory is ours
    DIR/.update.lock          the exclusive update lock (filelock; released by the kernel)
    DIR/.last-update-check    seconds since the epoch of the last successful install or update
    DIR/.last-update-failure  the time and reason of a client start's failed update, since then
    DIR/requirements.txt      the requirement every install and update resolves
    DIR/package-source.json   where pip looks for it: the index or wheelhouse setup used
    DIR/envs/<name>/          complete virtual environments, never modified once built
    DIR/current -> envs/<name>   the environment that serves; replaced by one rename
    DIR/previous -> envs/<name>  the one before it, kept for a rollback
    DIR/.scratch/             pip's temporary files; emptied under the lock before each build
    DIR/pages/                a copy of the pages it serves, when setup was told to hold one
    DIR/pages-source.json     the directory that copy is refreshed from
    DIR/wheelhouse/           a source install's copy of its checkout's wheelhouse

The registered command runs `DIR/current/bin/python`, so switching `current` is the
whole update and a spawn never sees a half-built environment. Directories are made
`DIRECTORY_MODE` and files `files.FILE_MODE`, less what the umask takes: never writable by
other users, whatever the umask.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .names import (
    COMMAND_NAME,
    CURRENT_NAME,
    DIR_ENVIRONMENT_VARIABLE,
    DOCS_DIR_OPTION,
    ENVS_NAME,
    LAST_CHECK_NAME,
    LAST_FAILURE_NAME,
    LOCK_NAME,
    MARKER_CONTENT,
    MARKER_NAME,
    PAGES_NAME,
    PAGES_SOURCE_NAME,
    PREVIOUS_NAME,
    REQUIREMENT,
    REQUIREMENTS_NAME,
    SCRATCH_NAME,
    SERVER_MODULE,
    SOURCE_NAME,
    START_ARGUMENTS,
    START_MODULE,
    WHEELHOUSE_NAME,
)

__all__ = [
    "DIRECTORY_MODE",
    "DIR_ENVIRONMENT_VARIABLE",
    "MARKER_CONTENT",
    "MARKER_NAME",
    "REQUIREMENT",
    "SERVER_MODULE",
    "START_MODULE",
    "InstallLayout",
]

DIRECTORY_MODE = 0o755


@dataclass(frozen=True)
class InstallLayout:
    """The paths of one install directory."""

    root: Path

    @property
    def marker(self) -> Path:
        return self.root / MARKER_NAME

    @property
    def lock(self) -> Path:
        return self.root / LOCK_NAME

    @property
    def last_update_check(self) -> Path:
        return self.root / LAST_CHECK_NAME

    @property
    def last_update_failure(self) -> Path:
        return self.root / LAST_FAILURE_NAME

    @property
    def requirements(self) -> Path:
        return self.root / REQUIREMENTS_NAME

    @property
    def package_source(self) -> Path:
        return self.root / SOURCE_NAME

    @property
    def envs(self) -> Path:
        return self.root / ENVS_NAME

    @property
    def current(self) -> Path:
        return self.root / CURRENT_NAME

    @property
    def previous(self) -> Path:
        return self.root / PREVIOUS_NAME

    @property
    def scratch(self) -> Path:
        return self.root / SCRATCH_NAME

    @property
    def pages(self) -> Path:
        """The copy of the pages the install holds, served by every registration of it
        that names no pages directory of its own."""
        return self.root / PAGES_NAME

    @property
    def pages_source(self) -> Path:
        return self.root / PAGES_SOURCE_NAME

    @property
    def wheelhouse(self) -> Path:
        """A source install's copy of its checkout's wheelhouse, where its updates look."""
        return self.root / WHEELHOUSE_NAME

    @property
    def command(self) -> Path:
        """`kinetis-docs` of the environment that serves: how a user runs the lifecycle
        commands of this install (no install puts it on PATH)."""
        return self.current / "bin" / COMMAND_NAME

    def python(self, environment: Path) -> Path:
        """The interpreter of one environment (a POSIX virtual environment)."""
        return environment / "bin" / "python"

    def start_argv(self, pages: Path | None = None) -> list[str]:
        """The exact command registered with a client: absolute, no shell, no PATH lookup.

        `-I` keeps a user's PYTHONPATH, PYTHONHOME and user site-packages out of the
        owned environment. With `pages` (absolute), the server reads its pages from that
        directory (`--docs-dir`, last, which `start` hands on across an update's exec).
        """
        argv = [os.fspath(self.python(self.current)), *START_ARGUMENTS]
        return argv if pages is None else [*argv, DOCS_DIR_OPTION, os.fspath(pages)]
