"""`kinetis-docs status [--json]` end to end, after real installs, against stub client CLIs."""

from __future__ import annotations

import json
import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from kinetis_mcp_docs.installer.install_dir.package_source import PackageSource, record_source
from kinetis_mcp_docs.installer.install_dir.throttle import (
    read_failure,
    read_last_check,
    record_check,
)
from kinetis_mcp_docs.installer.layout import InstallLayout
from kinetis_mcp_docs.installer.update import TIMEOUT_VARIABLE
from tests.support.machine import (
    HTTP_URL,
    START,
    Machine,
    add_http_registration,
    machine_at,
    python_removed,
    read_only_or_skip,
)

DAY = 86_400


def _utc(seconds: float) -> str:
    """A time as status shows it."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


PROJECT_DOCS = Path(__file__).resolve().parents[2] / "docs"


def _own(machine: Machine) -> str:
    """The install's own command, as status names it for the machine's install directory."""
    command = machine.install / "current" / "bin" / "kinetis-docs"
    return f"KINETIS_MCP_DOCS_DIR={machine.install} {command}"


def _status_json(machine: Machine, env: dict[str, str] | None = None) -> tuple[int, Any]:
    result = machine.run("status", "--json", env=env)
    assert "Traceback" not in result.stderr
    return result.returncode, json.loads(result.stdout)


@pytest.mark.interpreter
def test_status_of_a_working_install_reports_it_whole_and_exits_0(installed: Machine) -> None:
    machine = installed

    result = machine.run_process("status")  # a smoke scenario, as a process

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
    house = machine.env["PIP_FIND_LINKS"]
    assert lines[6:] == [
        f"  Package source: the wheelhouse {house}, and no index",
        "Claude Code: kinetis-docs runs this install, with pages from the Kinetis repository",
        f"  Command: {' '.join(machine.registered_argv())}",
        "  Claude Code reports: ✔ Connected",
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
    installed: Machine,
    refusing_port: int,
) -> None:
    machine = installed
    # Claude Code, started from this shell, reaches no origin now; `initialize` still works.
    unreachable = machine.env | {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"}

    code, report = _status_json(machine, unreachable)

    assert code == 1
    claude = report["clients"][0]
    assert claude["reported_status"] == "✔ Connected"
    assert claude["page_read"]["ok"] is False
    kept = Path(claude["page_read"]["stderr_file"])
    said = kept.read_text().splitlines()[-1]
    assert "Connection refused" in said
    (problem,) = report["problems"]
    # The server's own last word is in the problem, not only in the file.
    assert problem["problem"] == (
        "Claude Code cannot read pages through its kinetis-docs: resources/read of "
        'kinetis://docs/index was answered with error -32603: Could not read "kinetis://docs/'
        f"index\"; the server's last line on stderr: {said} (all of its stderr is in {kept})."
    )
    assert problem["fix"].startswith("Check that this machine reaches raw.githubusercontent.com")
    assert problem["fix"].endswith(f", then run `{_own(machine)} setup`")


def test_status_with_nothing_installed_exits_1_and_names_setup(machine: Machine) -> None:
    result = machine.run("status")

    assert result.returncode == 1
    # No install's own command exists yet, and the package is not on PyPI: the README's.
    session = (
        "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m nox -s setup_from_source"
    )
    assert result.stdout.splitlines()[-3:] == [
        "1 problem:",
        f"  - Nothing is installed in {machine.install}",
        (
            f"    Fix: install it from a clone of kinetis-mcp-docs, `{session}` (Claude Code) "
            f"or `{session} -- codex` (Codex), as its README says"
        ),
    ]


def test_status_points_at_the_install_a_client_runs_when_another_directory_is_examined(
    installed: Machine, tmp_path: Path
) -> None:
    machine = installed
    elsewhere = machine.env | {"KINETIS_MCP_DOCS_DIR": os.fspath(tmp_path / "not-here")}

    code, report = _status_json(machine, elsewhere)

    assert code == 1
    assert report["clients"][0]["install_directory"] == os.fspath(machine.install)
    assert report["clients"][0]["page_read"] is None
    (problem,) = report["problems"]
    assert problem["problem"] == f"Nothing is installed in {tmp_path / 'not-here'}"
    assert problem["fix"].startswith(
        f"Claude Code runs the install in {machine.install}: `{_own(machine)} status` shows it"
    )


def test_status_of_an_install_no_client_runs_exits_1_naming_setup(installed: Machine) -> None:
    machine = installed
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
        f"{machine.home} is not an install of this tool: it is your home directory; an "
        "install directory is a directory of its own"
    )
    assert [path.name for path in machine.home.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("spaces", [" ", "  "])
def test_setup_and_status_take_install_and_pages_paths_with_spaces_whole(
    tmp_path: Path, wheelhouse_env: dict[str, str], spaces: str, refusing_port: int
) -> None:
    machine = machine_at(
        tmp_path, wheelhouse_env, {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"}
    )
    machine.install = tmp_path / f"the{spaces}install"
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(machine.install)
    pages = tmp_path / f"the{spaces}pages"
    pages.mkdir()
    (pages / "index.md").write_text("# Spaced out\n")
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(pages)

    installed = machine.setup()

    assert installed.returncode == 0, installed.stdout + installed.stderr
    argv = machine.registered_argv("--docs-dir", os.fspath(pages))
    entry = machine.claude.registrations()["kinetis-docs"]
    assert [entry["command"], *entry["args"]] == argv
    code, report = _status_json(machine)
    assert code == 0, report["problems"]
    claude = report["clients"][0]
    assert claude["command"] == argv
    assert claude["pages"] == os.fspath(pages)
    assert claude["runs_this_install"] is True
    assert claude["page_read"]["ok"] is True


def test_a_registration_whose_pages_are_gone_shows_the_servers_reason_and_a_setup_keeping_them(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.md").write_text("# Local\n")
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(pages)
    assert machine.setup().returncode == 0
    del machine.env["KINETIS_MCP_DOCS_PAGES"]
    shutil.rmtree(pages)

    code, report = _status_json(machine)

    assert code == 1
    command = machine.own_command
    setup = f"KINETIS_MCP_DOCS_DIR={machine.install} KINETIS_MCP_DOCS_PAGES={pages} {command} setup"
    unread, failed = report["problems"]
    assert (
        failed["problem"]
        == "Claude Code reports kinetis-docs as '✘ Failed to connect', not Connected"
    )
    assert failed["fix"] == (
        f"`claude mcp get kinetis-docs` says why; `{setup}` reinstalls and registers it again"
    )
    kept = report["clients"][0]["page_read"]["stderr_file"]
    assert unread["problem"] == (
        "Claude Code cannot read pages through its kinetis-docs: initialize got no response "
        "before the server exited with status 2; the server's last line on stderr: "
        "kinetis-docs: --docs-dir "
        f"{pages}: not a directory (all of its stderr is in {kept})."
    )
    # What the server said: the directory is gone, not a page unreadable.
    assert unread["fix"] == (
        f"The pages directory {pages} is gone: put it back (a checkout's docs/, say) or point "
        f"KINETIS_MCP_DOCS_PAGES at another, then run `{setup}`"
    )


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_status_shows_an_http_registration_as_its_url_never_a_header_value(
    machine: Machine, kind: str
) -> None:
    add_http_registration(machine, kind)

    result = machine.run("status")
    code, report = _status_json(machine)

    # A user of the HTTP route alone needs no install: once exit status 1, `Nothing is
    # installed`, while the client was connected.
    assert result.returncode == code == 0, result.stdout
    label = "Claude Code" if kind == "claude" else "Codex"
    assert (
        f"{label}: kinetis-docs is an HTTP registration of {HTTP_URL} (headers: Authorization), "
        "not this install"
    ) in result.stdout.splitlines()
    assert "s3cret" not in result.stdout + json.dumps(report)
    (shown,) = [client for client in report["clients"] if client["registered"]]
    assert shown["url"] == HTTP_URL
    assert shown["headers"] == ["Authorization"]
    assert shown["transport"] == ("http" if kind == "claude" else "streamable_http")
    assert shown["command"] is None
    assert shown["page_read"] is None


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_a_user_of_the_http_route_alone_under_its_own_name_has_nothing_to_install(
    machine: Machine, kind: str
) -> None:
    add_http_registration(machine, kind, "kinetis-docs-http")

    result = machine.run("status")

    assert result.returncode == 0, result.stdout
    label = "Claude Code" if kind == "claude" else "Codex"
    lines = result.stdout.splitlines()
    assert (
        f"  HTTP route: {label}'s kinetis-docs-http is an HTTP registration of {HTTP_URL} "
        "(headers: Authorization): served by the route, needing no install here"
    ) in lines
    assert lines[-1].startswith("No problems: nothing is installed here")


def test_with_nothing_installed_and_no_client_using_the_route_status_still_exits_1(
    machine: Machine,
) -> None:
    result = machine.run("status")

    assert result.returncode == 1
    assert f"  - Nothing is installed in {machine.install}" in result.stdout.splitlines()


def test_status_names_a_local_scope_registration_hiding_the_user_one_and_how_to_remove_it(
    installed: Machine,
) -> None:
    machine = installed
    machine.claude.register_locally(machine.home, {"command": "/opt/old/python", "args": []})

    code, report = _status_json(machine)

    assert code == 1
    assert report["clients"][0]["scope"] == "Local config (private to you in this project)"
    assert report["problems"][0] == {
        "problem": (
            f"Claude Code reports a local-scope kinetis-docs for {machine.home}, which hides the "
            f"user-scope one there: sessions started in {machine.home} run `/opt/old/python`"
        ),
        "fix": (
            f"`claude mcp remove kinetis-docs --scope local`, run in {machine.home}; then run "
            "status again"
        ),
    }


def test_status_run_in_a_project_with_a_registration_of_its_own_reports_the_users(
    installed: Machine, tmp_path: Path
) -> None:
    machine = installed
    project = tmp_path / "project"
    project.mkdir()
    machine.claude.register_locally(project, {"command": "/opt/project/python", "args": []})

    result = machine.run("status", "--json", cwd=project)

    assert result.returncode == 0, result.stdout
    assert json.loads(result.stdout)["clients"][0]["runs_this_install"] is True


def test_status_reports_an_update_failing_more_than_a_day_past_due_naming_update(
    installed: Machine,
    refusing_port: int,
) -> None:
    machine = installed
    layout = InstallLayout(machine.install)
    record_check(layout.last_update_check, time.time() - 3 * DAY)
    # The index this install came from is down now (refusing connections).
    down = f"http://127.0.0.1:{refusing_port}/simple/"
    record_source(layout, PackageSource({"PIP_INDEX_URL": down, "PIP_CONFIG_FILE": os.devnull}))
    # pip's own start-up, not the refused connection, can outlast the default 5 s deadline
    # on a loaded machine; the failure this test reads is pip's, so give the start room.
    machine.env[TIMEOUT_VARIABLE] = "30"

    code, report = _status_json(machine)

    assert code == 1
    assert report["clients"][0]["page_read"]["ok"] is True
    (problem,) = report["problems"]
    assert problem["problem"].startswith("The daily update has not succeeded since ")
    assert problem["problem"].endswith(
        "more than a day past due: the last client start that tried, at "
        f"{report['install']['last_failed_update']}, failed: Could not check for a newer "
        "kinetis-mcp-docs: pip exited with status 1: ERROR: No matching distribution found "
        "for kinetis-mcp-docs<2,>=1.0"
    )
    assert problem["fix"] == (
        f"`{_own(machine)} update` updates now, with no start-up time limit, or says what fails"
    )
    assert report["install"]["package_source"] == f"the index {down}"
    # The next client start tries again: the check is due now.
    assert report["install"]["next_update_check"] is None


def test_status_reports_a_failed_update_when_the_last_check_is_dated_in_the_future(
    installed: Machine,
    refusing_port: int,
) -> None:
    machine = installed
    layout = InstallLayout(machine.install)
    # The clock was turned back a month after the last successful check.
    ahead = time.time() + 30 * DAY
    record_check(layout.last_update_check, ahead)
    down = f"http://127.0.0.1:{refusing_port}/simple/"
    record_source(layout, PackageSource({"PIP_INDEX_URL": down, "PIP_CONFIG_FILE": os.devnull}))
    machine.env[TIMEOUT_VARIABLE] = "30"  # pip's failure, not the deadline, on a loaded machine

    result = machine.run("status")

    # The page read's start found the update due, tried, failed and served anyway.
    assert result.returncode == 1, result.stdout + result.stderr
    assert read_last_check(layout.last_update_check) == ahead
    failure = read_failure(layout.last_update_failure)
    assert failure is not None
    assert failure[0] < ahead
    lines = result.stdout.splitlines()
    failed = [line for line in lines if line.startswith("  Last failed update: ")]
    assert failed == [f"  Last failed update: {_utc(failure[0])}: {failure[1]}"]
    assert "No matching distribution found for kinetis-mcp-docs<2,>=1.0" in failure[1]
    assert "  Next update check: due: the next client start checks" in lines
    assert "  Page read: ok: kinetis-mcp-docs 1.0.1 served kinetis://docs/index" in lines
    problem = lines.index("1 problem:") + 1
    assert lines[problem] == (
        f"  - The last successful update check, at {_utc(ahead)}, is in the future (the clock "
        "was turned back after it), so how long updates have failed cannot be told: the last "
        f"client start that tried, at {_utc(failure[0])}, failed: {failure[1].rstrip('.')}"
    )
    fix = f"    Fix: `{_own(machine)} update` updates now, with no start-up time limit, or says"
    assert lines[problem + 1 :] == [f"{fix} what fails"]


def test_status_shows_an_update_timeout_a_client_start_refused_as_its_failed_update(
    installed: Machine,
) -> None:
    machine = installed
    layout = InstallLayout(machine.install)
    record_check(layout.last_update_check, time.time() - DAY - 3600)
    # Claude Code passes the shell's environment to the server it starts.
    machine.env[TIMEOUT_VARIABLE] = "5s"

    code, report = _status_json(machine)

    # The start that read a page for status served, and recorded why it did not update.
    assert report["clients"][0]["page_read"]["ok"] is True
    reason = (
        f"{TIMEOUT_VARIABLE}='5s' is not a positive number of seconds, so no update was "
        "attempted; give the server a number of seconds, such as 10, or remove the variable."
    )
    assert report["install"]["last_failure"] == reason
    # Each status run's page read is a due start of its own, recording its own failure.
    (failed,) = [
        line
        for line in machine.run("status").stdout.splitlines()
        if line.startswith("  Last failed update: ")
    ]
    assert failed.endswith(f"+00:00: {reason}")
    # Due for an hour: like any failed update, a problem only once a day past due.
    assert code == 0


def test_status_says_a_codex_registration_with_enabled_false_is_disabled_and_how_to_enable(
    installed: Machine,
) -> None:
    machine = installed
    argv = machine.registered_argv()
    recorded = {name: machine.env[name] for name in ("HTTPS_PROXY", "SSL_CERT_FILE")}
    entry = {"command": argv[0], "args": argv[1:], "env": recorded, "enabled": False}
    machine.codex.state.write_text(json.dumps({"kinetis-docs": entry}))

    result = machine.run("status")
    code, report = _status_json(machine)

    assert result.returncode == code == 1
    lines = result.stdout.splitlines()
    codex = lines.index(
        "Codex: kinetis-docs runs this install, with pages from the Kinetis repository"
    )
    assert lines[codex + 2] == "  Disabled: its entry says `enabled = false`; Codex starts none"
    assert report["clients"][1]["disabled"] is True
    assert report["clients"][0]["disabled"] is False
    assert report["problems"] == [
        {
            "problem": (
                "Codex has kinetis-docs disabled (`enabled = false` in its entry), so no session "
                "starts it"
            ),
            "fix": (
                "set `enabled = true` in [mcp_servers.kinetis-docs] of config.toml in CODEX_HOME "
                "(~/.codex unless set), or delete that line; then run status again"
            ),
        }
    ]


def test_status_of_a_source_install_says_how_it_takes_its_checkouts_changes(
    machine: Machine, tmp_path: Path, wheelhouse: Path
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "noxfile.py").parent.mkdir()
    (checkout / "noxfile.py").write_text("")
    house = checkout / "build" / "wheelhouse"
    shutil.copytree(wheelhouse, house, symlinks=True)
    machine.env |= {"PIP_FIND_LINKS": house.as_uri(), "PIP_NO_INDEX": "1"}
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(PROJECT_DOCS)
    assert machine.setup().returncode == 0
    # From a shell without the wheelhouse's settings, as a user's later shell is.
    plain = {key: value for key, value in machine.env.items() if not key.startswith("PIP_")}

    result = machine.run("status", env=plain)

    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert (
        f"  Package source: the wheelhouse {(machine.install / 'wheelhouse').as_uri()} (the "
        f"install's copy of {house}, refreshed from it at each setup and update while it is "
        "there), and no index"
    ) in lines
    assert (
        f"  Source checkout: {checkout}; it takes the checkout's changes with `cd {checkout} "
        "&& git pull && python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m nox -s setup_from_source` "
        "(add `-- codex` for Codex). Moving or deleting it changes nothing this install serves "
        "or updates from: it holds copies of both"
    ) in lines

    # Its own setup would ask an index, which has no such package: refused before anything
    # is written, naming the checkout's command (it once failed after pip, naming pip).
    serving = machine.current()
    machine.claude.clear_log()
    refused = machine.run_process("setup", env=plain, program=machine.own_command)
    assert refused.returncode == 1
    assert refused.stderr == (
        f"kinetis-docs: {machine.install} is a source install of {checkout}: its packages come "
        "from that checkout's wheelhouse, which no package index has, so its own setup cannot "
        f"install it again. Run `cd {checkout} && python3 -m venv .venv && .venv/bin/python -m "
        f"pip install 'nox[uv]' && KINETIS_MCP_DOCS_DIR={machine.install} "
        f"KINETIS_MCP_DOCS_PAGES={PROJECT_DOCS} .venv/bin/python -m nox -s setup_from_source` "
        "instead. Nothing was written.\n"
    )
    assert machine.current() == serving
    assert [call for call in machine.claude.calls() if call[:2] != ["mcp", "get"]] == []

    # With the checkout's wheelhouse gone, a due update reads the install's copy: nothing
    # fails (it once failed at every start until the session was run again).
    shutil.rmtree(house)
    last_check = InstallLayout(machine.install).last_update_check
    record_check(last_check, time.time() - 3 * DAY)

    code, report = _status_json(machine, plain)

    assert code == 0, report["problems"]
    assert float(last_check.read_text()) > time.time() - DAY


def test_an_install_whose_python_is_gone_names_setup_with_a_python_there_is_now(
    installed: Machine,
) -> None:
    machine = installed
    current = machine.install / "envs" / machine.current()
    gone = python_removed(current)

    result = machine.run("status")

    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert (
        f"  Current: kinetis-mcp-docs 1.0.1 in {current}, which cannot run: its Python, {gone}, "
        "is gone"
    ) in lines
    new_python = (
        "run setup again with a Python you have now, from a clone of kinetis-mcp-docs (whose "
        ".venv is made again, since it links to the Python that went too): `rm -rf .venv && "
        "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
        f"KINETIS_MCP_DOCS_DIR={machine.install} .venv/bin/python -m nox -s setup_from_source "
        "-- --live` (Claude Code)"
    )
    problems = lines[lines.index(next(line for line in lines if line.endswith(" problems:"))) :]
    python = machine.install / "current" / "bin" / "python"
    assert problems[1:3] == [
        (
            "  - Claude Code cannot read pages through its kinetis-docs: the command could not "
            f"start: {python} could not be started ([Errno 2] No such file or directory: "
            f"'{python}'). The server wrote nothing to stderr."
        ),
        f"    Fix: {new_python}",
    ]
    assert (
        f"  - The environment {machine.install / 'current'} points at, {current}, cannot run: "
        f"its Python, {gone}, is gone"
    ) in problems
    fixes = [line for line in problems if line.startswith("    Fix: ")]
    assert fixes[-1] == f"    Fix: {new_python}"
    # Its own command cannot start: no fix names it.
    assert os.fspath(machine.own_command) not in result.stdout
    assert "index.md" not in result.stdout


def test_after_setup_with_another_python_previous_is_shown_as_no_rollback(
    installed: Machine,
) -> None:
    machine = installed
    stranded = machine.install / "envs" / machine.current()
    gone = python_removed(stranded)

    assert machine.setup().returncode == 0
    code, report = _status_json(machine)

    assert code == 0, report["problems"]
    assert report["install"]["current"]["cannot_run"] is None
    assert report["install"]["previous"] == {
        "path": os.fspath(stranded),
        "version": "1.0.1",
        "cannot_run": f"its Python, {gone}, is gone",
    }
    assert (
        f"  Previous: kinetis-mcp-docs 1.0.1 in {stranded}, which cannot run: its Python, "
        f"{gone}, is gone; not one to roll back to"
    ) in machine.run("status").stdout.splitlines()


def test_status_of_an_install_that_cannot_be_written_says_no_update_can_happen(
    installed: Machine,
) -> None:
    machine = installed

    result = machine.run_process("status", wrapper=read_only_or_skip(machine.install))

    assert result.returncode == 1, result.stdout
    assert result.stdout.splitlines()[-3:] == [
        "1 problem:",
        (
            f"  - {machine.install} cannot be written (it is on a read-only file system), so no "
            "update can happen: neither a client start's, nor `update`, nor setup"
        ),
        (
            "    Fix: choose a writable location with KINETIS_MCP_DOCS_DIR, or fix the "
            "permissions (then run setup there)"
        ),
    ]
