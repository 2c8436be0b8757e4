"""Fixtures shared by the installer tests: one wheelhouse per session, a user's machine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.installer.machine import Machine, machine_at
from tests.support.origin import DocsOrigin
from tests.support.wheelhouse import make_wheelhouse, wheelhouse_pip_env

# The releases the installer and updater tests resolve between: setup picks the newest
# within >=1.0,<2 (1.0.1); an update from 1.0.0 takes 1.0.1; 2.0.0 must never be taken.
WHEELHOUSE_VERSIONS = ["1.0.0", "1.0.1", "2.0.0"]


@pytest.fixture(scope="session")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    """This checkout's wheel at 1.0.0, 1.0.1 and 2.0.0, plus every dependency wheel."""
    # No cache provider (`-p no:cacheprovider`) means downloading once per session.
    cache_provider = getattr(pytestconfig, "cache", None)
    cache = cache_provider.mkdir("kinetis-dependency-wheels") if cache_provider else None
    return make_wheelhouse(tmp_path_factory, WHEELHOUSE_VERSIONS, cache_dir=cache)


@pytest.fixture(scope="session")
def wheelhouse_env(wheelhouse: Path) -> dict[str, str]:
    """The PIP_* variables that make pip install from the wheelhouse alone.

    Apply over `tests.support.wheelhouse.without_pip_configuration(os.environ)` (or use
    `isolated_environ(wheelhouse)`), so the machine's own PIP_* settings are dropped.
    """
    return wheelhouse_pip_env(wheelhouse)


@pytest.fixture
def machine(
    tmp_path: Path,
    wheelhouse_env: dict[str, str],
    docs_origin: DocsOrigin,
    origin_env: dict[str, str],
) -> Machine:
    """A user's machine whose server reaches the local origin serving this repo's docs/."""
    docs_origin.serve_docs()
    return machine_at(tmp_path, wheelhouse_env, origin_env)
