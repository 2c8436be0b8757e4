"""The commands messages name: each one a user can run as written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.advice import (
    in_checkout,
    install_here,
    kinetis_docs,
    with_new_python,
)
from kinetis_mcp_docs.installer.layout import InstallLayout

# The README's install command: nox in the clone's own environment, run through its
# interpreter, which works in a clone that moved (the scripts beside it name the old path).
CLONE = "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' &&"
SESSION = ".venv/bin/python -m nox -s setup_from_source"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", os.fspath(tmp_path))
    return tmp_path


def test_an_installs_own_command_is_named_with_its_directory_unless_it_is_the_default(
    home: Path,
) -> None:
    for root in (home / ".kinetis-mcp-docs", home / "other install"):
        command = InstallLayout(root).command
        command.parent.mkdir(parents=True)
        command.write_text("#!/bin/sh\n")
        command.chmod(0o755)
        command.with_name("python").symlink_to("/bin/sh")

    assert kinetis_docs(home / ".kinetis-mcp-docs", "status") == (
        f"{home}/.kinetis-mcp-docs/current/bin/kinetis-docs status"
    )
    assert kinetis_docs(home / "other install", "update") == (
        f"KINETIS_MCP_DOCS_DIR='{home}/other install' '{home}/other install/current/bin/"
        "kinetis-docs' update"
    )


def test_with_no_command_of_its_own_a_setup_is_the_readmes_from_a_clone(home: Path) -> None:
    root = home / "elsewhere"

    assert kinetis_docs(root, "setup") == f"{CLONE} KINETIS_MCP_DOCS_DIR={root} {SESSION}"
    assert kinetis_docs(root, "setup", "codex") == install_here(root, "codex")
    assert install_here(home / ".kinetis-mcp-docs", "codex") == f"{CLONE} {SESSION} -- codex"


@pytest.mark.parametrize("home_value", ["relative/home", "/home/with\nnewline"])
def test_with_a_home_that_names_no_default_directory_every_command_names_its_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home_value: str
) -> None:
    # Such a HOME is refused where it would name the install directory; a message about
    # another directory names that one, rather than failing on HOME.
    monkeypatch.setenv("HOME", home_value)
    root = tmp_path / "install"

    assert kinetis_docs(root, "status") == f"KINETIS_MCP_DOCS_DIR={root} kinetis-docs status"
    assert install_here(root) == f"{CLONE} KINETIS_MCP_DOCS_DIR={root} {SESSION}"


def test_an_install_whose_python_is_gone_is_set_up_again_from_a_clone_with_a_new_venv(
    home: Path,
) -> None:
    root = home / "stranded"
    command = InstallLayout(root).command
    command.parent.mkdir(parents=True)
    command.write_text(f"#!{command.with_name('python')}\n")
    command.chmod(0o755)
    command.with_name("python").symlink_to(home / "removed" / "python3.9")
    checkout = home / "my checkout"

    assert kinetis_docs(root, "setup") == install_here(root)
    assert with_new_python(root, "codex") == (
        f"rm -rf .venv && {CLONE} KINETIS_MCP_DOCS_DIR={root} {SESSION} -- codex"
    )
    (checkout / "noxfile.py").parent.mkdir()
    (checkout / "noxfile.py").write_text("")
    assert with_new_python(home / ".kinetis-mcp-docs", checkout=checkout) == (
        f"cd '{checkout}' && rm -rf .venv && {CLONE} {SESSION}"
    )


def test_a_source_install_takes_its_checkouts_changes_in_the_checkout_naming_its_directory(
    home: Path,
) -> None:
    checkout = home / "my projects" / "kinetis-mcp-docs"
    checkout.mkdir(parents=True)
    (checkout / "noxfile.py").write_text("")
    root = home / "install"

    assert in_checkout(checkout, home / ".kinetis-mcp-docs", pull=True) == (
        f"`cd '{checkout}' && git pull && {CLONE} {SESSION}`"
    )
    # Once `cd CHECKOUT && .venv/bin/nox -s setup_from_source`, which installed into the
    # default directory rather than the one the message was about.
    assert in_checkout(checkout, root, "codex", "--live") == (
        f"`cd '{checkout}' && {CLONE} KINETIS_MCP_DOCS_DIR={root} {SESSION} -- codex --live`"
    )
    assert in_checkout(checkout, root, settings=["KINETIS_MCP_DOCS_PAGES=/srv/pages"]) == (
        f"`cd '{checkout}' && {CLONE} KINETIS_MCP_DOCS_DIR={root} "
        f"KINETIS_MCP_DOCS_PAGES=/srv/pages {SESSION}`"
    )


def test_a_checkout_that_moved_is_named_by_what_to_run_in_its_new_place_never_by_cd(
    home: Path,
) -> None:
    gone = home / "moved away"

    assert in_checkout(gone, home / ".kinetis-mcp-docs", "codex") == (
        f"`{CLONE} {SESSION} -- codex`, run in the clone's new place ({gone}, where it was "
        "installed from, is gone), or in a fresh clone of kinetis-mcp-docs"
    )
