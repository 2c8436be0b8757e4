"""Installs built once from the test session's wheelhouse and reset before each test: the
layout's own links (`current` back to the original environment, everything else removed),
so that an update, which never modifies the environment it replaces, can be tried again
and again on the same install."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.build import build_environment
from kinetis_mcp_docs.installer.envs.links import prune, switch_to
from kinetis_mcp_docs.installer.install_dir.scratch import discard_scratch
from kinetis_mcp_docs.installer.install_dir.throttle import record_check
from kinetis_mcp_docs.installer.layout import MARKER_CONTENT, REQUIREMENT, InstallLayout
from tests.support.processes import kill_processes_mentioning
from tests.support.wheelhouse import wheelhouse_pip_env

WAIT = 60.0  # the bound on every wait for another process


@dataclass
class Install:
    """One install directory and the environment it was built with."""

    layout: InstallLayout
    original: Path
    version: str

    def reset(self) -> None:
        """Back to exactly as built: `current` on the original, nothing else, no timestamp."""
        kill_processes_mentioning(os.fspath(self.layout.root), WAIT)
        assert (self.original / "bin" / "python").exists(), "an update modified the original"
        switch_to(self.layout, self.original)
        self.layout.previous.unlink(missing_ok=True)
        prune(self.layout)
        discard_scratch(self.layout)
        state = (self.layout.last_update_failure, self.layout.package_source)
        for planted in (self.layout.last_update_check, self.layout.lock, *state):
            if planted.is_dir() and not planted.is_symlink():
                planted.rmdir()
            planted.unlink(missing_ok=True)
        self.layout.marker.write_text(MARKER_CONTENT)
        assert sorted(entry.name for entry in self.layout.envs.iterdir()) == [self.original.name]

    def set_last_check(self, seconds_ago: float | None) -> None:
        if seconds_ago is None:
            self.layout.last_update_check.unlink(missing_ok=True)
        else:
            record_check(self.layout.last_update_check, time.time() - seconds_ago)

    def envs(self) -> list[str]:
        return sorted(entry.name for entry in self.layout.envs.iterdir())


def build_install(root: Path, version: str, wheelhouse: Path) -> Install:
    layout = InstallLayout(root)
    root.mkdir()
    layout.marker.write_text(MARKER_CONTENT)
    layout.requirements.write_text(REQUIREMENT + "\n")
    # The build runs pip from this process, which reads pip's configuration from os.environ.
    with pytest.MonkeyPatch.context() as patch:
        for key in [key for key in os.environ if key.startswith("PIP_")]:
            patch.delenv(key)
        for key, value in wheelhouse_pip_env(wheelhouse).items():
            patch.setenv(key, value)
        env = build_environment(
            layout, ["--quiet", f"kinetis-mcp-docs=={version}"], deadline=time.monotonic() + 300
        )
        switch_to(layout, env)
    return Install(layout, env, version)
