"""A session fixture's directory, made once per test run rather than once per test process.

pytest-xdist runs a session-scoped fixture once in every test process. A directory that
depends only on this checkout (its wheels, say) is made by the first process that asks,
under a lock, and read by the others. Each process's base temporary directory is
`pytest-N/popen-gwK`, so their parent belongs to this run alone; without xdist the
directory is made as it always was.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock


def made_once_per_run(base: Path, name: str, make: Callable[[], Path]) -> Path:
    """The directory `make()` makes, made by one test process of this run for all of them.

    `base` is this process's base temporary directory (`tmp_path_factory.getbasetemp()`).
    `make` makes the directory anywhere on its file system; it is moved, whole, to where
    the others find it, so none ever sees it half made.
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make()
    shared = base.parent / name
    with FileLock(f"{shared}.lock"):
        if not shared.is_dir():
            make().replace(shared)
    return shared
