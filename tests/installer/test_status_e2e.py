"""`kinetis-docs status [--json]` end to end, after real installs, against stub client CLIs."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.installer.machine import START, Machine, closed_port, machine_at


def _status_json(machine: Machine, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = machine.run("status", "--json", env=env)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


def test_status_of_a_working_install_reports_it_whole_and_exits_0(machine: Machine) -> None:
    assert machine.setup().returncode == 0

    result = machine.run("status")

    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    current = machine.install / "envs" / machine.current()
    assert lines[:3] == [
        f"Install directory: {machine.install} (from KINETIS_MCP_DOCS_DIR)",
        "  State: installed: its .kinetis-mcp-docs marker proves it an install of this tool",
        f"  Current: kinetis-mcp-docs 1.0.1 in {current}",
    ]
    assert lines[3] == "  Previous: none"
    assert lines[4].startswith("  Last update check: ")
    assert lines[5].startswith("  Next update check: at the first client start after ")
    assert lines[6:] == [
        "Claude Code: kinetis-docs runs this install, with pages from the Kinetis repository",
        f"  Command: {' '.join(machine.registered_argv())}",
        "  Claude Code reports: ✓ Connected",
        "  Page read: ok: kinetis-mcp-docs 1.0.1 served kinetis://docs/index",
        "Codex: no kinetis-docs registration",
        "No problems: every client registered to this install reads its pages.",
    ]


def test_status_json_carries_the_same_report_with_times_a_day_apart(machine: Machine) -> None:
    assert machine.setup("codex").returncode == 0

    code, report = _status_json(machine)

    assert code == 0
    assert report["ok"] is True
    assert report["problems"] == []
    install = report["install"]
    assert install["path"] == os.fspath(machine.install)
    assert install["state"] == "installed"
    assert install["current"]["version"] == "1.0.1"
    assert install["previous"] is None
    last = datetime.fromisoformat(install["last_update_check"])
    due = datetime.fromisoformat(install["next_update_check"])
    assert (due - last).total_seconds() == 86_400
    claude, codex = report["clients"]
    assert claude["client"] == "Claude Code"
    assert claude["registered"] is False
    assert codex["registered"] is True
    assert codex["runs_this_install"] is True
    assert codex["command"] == machine.registered_argv()
    assert "HTTPS_PROXY" in codex["recorded_variables"]
    assert codex["reported_status"] is None
    assert codex["page_read"]["ok"] is True


def test_connected_is_not_taken_for_pages_readable_a_failed_read_exits_1_with_the_fix(
    machine: Machine,
) -> None:
    assert machine.setup().returncode == 0
    # Claude Code, started from this shell, reaches no origin now; `initialize` still works.
    unreachable = machine.env | {"HTTPS_PROXY": f"http://127.0.0.1:{closed_port()}"}

    code, report = _status_json(machine, unreachable)

    assert code == 1
    claude = report["clients"][0]
    assert claude["reported_status"] == "✓ Connected"
    assert claude["page_read"]["ok"] is False
    kept = Path(claude["page_read"]["stderr_file"])
    assert "Connection refused" in kept.read_text()
    (problem,) = report["problems"]
    assert problem["problem"] == (
        "Claude Code cannot read pages through its kinetis-docs: resources/read of "
        'kinetis://docs/index was answered with error -32603: Could not read "kinetis://docs/'
        f"index\". The server's stderr is in {kept}."
    )
    assert problem["fix"].startswith("Check that this machine reaches raw.githubusercontent.com")
    assert problem["fix"].endswith(", then run `kinetis-docs setup`")


def test_status_with_nothing_installed_exits_1_and_names_setup(machine: Machine) -> None:
    result = machine.run("status")

    assert result.returncode == 1
    assert result.stdout.splitlines()[-3:] == [
        "1 problem:",
        f"  - Nothing is installed in {machine.install}",
        "    Fix: `kinetis-docs setup` (Claude Code) or `kinetis-docs setup codex` (Codex)",
    ]


def test_status_points_at_the_install_a_client_runs_when_another_directory_is_examined(
    machine: Machine, tmp_path: Path
) -> None:
    assert machine.setup().returncode == 0
    elsewhere = machine.env | {"KINETIS_MCP_DOCS_DIR": os.fspath(tmp_path / "not-here")}

    code, report = _status_json(machine, elsewhere)

    assert code == 1
    assert report["clients"][0]["install_directory"] == os.fspath(machine.install)
    assert report["clients"][0]["page_read"] is None
    (problem,) = report["problems"]
    assert problem["problem"] == f"Nothing is installed in {tmp_path / 'not-here'}"
    assert problem["fix"].startswith(
        f"Claude Code runs the install in {machine.install}: "
        f"`KINETIS_MCP_DOCS_DIR={machine.install} kinetis-docs status` shows it"
    )


def test_status_of_an_install_no_client_runs_exits_1_naming_setup(machine: Machine) -> None:
    assert machine.setup().returncode == 0
    machine.claude.state.write_text(
        json.dumps({"kinetis-docs": {"command": "/opt/other/current/bin/python", "args": START}})
    )

    code, report = _status_json(machine)

    assert code == 1
    assert [problem["problem"] for problem in report["problems"]] == [
        f"No client is registered to run {machine.install}"
    ]
    assert report["clients"][0]["install_directory"] == "/opt/other"


def test_status_of_a_directory_that_is_not_an_install_says_why_and_touches_nothing(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    (machine.home / "notes.txt").write_text("mine\n")
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(machine.home)

    code, report = _status_json(machine)

    assert code == 1
    assert report["install"]["state"] == "not-ours"
    (problem,) = report["problems"]
    assert problem["problem"] == (
        f"{machine.home} is not an install of this tool: it is your home directory, which "
        "holds notes.txt; an install directory is a directory of its own"
    )
    assert [path.name for path in machine.home.iterdir()] == ["notes.txt"]
