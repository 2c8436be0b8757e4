"""Removing an install directory: only what setup wrote, never through a link."""

from __future__ import annotations

from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.removal import remove_install
from kinetis_mcp_docs.installer.layout import MARKER_CONTENT, InstallLayout

ENVIRONMENT = "20261130T120000-0123abcd"
OLDER = "20261129T120000-89abcdef"


@pytest.fixture
def layout(tmp_path: Path) -> InstallLayout:
    """An install as setup and two updates leave it, with what a killed write leaves too."""
    layout = InstallLayout(tmp_path / "install")
    for name in (ENVIRONMENT, OLDER):
        (layout.envs / name / "bin").mkdir(parents=True)
        (layout.envs / name / "bin" / "python").write_text("#!/bin/sh\n")
    layout.marker.write_text(MARKER_CONTENT)
    layout.lock.write_text("")
    layout.last_update_check.write_text("1.0\n")
    layout.requirements.write_text("kinetis-mcp-docs>=1.0,<2\n")
    layout.current.symlink_to(Path("envs", ENVIRONMENT))
    layout.previous.symlink_to(Path("envs", OLDER))
    (layout.root / "current.tmp-0badf00d").symlink_to(Path("envs", OLDER))
    (layout.root / ".last-update-check.tmp-00c0ffee").write_text("2.0\n")
    return layout


def test_an_install_as_setup_leaves_it_is_removed_whole(layout: InstallLayout) -> None:
    assert remove_install(layout) == []

    assert not layout.root.exists()


def test_an_envs_that_is_a_link_is_left_and_nothing_is_removed_through_it(
    layout: InstallLayout, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "virtualenvs"
    (elsewhere / ENVIRONMENT / "bin").mkdir(parents=True)
    (layout.envs / ENVIRONMENT / "bin" / "python").unlink()
    for directory in (layout.envs / ENVIRONMENT / "bin", layout.envs / ENVIRONMENT):
        directory.rmdir()
    (layout.envs / OLDER / "bin" / "python").unlink()
    (layout.envs / OLDER / "bin").rmdir()
    (layout.envs / OLDER).rmdir()
    layout.envs.rmdir()
    layout.envs.symlink_to(elsewhere)

    assert remove_install(layout) == ["envs"]

    assert (elsewhere / ENVIRONMENT / "bin").is_dir()
    assert layout.marker.read_text() == MARKER_CONTENT


def test_entries_of_another_type_or_name_stay_and_are_named(layout: InstallLayout) -> None:
    layout.previous.unlink()
    layout.previous.mkdir()
    (layout.previous / "mine.txt").write_text("mine\n")
    (layout.envs / "my-venv").mkdir()
    (layout.root / "notes.txt").write_text("mine\n")

    assert remove_install(layout) == ["envs", "notes.txt", "previous"]

    assert (layout.previous / "mine.txt").read_text() == "mine\n"
    assert [path.name for path in layout.envs.iterdir()] == ["my-venv"]
    assert not layout.current.exists()
    assert layout.marker.is_file()
    assert layout.lock.is_file()


def test_an_install_directory_reached_through_a_link_goes_with_the_link(
    layout: InstallLayout, tmp_path: Path
) -> None:
    link = tmp_path / "linked"
    link.symlink_to(layout.root)

    assert remove_install(InstallLayout(link)) == []

    assert not layout.root.exists()
    assert not link.is_symlink()
