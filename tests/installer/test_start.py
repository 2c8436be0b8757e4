"""The pieces of the spawn path that need no process: names, ownership, the deadline."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer import layout, start
from kinetis_mcp_docs.installer.envs.metadata import canonical_name
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.update import (
    DEFAULT_TIMEOUT_SECONDS,
    TIMEOUT_VARIABLE,
    update_timeout,
)


def _install(tmp_path: Path) -> Path:
    root = tmp_path / "install"
    (root / "envs" / "one").mkdir(parents=True)
    (root / layout.MARKER_NAME).write_text(layout.MARKER_CONTENT)
    return root


def test_an_environment_of_a_marked_install_directory_is_found(tmp_path: Path) -> None:
    root = _install(tmp_path)
    assert start.install_directory(str(root / "envs" / "one")) == str(root)


def test_an_environment_outside_envs_is_not_an_install(tmp_path: Path) -> None:
    root = _install(tmp_path)
    (root / "elsewhere" / "one").mkdir(parents=True)
    assert start.install_directory(str(root / "elsewhere" / "one")) is None


def test_an_install_without_its_marker_is_refused(tmp_path: Path) -> None:
    root = _install(tmp_path)
    (root / layout.MARKER_NAME).unlink()
    assert start.install_directory(str(root / "envs" / "one")) is None


@pytest.mark.parametrize(
    "content",
    ["", "kinetis-mcp-docs install directory", "something else\n", None],
    ids=["empty", "no-newline", "other", "extra-line"],
)
def test_a_marker_with_other_content_is_refused(tmp_path: Path, content: str | None) -> None:
    root = _install(tmp_path)
    marker = root / layout.MARKER_NAME
    marker.write_text(layout.MARKER_CONTENT + "more\n" if content is None else content)
    assert start.install_directory(str(root / "envs" / "one")) is None


def test_a_marker_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    root = _install(tmp_path)
    real = tmp_path / "real-marker"
    real.write_text(layout.MARKER_CONTENT)
    (root / layout.MARKER_NAME).unlink()
    (root / layout.MARKER_NAME).symlink_to(real)
    assert start.install_directory(str(root / "envs" / "one")) is None


def test_a_marker_that_is_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    root = _install(tmp_path)
    (root / layout.MARKER_NAME).unlink()
    os.mkfifo(root / layout.MARKER_NAME)
    found: list[str | None] = []
    # Opening a FIFO for reading blocks until a writer comes: the check must not.
    checking = threading.Thread(
        target=lambda: found.append(start.install_directory(str(root / "envs" / "one"))),
        daemon=True,
    )
    checking.start()
    checking.join(timeout=30)
    assert found == [None]


def test_a_marker_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    root = _install(tmp_path)
    (root / layout.MARKER_NAME).unlink()
    (root / layout.MARKER_NAME).mkdir()
    assert start.install_directory(str(root / "envs" / "one")) is None


def test_the_update_deadline_is_five_seconds_by_default() -> None:
    assert DEFAULT_TIMEOUT_SECONDS == 5
    assert update_timeout({}) == 5
    assert update_timeout({TIMEOUT_VARIABLE: ""}) == 5


def test_the_update_deadline_can_be_set_in_seconds() -> None:
    assert update_timeout({TIMEOUT_VARIABLE: "2.5"}) == 2.5
    assert update_timeout({TIMEOUT_VARIABLE: " 30 "}) == 30


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon", "5s"])
def test_an_update_deadline_that_is_not_a_positive_number_is_refused(value: str) -> None:
    with pytest.raises(InstallerError, match=TIMEOUT_VARIABLE):
        update_timeout({TIMEOUT_VARIABLE: value})


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("kinetis_mcp_docs", "kinetis-mcp-docs"),
        ("Typing_Extensions", "typing-extensions"),
        ("zope.interface", "zope-interface"),
        ("a__b-.c", "a-b-c"),
    ],
)
def test_distribution_names_compare_as_pep_503_says(name: str, canonical: str) -> None:
    assert canonical_name(name) == canonical
