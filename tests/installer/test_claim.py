"""Claiming the install directory, and giving back a first install's on failure."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from kinetis_mcp_docs.installer.install_dir.claim import Claim, roll_back
from kinetis_mcp_docs.installer.install_dir.ownership import Found

WRITING_SECONDS = 0.3


def _keep_writing(tree: Path, started: threading.Event) -> None:
    """What a dying child may do for a moment: make directories under `tree` again."""
    (tree / "envs").mkdir(parents=True, exist_ok=True)
    started.set()
    ends = time.monotonic() + WRITING_SECONDS
    while time.monotonic() < ends:
        # A removal racing with the making of a parent: as a child's mkdir would, it fails.
        with contextlib.suppress(OSError):
            (tree / "envs" / "partial" / "lib").mkdir(parents=True, exist_ok=True)


def test_a_first_install_is_removed_even_while_a_dying_child_still_writes_into_it(
    tmp_path: Path,
) -> None:
    # A child stopped with its process group dies on its own time: a directory it made
    # after `rmtree` had emptied the one above left the install standing, and setup said
    # it was removed.
    install = tmp_path / "install"
    started = threading.Event()
    writer = threading.Thread(target=_keep_writing, args=(install, started))
    writer.start()
    assert started.wait(30)

    roll_back(Claim(install, Found.ABSENT, install))

    writer.join(30)
    assert not install.exists()
