"""What the benchmarks run against: the docs origin, a local wheelhouse, a stub client, installs.

Everything lives in one scratch directory removed at the end, except the dependency
wheels, which are cached under `.bench/cache` so a second run needs no index.

- The origin is the test suite's: a real HTTPS server for `raw.githubusercontent.com`
  (certificate from `trustme`) behind a CONNECT proxy, reached through `HTTPS_PROXY` and
  trusted through `SSL_CERT_FILE` (`tests/support/origin.py`).
- The wheelhouse holds this checkout's wheel at its own version and the wheels of its
  dependencies, so an install resolves exactly what a user would get, offline, and an
  update finds nothing newer (`tests/support/wheelhouse.py`).
- pip sees the wheelhouse and nothing else: no config file, no index, no constraint file
  of the machine running the benchmark.
- `claude` on PATH is the test suite's recording stub (`tests/support/clients.py`): it
  answers `mcp remove/add/get` as Claude Code does; `get` spawns the registered command
  and sends `initialize`, as the real CLI does.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import trustme
from tests.support.clients import install_stub
from tests.support.origin import ORIGIN_HOSTS, DocsOrigin, running_docs_origin
from tests.support.wheelhouse import (
    build_project_wheel,
    download_dependencies,
    isolated_environ,
    runtime_requirements,
)

from benchmarks.wire import run_to_exit
from kinetis_mcp_docs import __version__

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SETUP_TIMEOUT = 300.0
REQUIREMENT = "kinetis-mcp-docs>=1.0,<2"  # what setup installs


class Stage:
    """The scratch directory, the origin, the wheelhouse and the stub client of one run."""

    def __init__(self, scratch: Path, origin: DocsOrigin, wheelhouse: Path) -> None:
        self.scratch = scratch
        self.origin = origin
        self.wheelhouse = wheelhouse
        self.bin = scratch / "bin"
        self._installs = 0
        install_stub("claude", self.bin, scratch / "claude-state")

    def environ(self, **extra: str) -> dict[str, str]:
        """A process environment: pip sees only the wheelhouse, HTTPS reaches the origin."""
        env = self.origin.environ(isolated_environ(self.wheelhouse))
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', os.defpath)}"
        env.update(extra)
        return env

    def fresh_home(self) -> tuple[Path, Path]:
        """A new, empty install directory and HOME (the stub CLI keeps its state apart)."""
        self._installs += 1
        base = self.scratch / f"install-{self._installs}"
        home = base / "home"
        home.mkdir(parents=True)
        shutil.rmtree(self.scratch / "claude-state", ignore_errors=True)
        install_stub("claude", self.bin, self.scratch / "claude-state")
        return base / "kinetis-mcp-docs", home

    def setup_argv(self) -> list[str]:
        """`kinetis-docs setup`, the console script of the environment running the benchmark."""
        return [os.fspath(Path(sys.executable).with_name("kinetis-docs")), "setup"]

    def run_setup(self) -> tuple[float, Path]:
        """Run `kinetis-docs setup` into a fresh directory; its wall time and the directory."""
        directory, home = self.fresh_home()
        env = self.environ(HOME=os.fspath(home), KINETIS_MCP_DOCS_DIR=os.fspath(directory))
        return run_to_exit(self.setup_argv(), env, SETUP_TIMEOUT), directory

    def add_release(self, version: str) -> Path:
        """Put this checkout's wheel at `version` into the wheelhouse; returns the wheel."""
        return build_project_wheel(version, self.wheelhouse, work=self.scratch / f"wheel-{version}")

    def plain_install(self) -> float:
        """The yardstick for setup: `python -m venv` with pip, then `pip install` the package.

        From the same wheelhouse, with nothing checked or registered.
        """
        target = self.scratch / f"plain-{time.monotonic_ns()}"
        env = self.environ()
        python = target / "bin" / "python"
        create = [sys.executable, "-m", "venv", os.fspath(target)]
        install = [os.fspath(python), "-m", "pip", "install", "--quiet", REQUIREMENT]
        elapsed = run_to_exit(create, env, SETUP_TIMEOUT) + run_to_exit(install, env, SETUP_TIMEOUT)
        shutil.rmtree(target, ignore_errors=True)
        return elapsed


def build_wheelhouse(directory: Path, cache: Path) -> Path:
    """This checkout's wheel at its own version, plus every runtime dependency's wheel."""
    directory.mkdir(parents=True)
    wheel = build_project_wheel(__version__, directory, work=directory.parent / "wheel-build")
    cache.mkdir(parents=True, exist_ok=True)
    for dependency in download_dependencies(runtime_requirements(wheel), cache):
        shutil.copy2(dependency, directory / dependency.name)
    return directory


@contextmanager
def staged(scratch: Path, cache: Path) -> Iterator[Stage]:
    """A running origin (serving this repository's docs) and a wheelhouse, under `scratch`."""
    ca = trustme.CA()
    cert = ca.issue_cert(*ORIGIN_HOSTS)
    wheelhouse = build_wheelhouse(scratch / "wheelhouse", cache)
    with running_docs_origin(ca, cert, scratch / "origin") as origin:
        origin.serve_docs()
        yield Stage(scratch, origin, wheelhouse)


def server_environ(origin: DocsOrigin, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a server under measurement: the origin's proxy and CA, no more."""
    return origin.environ(base)
