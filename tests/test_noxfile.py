"""The tests session's temporary directory: in memory when a tmpfs can hold it, never kept.

The suite's speed on a disk depends on where its temporary files go (see the noxfile);
these tests hold the choice to what a developer's machine can take: only a tmpfs that
allows executing and has room, and a directory made there is gone when the session ends,
whatever modes the tests left in it. They mount real tmpfs file systems, so they need root
(CI has it) and skip elsewhere, saying why.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import noxfile
import pytest


def _mount(target: Path, options: str) -> None:
    target.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", os.fspath(target)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})")


@pytest.fixture
def mounts(tmp_path: Path) -> Iterator[Path]:
    """A directory for tmpfs mounts, each unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    yield tmp_path
    for entry in tmp_path.iterdir():
        subprocess.run(["umount", os.fspath(entry)], capture_output=True, check=False)


ROOM = f"size={(noxfile.MEMORY_TMP_NEEDED >> 20) + 64}m"


@pytest.fixture
def memory(mounts: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A tmpfs the session would use, and no directory asked for instead."""
    monkeypatch.delenv("KINETIS_TEST_TMPDIR", raising=False)
    _mount(mounts / "memory", f"{ROOM},mode=1777")
    return mounts / "memory"


def test_a_tmpfs_with_room_that_allows_executing_is_used(memory: Path) -> None:
    assert noxfile._memory_tmp_usable(memory)


@pytest.mark.parametrize(
    ("options", "why"),
    [
        (f"{ROOM},noexec", "the tests run environments they make there"),
        ("size=64m", "less room than a run takes"),
    ],
)
def test_a_tmpfs_the_tests_cannot_use_is_not(mounts: Path, options: str, why: str) -> None:
    _mount(mounts / "memory", options)

    assert not noxfile._memory_tmp_usable(mounts / "memory"), why


def test_a_directory_that_is_not_a_tmpfs_mount_is_not_used(tmp_path: Path) -> None:
    assert not noxfile._memory_tmp_usable(tmp_path)
    assert not noxfile._memory_tmp_usable(tmp_path / "missing")


def test_the_directory_made_in_memory_is_removed_whatever_the_tests_left_in_it(
    memory: Path,
) -> None:
    with noxfile._test_tmpdir(memory) as made:
        assert made is not None
        assert made.parent == memory
        locked = made / "pytest-of-someone" / "locked"
        locked.mkdir(parents=True)
        (locked / "file").write_bytes(b"x" * 4096)
        locked.chmod(0o500)

    assert list(memory.iterdir()) == []


def test_a_directory_asked_for_is_used_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = tmp_path / "keep" / "here"
    monkeypatch.setenv("KINETIS_TEST_TMPDIR", os.fspath(asked))

    with noxfile._test_tmpdir() as made:
        assert made == asked.resolve()
        (asked / "left").write_text("for a look afterwards")

    assert (asked / "left").is_file()


def test_without_a_usable_tmpfs_the_tests_keep_the_systems_temporary_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KINETIS_TEST_TMPDIR", raising=False)

    with noxfile._test_tmpdir(tmp_path) as made:
        assert made is None
    assert list(tmp_path.iterdir()) == []


def test_the_directory_of_a_session_killed_outright_is_removed_by_the_next_one(
    memory: Path,
) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    killed = memory / f"{noxfile.MEMORY_TMP_PREFIX}{gone.pid}-abcd1234"
    running = memory / f"{noxfile.MEMORY_TMP_PREFIX}{os.getpid()}-abcd1234"
    for left in (killed, running):
        (left / "pytest-of-someone").mkdir(parents=True)

    with noxfile._test_tmpdir(memory) as made:
        assert made is not None
        assert not killed.exists()
        assert running.is_dir()  # its session still runs

    assert list(memory.iterdir()) == [running]


def test_the_lowest_session_pins_each_floor_that_applies_on_its_python(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        "[project]\n"
        'dependencies = ["httpx>=0.27,<1", "pip>=23.1", "anything"]\n'
        "[project.optional-dependencies]\n"
        "http = [\n"
        "  \"tantivy>=0.26.2,<0.27; python_version < '3.11'\",\n"
        "  \"tantivy>=0.27,<1; python_version >= '3.11'\",\n"
        '  "uvicorn>=0.36,<0.56",\n'
        "]\n"
        'test = ["pytest>=8"]\n',
        encoding="utf-8",
    )
    assert noxfile.floors("3.10", pyproject) == [
        "httpx==0.27",
        "pip==23.1",
        "tantivy==0.26.2",
        "uvicorn==0.36",
    ]
    assert "tantivy==0.27" in noxfile.floors("3.12", pyproject)
