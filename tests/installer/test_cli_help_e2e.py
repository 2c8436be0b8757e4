"""`kinetis-docs --help` and each command's: whole, naming the install directory and network;
and a refused command line, which is one line."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.support.machine import KINETIS_DOCS

COMMANDS = ["serve", "setup", "start", "status", "uninstall", "update"]


def _help(*command: str) -> str:
    completed = subprocess.run(
        [os.fspath(KINETIS_DOCS), *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        # An ordinary terminal's width, whatever runs the tests.
        env=os.environ | {"COLUMNS": "80"},
    )
    assert completed.stderr == ""
    return " ".join(completed.stdout.split())


def test_the_command_list_shows_every_commands_summary_whole() -> None:
    completed = subprocess.run(
        [os.fspath(KINETIS_DOCS), "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env=os.environ | {"COLUMNS": "80"},
    )
    listing = completed.stdout.split("Commands:\n", 1)[1].splitlines()

    assert [line.split()[0] for line in listing] == COMMANDS
    for line in listing:
        assert not line.endswith("..."), line
        assert line.endswith("."), line


@pytest.mark.parametrize("command", [[], ["setup"], ["status"], ["update"], ["uninstall"]])
def test_help_names_the_install_directory_and_its_variable(command: list[str]) -> None:
    text = _help(*command)

    assert "Install directory: KINETIS_MCP_DOCS_DIR, or ~/.kinetis-mcp-docs when unset." in text


@pytest.mark.parametrize(
    ("command", "needs"),
    [
        ([], ["package index", "raw.githubusercontent.com", "KINETIS_MCP_DOCS_PAGES"]),
        (["setup"], ["package index", "raw.githubusercontent.com", "KINETIS_MCP_DOCS_PAGES"]),
        (["status"], ["raw.githubusercontent.com", "pages directory", "package index"]),
        (["update"], ["package index"]),
        (["uninstall"], ["Network: none."]),
        (["serve"], ["Network: raw.githubusercontent.com", "unless --docs-dir"]),
        (["start"], ["Network: the package index", "raw.githubusercontent.com", "--docs-dir"]),
    ],
)
def test_help_says_what_needs_the_network(command: list[str], needs: list[str]) -> None:
    text = _help(*command)

    for need in needs:
        assert need in text, need


def test_help_says_an_install_from_a_clone_needs_no_index_once_built() -> None:
    # It once said installing needs PyPI, where the package is not published yet: untrue of
    # the only install there is, from a clone.
    text = _help()

    assert "PyPI once the package is published" in text
    assert "from a clone, the clone's own wheelhouse, which `nox -s setup_from_source` builds" in (
        text
    )
    assert "no network once built" in text
    assert "from a clone, its own wheelhouse" in _help("setup")
    assert "none for an install from a clone" in _help("update")


def test_setup_and_uninstall_help_name_both_clients() -> None:
    for command in ("setup", "uninstall"):
        text = _help(command)
        assert "Claude Code" in text
        assert f"`{command} codex`" in text


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["bogus"], "No such command 'bogus' (see `kinetis-docs --help`)"),
        (["--bogus"], "No such option '--bogus' (see `kinetis-docs --help`)"),
        (["status", "--bogus"], "No such option '--bogus' (see `kinetis-docs status --help`)"),
        (
            ["update", "now"],
            "Got unexpected extra argument (now) (see `kinetis-docs update --help`)",
        ),
        (["start", "--bogus"], "No such option '--bogus' (see `kinetis-docs start --help`)"),
        (
            ["uninstall", "claude"],
            (
                "`kinetis-docs uninstall claude`: uninstall takes no argument for Claude Code, "
                "or `codex` for Codex, and nothing else. Claude Code is the default: "
                "`kinetis-docs uninstall` (see `kinetis-docs uninstall --help`)"
            ),
        ),
    ],
)
def test_a_refused_command_line_is_one_line_and_status_2(arguments: list[str], said: str) -> None:
    # click's own answer is a usage block of four lines, which a script cannot read as one.
    completed = subprocess.run(
        [os.fspath(KINETIS_DOCS), *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=os.environ | {"COLUMNS": "80"},
    )

    assert completed.returncode == 2
    assert completed.stdout == ""
    assert completed.stderr.splitlines() == [f"kinetis-docs: {said}"]
