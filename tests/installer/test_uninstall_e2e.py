"""`kinetis-docs uninstall [codex]` end to end: the registration, then the directory."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import threading
from pathlib import Path
from typing import IO

import pytest

from kinetis_mcp_docs.installer.envs.built import hold
from kinetis_mcp_docs.installer.install_dir.lock import update_lock
from kinetis_mcp_docs.server.errors import MISSING_FILES
from kinetis_mcp_docs.server.protocol.errors import INTERNAL_ERROR
from tests.support.clients import install_stub
from tests.support.machine import (
    HTTP_URL,
    KINETIS_DOCS,
    START,
    Machine,
    add_http_registration,
    assert_answers_four_messages,
    environments,
    machine_at,
    read_only_or_skip,
)
from tests.support.processes import PROC_AVAILABLE, processes_mentioning
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess

WAIT = 60.0
SESSIONS = (
    "Client sessions started before now keep running the removed install until they are "
    "restarted, and may fail to read pages meanwhile: restart them"
)


@pytest.fixture
def local_machine(tmp_path: Path, wheelhouse_env: dict[str, str]) -> Machine:
    """A machine whose setup serves this repository's docs/: no origin needed."""
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(Path(__file__).parents[2] / "docs")
    return machine


@pytest.mark.interpreter
def test_uninstall_removes_the_registration_then_the_directory_and_a_second_run_is_fine(
    installed_local: Machine,
) -> None:
    machine = installed_local
    (machine.install / ".last-update-check.tmp-0123abcd").write_text("left by a kill\n")

    result = machine.run_process("uninstall")  # a smoke scenario, as a process

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Removed Claude Code's kinetis-docs registration",
        f"Removed {machine.install}",
        SESSIONS,
    ]
    assert not machine.install.exists()
    assert machine.claude.registrations() == {}

    again = machine.run_process("uninstall")

    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines() == [
        "Claude Code has no kinetis-docs registration",
        f"Nothing is installed in {machine.install}",
    ]


def test_uninstall_keeps_the_directory_while_the_other_client_still_runs_it(
    installed_local: Machine,
) -> None:
    machine = installed_local
    assert machine.setup("codex").returncode == 0

    first = machine.run("uninstall")

    assert first.returncode == 0, first.stderr
    command = machine.install / "current" / "bin" / "kinetis-docs"
    assert first.stdout.splitlines() == [
        "Removed Claude Code's kinetis-docs registration",
        (
            f"Kept {machine.install}: Codex still runs it; `KINETIS_MCP_DOCS_DIR="
            f"{machine.install} {command} uninstall codex` removes that registration, then "
            "the directory"
        ),
    ]
    entry = machine.codex.registrations()["kinetis-docs"]
    assert assert_answers_four_messages([entry["command"], *entry["args"]], entry["launch_env"])

    second = machine.run("uninstall", "codex")

    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines() == [
        "Removed Codex's kinetis-docs registration",
        f"Removed {machine.install}",
        SESSIONS,
    ]
    assert not machine.install.exists()


def test_uninstall_removes_only_what_setup_wrote_and_names_what_it_kept(
    installed_local: Machine,
) -> None:
    machine = installed_local
    (machine.install / "notes.txt").write_text("mine\n")
    (machine.install / "envs" / "my-venv" / "bin").mkdir(parents=True)

    result = machine.run("uninstall")

    assert result.returncode == 0, result.stderr
    # What is not the installer's is named, never given as something to remove.
    assert result.stdout.splitlines()[-1] == (
        f"Kept {machine.install}: it also holds envs/my-venv, notes.txt, which this installer "
        "did not write, so it left those and the directory as they are"
    )
    assert sorted(path.name for path in machine.install.iterdir()) == [
        ".kinetis-mcp-docs",
        ".update.lock",
        "envs",
        "notes.txt",
    ]
    assert [path.name for path in (machine.install / "envs").iterdir()] == ["my-venv"]

    (machine.install / "notes.txt").unlink()
    (machine.install / "envs" / "my-venv" / "bin").rmdir()
    (machine.install / "envs" / "my-venv").rmdir()
    again = machine.run("uninstall")

    assert again.stdout.splitlines()[-2:] == [f"Removed {machine.install}", SESSIONS]
    assert not machine.install.exists()


def test_uninstall_refuses_a_directory_that_is_not_an_install_touching_nothing(
    local_machine: Machine,
) -> None:
    machine = local_machine
    registered = {"command": os.fspath(machine.home / "current" / "bin" / "python"), "args": START}
    machine.claude.state.write_text(json.dumps({"kinetis-docs": registered}))
    (machine.home / "notes.txt").write_text("mine\n")
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(machine.home)

    result = machine.run("uninstall")

    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith(
        f"kinetis-docs: Refusing to remove {machine.home}: it is your home directory; an "
        "install directory is a directory of its own. Nothing was changed"
    )
    assert "notes.txt" not in line
    assert sorted(path.name for path in machine.home.iterdir()) == ["notes.txt"]
    assert machine.claude.calls() == []
    assert "kinetis-docs" in machine.claude.registrations()


def test_uninstall_of_an_install_it_cannot_write_keeps_the_registration_and_says_why(
    installed: Machine,
) -> None:
    machine = installed
    machine.claude.clear_log()
    entries = sorted(path.name for path in machine.install.iterdir())

    result = machine.run_process("uninstall", wrapper=read_only_or_skip(machine.install))

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"kinetis-docs: Cannot remove {machine.install}: {machine.install} cannot be written "
        "(it is on a read-only file system). Nothing was changed, Claude Code's kinetis-docs "
        "registration included; make it writable (fix the permissions, or remount it "
        "read-write), then run uninstall again.\n"
    )
    assert machine.claude.calls() == []
    assert machine.claude.registrations()["kinetis-docs"]["command"] == os.fspath(
        machine.install / "current" / "bin" / "python"
    )
    assert sorted(path.name for path in machine.install.iterdir()) == entries


UNWRITTEN = (
    "kinetis-docs: Claude Code still reports its kinetis-docs registration after `claude mcp "
    "remove kinetis-docs --scope user` succeeded: it did not write ~/.claude.json, where it "
    "keeps it. Nothing was changed; make that file and its directory writable (fix their "
    "permissions, or remount them read-write), then run uninstall again.\n"
)


def test_uninstall_whose_removal_claude_code_did_not_write_keeps_the_install_and_exits_1(
    installed_local: Machine,
) -> None:
    machine = installed_local
    entries = sorted(path.name for path in machine.install.iterdir())
    registered = machine.claude.state.read_text()
    # As Claude Code with a read-only ~/.claude.json: `mcp remove` exits 0, writing nothing.
    wrapper = read_only_or_skip(machine.claude.state)

    result = machine.run_process("uninstall", wrapper=wrapper)

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == UNWRITTEN
    assert machine.claude.state.read_text() == registered
    assert sorted(path.name for path in machine.install.iterdir()) == entries
    # What the registration runs is whole: a client starting it still gets its pages.
    entry = machine.claude.registrations()["kinetis-docs"]
    assert assert_answers_four_messages([entry["command"], *entry["args"]], machine.env)


def test_uninstall_leaves_a_registration_that_runs_another_install_directory(
    local_machine: Machine, tmp_path: Path
) -> None:
    machine = local_machine
    other = tmp_path / "other"
    other.mkdir()
    registered = {"command": os.fspath(other / "current" / "bin" / "python"), "args": START}
    machine.claude.state.write_text(json.dumps({"kinetis-docs": registered}))

    result = machine.run("uninstall")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        (
            f"Left Claude Code's kinetis-docs registration: it runs the install in {other}; "
            f"`KINETIS_MCP_DOCS_DIR={other} kinetis-docs uninstall` removes that one"
        ),
        f"Nothing is installed in {machine.install}",
    ]
    assert machine.claude.registrations()["kinetis-docs"]["command"] == registered["command"]


def test_uninstall_removes_a_registration_whose_install_directory_is_gone(
    local_machine: Machine, tmp_path: Path
) -> None:
    machine = local_machine
    gone = tmp_path / "deleted-by-hand"
    registered = {"command": os.fspath(gone / "current" / "bin" / "python"), "args": START}
    machine.claude.state.write_text(json.dumps({"kinetis-docs": registered}))

    result = machine.run("uninstall")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"Removed Claude Code's kinetis-docs registration: it ran {gone}, which no longer exists"
    )
    assert machine.claude.registrations() == {}


def test_uninstall_without_the_clients_cli_changes_nothing_and_says_why(
    local_machine: Machine,
) -> None:
    machine = local_machine
    assert machine.setup("codex").returncode == 0
    machine.codex.path.unlink()

    result = machine.run("uninstall", "codex")

    assert result.returncode == 1
    assert result.stderr == (
        "kinetis-docs: The Codex CLI `codex` is not on PATH, so its kinetis-docs registration "
        "cannot be removed; run uninstall from a shell where `codex` runs. Nothing was "
        "changed.\n"
    )
    assert (machine.install / "current" / "bin" / "python").exists()


@pytest.mark.skipif(not PROC_AVAILABLE, reason="observes processes in /proc")
def test_uninstall_removes_the_directory_only_once_the_update_lock_is_free(
    installed_local: Machine,
) -> None:
    machine = installed_local
    with update_lock(machine.install / ".update.lock"), machine.started("uninstall") as process:
        assert process.stdout is not None
        assert process.stdout.readline() == "Removed Claude Code's kinetis-docs registration\n"
        assert process.stdout.readline() == f"Waiting for another update of {machine.install}\n"
        assert (machine.install / "current" / "bin" / "python").exists()
        assert processes_mentioning(os.fspath(machine.install)) == []
    stdout, _ = process.communicate(timeout=WAIT)
    assert process.returncode == 0
    assert stdout.splitlines()[-2:] == [f"Removed {machine.install}", SESSIONS]
    assert not machine.install.exists()


def test_uninstall_removes_the_directory_when_the_other_clients_cli_is_gone_saying_so(
    installed_local: Machine,
) -> None:
    machine = installed_local
    assert machine.setup("codex").returncode == 0
    machine.codex.path.unlink()

    result = machine.run("uninstall")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Removed Claude Code's kinetis-docs registration",
        (
            "Could not check Codex: its CLI `codex` is not on PATH, so it cannot start this "
            "install either. If Codex is installed where this shell does not find it, "
            "`codex mcp remove kinetis-docs` run there removes its entry"
        ),
        f"Removed {machine.install}",
        SESSIONS,
    ]
    assert not machine.install.exists()


def test_uninstall_keeps_the_directory_when_the_other_clients_cli_fails_and_exits_1(
    local_machine: Machine, tmp_path: Path
) -> None:
    machine = local_machine
    assert machine.setup().returncode == 0
    assert machine.setup("codex").returncode == 0
    failing = install_stub(
        "codex", tmp_path / "bin", tmp_path / "stub-state", fail={"get": "Error: bad config"}
    )
    assert failing.path == machine.codex.path

    result = machine.run("uninstall")

    assert result.returncode == 1
    assert result.stdout.splitlines() == ["Removed Claude Code's kinetis-docs registration"]
    again = f"KINETIS_MCP_DOCS_DIR={machine.install} {machine.own_command} uninstall"
    assert result.stderr == (
        f"kinetis-docs: Kept {machine.install}: could not tell whether Codex still runs it: "
        "Codex could not read its kinetis-docs registration (`codex mcp get` exited with "
        "status 1: Error: bad config). Once `codex mcp get kinetis-docs` works in this shell, "
        f"run `{again}` again.\n"
    )
    assert "setup" not in result.stderr
    assert (machine.install / "current" / "bin" / "python").exists()


def test_uninstall_refuses_while_a_local_scope_registration_hides_the_user_one(
    installed_local: Machine,
) -> None:
    machine = installed_local
    machine.claude.register_locally(machine.home, {"command": "/opt/old/python", "args": []})

    result = machine.run("uninstall")

    assert result.returncode == 1
    assert result.stderr == (
        f"kinetis-docs: Claude Code reports a local-scope kinetis-docs for {machine.home}, which "
        f"hides the user-scope one there: sessions started in {machine.home} run "
        "`/opt/old/python`. Remove it with `claude mcp remove kinetis-docs --scope local`, run "
        f"in {machine.home}, then run uninstall again: it hides the user-scope registration "
        "uninstall removes. Nothing was changed.\n"
    )
    assert "kinetis-docs" in machine.claude.registrations()
    assert (machine.install / "current" / "bin" / "python").exists()


def test_uninstall_leaves_an_http_registration_saying_what_it_is(local_machine: Machine) -> None:
    machine = local_machine
    add_http_registration(machine, "claude")

    result = machine.run("uninstall")

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == (
        f"Left Claude Code's kinetis-docs registration: it runs an HTTP registration of "
        f"{HTTP_URL} (headers: Authorization), which this installer did not write"
    )
    assert "s3cret" not in result.stdout
    assert machine.claude.registrations()["kinetis-docs"]["url"] == HTTP_URL


def test_the_command_setup_names_last_looks_after_the_install_and_uninstalls_it(
    local_machine: Machine,
) -> None:
    machine = local_machine
    installed = machine.setup()
    assert installed.returncode == 0, installed.stderr
    named = installed.stdout.splitlines()[-1].split("`")[1]
    *settings, program, verb = shlex.split(named)
    assert (program, verb) == (os.fspath(machine.own_command), "status")
    env = machine.env | dict(setting.split("=", 1) for setting in settings)
    # Run from the user's shell with nothing of this checkout on PATH.
    env["PATH"] = os.pathsep.join(
        entry for entry in env["PATH"].split(os.pathsep) if Path(entry) != KINETIS_DOCS.parent
    )

    status = machine.run_process("status", env=env, program=Path(program))
    removed = machine.run_process("uninstall", env=env, program=Path(program))

    assert status.returncode == 0, status.stdout + status.stderr
    assert removed.returncode == 0, removed.stderr
    assert "Traceback" not in removed.stderr
    assert removed.stdout.splitlines()[-2:] == [f"Removed {machine.install}", SESSIONS]
    assert not machine.install.exists()


def test_uninstall_kept_for_a_byte_compile_names_a_command_that_still_runs_and_removes_it(
    installed_local: Machine,
) -> None:
    machine = installed_local
    environment = (machine.install / "current").resolve()
    # What a byte-compile holds while it writes into the environment (`built.hold`).
    compiling = hold(environment, wait=False)
    assert compiling is not None
    try:
        kept = machine.run("uninstall")
    finally:
        os.close(compiling)

    assert kept.returncode == 0, kept.stderr
    named = environment / "bin" / "kinetis-docs"
    command = f"KINETIS_MCP_DOCS_DIR={machine.install} {named} uninstall"
    assert kept.stdout.splitlines() == [
        "Removed Claude Code's kinetis-docs registration",
        (
            f"Kept {machine.install}: a byte-compile is still writing into "
            f"envs/{environment.name}, and current went with the kinetis-docs in it: once the "
            f"compile has finished (seconds), `{command}` removes the rest"
        ),
    ]
    assert not (machine.install / "current").exists()

    *settings, program, verb = shlex.split(command)
    env = machine.env | dict(setting.split("=", 1) for setting in settings)
    # Run from the user's shell, with nothing of this checkout on PATH.
    env["PATH"] = os.pathsep.join(
        entry for entry in env["PATH"].split(os.pathsep) if Path(entry) != KINETIS_DOCS.parent
    )
    removed = machine.run_process(verb, env=env, program=Path(program))

    assert removed.returncode == 0, removed.stderr
    assert "Traceback" not in removed.stderr
    assert removed.stdout.splitlines()[-2:] == [f"Removed {machine.install}", SESSIONS]
    assert not machine.install.exists()


# --- a server whose install goes away -----------------------------------------------------------


def _our_lines_only(stderr: str) -> list[str]:
    """stderr's lines, each one of the server's own: no traceback, nothing else."""
    lines = stderr.splitlines()
    assert "Traceback" not in stderr, stderr
    assert all(line.startswith("kinetis-docs: ") for line in lines), stderr
    return lines


def test_a_session_whose_install_is_deleted_while_it_serves_answers_an_error_and_one_line(
    installed: Machine,
) -> None:
    server = ServerProcess(installed.registered_argv(), installed.env)
    try:
        assert "serverInfo" in server.request("initialize", INITIALIZE_PARAMS)["result"]
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        # What an uninstall does to a session still open, or a directory deleted by hand.
        shutil.rmtree(installed.install)

        listed = server.request("resources/list")
        read = server.call_tool("kinetis_read_doc", {"uri": "kinetis://docs/index"})
        code = server.finish(timeout=WAIT)
    finally:
        server.kill()

    assert listed["result"]["resources"]  # the catalogue was loaded at start
    # The page source is imported with the first read, from files that are gone.
    assert read["error"] == {"code": INTERNAL_ERROR, "message": MISSING_FILES}
    assert code == 0
    (line,) = _our_lines_only(server.stderr)
    assert "(No module named 'kinetis_mcp_docs.server.sources')" in line


@pytest.mark.parametrize(
    "module",
    [
        # Imported by the registered command's own module: what would say the line.
        "installer/names.py",
        # Imported once the start is done with: the server itself.
        "server/stdio/serve.py",
    ],
)
def test_the_registered_command_of_a_half_removed_environment_exits_1_with_one_line(
    installed: Machine, module: str
) -> None:
    (site,) = (installed.install / "current" / "lib").glob("python*/site-packages")
    removed = site / "kinetis_mcp_docs" / module
    # As an interrupted removal leaves it: the source gone, and its bytecode with it.
    removed.unlink()
    for compiled in (removed.parent / "__pycache__").glob(f"{removed.stem}.*.pyc"):
        compiled.unlink()

    server = ServerProcess(installed.registered_argv(), installed.env)
    try:
        code = server.finish(timeout=WAIT)
    finally:
        server.kill()

    assert code == 1
    assert server.lines == []
    (line,) = _our_lines_only(server.stderr)
    name = "kinetis_mcp_docs." + module.removesuffix(".py").replace("/", ".")
    environment = os.path.realpath(installed.install / "current")
    assert line.startswith(f"kinetis-docs: {environment} is missing files (")
    assert f"No module named '{name}'" in line
    assert line.endswith("Run setup again to repair the install, or uninstall it; exiting.")


def _lines_until(stream: IO[str], wanted: str) -> list[str]:
    """The lines `stream` gives until one starting with `wanted`, or its end."""
    lines: list[str] = []
    for line in stream:
        lines.append(line.rstrip("\n"))
        if line.startswith(wanted):
            break
    return lines


def test_an_uninstall_racing_a_setup_never_leaves_a_registration_to_a_removed_install(
    local_machine: Machine,
) -> None:
    # Setup once let go of the lock before it registered: an uninstall meanwhile removed
    # the install, and setup then registered the command it had removed.
    machine = local_machine
    gate = machine.claude.state.with_name("add.gate")
    os.mkfifo(gate)
    opened: list[int] = []
    opener = threading.Thread(target=lambda: opened.append(os.open(gate, os.O_WRONLY)))
    with machine.started("setup") as setup:
        opener.start()
        opener.join(WAIT)  # until setup's `claude mcp add` is held at the gate
        assert opened, "setup never reached `claude mcp add`"
        with machine.started("uninstall") as uninstall:
            assert uninstall.stdout is not None
            said = _lines_until(uninstall.stdout, "Waiting for another update of")
            os.close(opened[0])  # `claude mcp add` goes on
            out, err = uninstall.communicate(timeout=WAIT)
        _, setup_err = setup.communicate(timeout=WAIT)
    assert said[-1] == f"Waiting for another update of {machine.install}", (said, out, err)
    assert setup.returncode == 0, setup_err
    assert uninstall.returncode == 0, err
    assert (said + out.splitlines())[-1].startswith(
        f"Kept {machine.install}: Claude Code still runs it; "
    )
    (entry,) = machine.claude.registrations().values()
    assert entry["command"] == machine.registered_argv()[0]
    assert assert_answers_four_messages([entry["command"], *entry["args"]], machine.env)


def test_a_setup_that_waited_behind_an_uninstall_says_the_install_went(
    installed_local: Machine,
) -> None:
    # An uninstall holding the lock had removed the marker (it goes with the lock, last):
    # setup once installed into the directory after it as if it were still ours.
    machine = installed_local
    serving = machine.current()
    with update_lock(machine.install / ".update.lock"), machine.started("setup") as setup:
        assert setup.stdout is not None
        said = _lines_until(setup.stdout, "Waiting for another update of")
        (machine.install / ".kinetis-mcp-docs").unlink()
    out, err = setup.communicate(timeout=WAIT)
    assert said[-1] == f"Waiting for another update of {machine.install}", (said, out, err)
    assert setup.returncode == 1
    assert err.strip().endswith(
        f"{machine.install} was removed while setup waited for another update of it (an "
        "uninstall ran meanwhile); nothing was installed. Run setup again to install."
    ), err
    assert machine.current() == serving
    assert environments(machine.install) == [serving]
    assert not (machine.install / ".kinetis-mcp-docs").exists()
