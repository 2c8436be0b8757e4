"""What status counts as a problem, decided from what it found: no client CLI, no install
and no process here, only the findings a test writes down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.clients.known import CLAUDE, CODEX
from kinetis_mcp_docs.installer.clients.registration import Registration
from kinetis_mcp_docs.installer.commands.status_problems import (
    OVERDUE_SECONDS,
    ClientFindings,
    Context,
    DirectoryFindings,
    FailedRead,
    problems,
)
from kinetis_mcp_docs.installer.commands.status_report import ClientStatus, Problem
from kinetis_mcp_docs.installer.install_dir.ownership import Found, Refusal
from kinetis_mcp_docs.installer.install_dir.pages import Pages

NOW = 1_750_000_000.0


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", os.fspath(tmp_path / "home"))
    return tmp_path / "install"


def _unasked() -> list[ClientFindings]:
    """Both clients, neither CLI on PATH."""
    return [
        ClientFindings(CLAUDE, ClientStatus(CLAUDE.label, None)),
        ClientFindings(CODEX, ClientStatus(CODEX.label, None)),
    ]


def _running(
    root: Path,
    *,
    status: str = "✔ Connected",
    disabled: bool = False,
    pages: Pages | None = None,
    read: FailedRead | None = None,
) -> ClientFindings:
    """Claude Code, registered to run the install in `root`, reporting `status`."""
    registration = Registration(
        os.fspath(root / "current" / "bin" / "python"),
        ["-I", "-m", "kinetis_mcp_docs.installer.start"],
        status=status,
        scope="User config (available in all your projects)",
    )
    report = ClientStatus(
        CLAUDE.label,
        "claude",
        registered=True,
        runs_this_install=True,
        reported_status=status,
        disabled=disabled,
    )
    return ClientFindings(CLAUDE, report, registration, pages or Pages(), read)


def _ours(
    *,
    unsafe: tuple[str, str] | None = None,
    unwritable: str | None = None,
    unreadable_source: str | None = None,
    checkout: Path | None = None,
    last: float | None = None,
    failure: tuple[float, str] | None = None,
) -> DirectoryFindings:
    """An install of this tool, with `current` pointing at an environment."""
    return DirectoryFindings(
        Found.OURS,
        [],
        unsafe=unsafe,
        unwritable=unwritable,
        unreadable_source=unreadable_source,
        checkout=checkout,
        current=Path("env"),
        last=last,
        now=NOW,
        failure=failure,
    )


def test_nothing_installed_and_no_client_asked_is_one_problem_naming_the_readmes_install(
    root: Path,
) -> None:
    found = problems(Context(root, Found.ABSENT), _unasked(), DirectoryFindings(Found.ABSENT, []))

    (problem,) = found
    assert problem.problem == f"Nothing is installed in {root}"
    assert problem.fix.startswith("install it from a clone of kinetis-mcp-docs, `")


def test_nothing_installed_is_no_problem_for_a_user_of_the_http_route_alone(root: Path) -> None:
    over_http = ["Claude Code's kinetis-docs is an http server at https://docs.example/mcp"]

    found = problems(
        Context(root, Found.EMPTY), _unasked(), DirectoryFindings(Found.EMPTY, over_http)
    )

    assert found == []


def test_a_directory_that_is_not_ours_is_mended_by_its_refusals_own_fix(root: Path) -> None:
    refusal = Refusal("it holds files this installer did not write", fix="choose another")

    found = problems(Context(root, refusal), _unasked(), DirectoryFindings(refusal, []))

    assert found == [
        Problem(
            f"{root} is not an install of this tool: it holds files this installer did not write",
            "choose another",
        )
    ]


def test_a_client_whose_cli_cannot_say_is_a_problem_before_any_of_the_directory(
    root: Path,
) -> None:
    failing = ClientFindings(
        CLAUDE, ClientStatus(CLAUDE.label, "claude", error="claude mcp get failed.")
    )
    clients = [failing, ClientFindings(CODEX, ClientStatus(CODEX.label, None))]

    found = problems(Context(root, Found.OURS), clients, _ours())

    assert found[0] == Problem(
        "claude mcp get failed.",
        "check that `claude mcp get kinetis-docs` works in this shell",
    )
    assert found[1].problem.startswith(
        f"No client whose CLI is on PATH is registered to run {root}"
    )


def test_a_registration_turned_off_and_a_server_reported_failing_are_each_a_problem(
    root: Path,
) -> None:
    failing = _running(root, status="✘ Failed to connect", disabled=True)

    found = problems(Context(root, Found.OURS), [failing], _ours())

    assert [problem.problem for problem in found] == [
        (
            "Claude Code has kinetis-docs disabled (`enabled = false` in its entry), so no "
            "session starts it"
        ),
        "Claude Code reports kinetis-docs as '✘ Failed to connect', not Connected",
    ]
    assert found[1].fix.startswith("`claude mcp get kinetis-docs` says why; ")


def test_a_page_read_that_failed_with_the_pages_gone_from_a_source_install_names_them(
    root: Path, tmp_path: Path
) -> None:
    checkout = tmp_path / "clone"
    gone = checkout / "docs"
    read = FailedRead(
        "resources/read failed",
        gone,
        read_failed=True,
        pages_unreadable=True,
        pages_gone=True,
        hint=f"The pages directory {gone} is gone",
    )
    failing = _running(root, pages=Pages(gone), read=read)

    found = problems(Context(root, Found.OURS, checkout), [failing], _ours(checkout=checkout))

    assert found[0].problem == (
        "Claude Code cannot read pages through its kinetis-docs: resources/read failed"
    )
    assert found[0].fix.startswith(f"The pages directory {gone} is gone: run `")


def test_a_page_read_that_failed_otherwise_is_mended_by_installing_again(root: Path) -> None:
    read = FailedRead(
        "initialize got no response",
        None,
        read_failed=False,
        pages_unreadable=False,
        pages_gone=False,
        hint="Check that this machine reaches raw.githubusercontent.com",
    )
    failing = _running(root, read=read)

    (problem,) = problems(Context(root, Found.OURS), [failing], _ours())

    assert problem.fix.endswith(" reinstalls and registers it again")


def test_an_update_failing_more_than_a_day_past_due_is_stuck_and_one_failing_since_less_is_not(
    root: Path,
) -> None:
    failure = (NOW - 60, "pip exited with status 1")
    clients = [_running(root)]

    stuck = problems(
        Context(root, Found.OURS),
        clients,
        _ours(last=NOW - OVERDUE_SECONDS - 1, failure=failure),
    )
    passing = problems(
        Context(root, Found.OURS), clients, _ours(last=NOW - OVERDUE_SECONDS, failure=failure)
    )

    (problem,) = stuck
    assert problem.problem.startswith("The daily update has not succeeded since ")
    assert problem.problem.endswith("failed: pip exited with status 1")
    assert passing == []


def test_the_directorys_problems_come_in_the_order_the_report_lists_them(root: Path) -> None:
    directory = _ours(
        unsafe=("unsafe", "fix it"), unwritable="unwritable", unreadable_source="no source"
    )

    found = problems(Context(root, Found.OURS), [_running(root)], directory)

    assert [problem.problem for problem in found] == [
        "unsafe",
        "unwritable, so no update can happen: neither a client start's, nor `update`, nor setup",
        "no source",
    ]
