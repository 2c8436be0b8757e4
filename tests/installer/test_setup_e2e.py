"""`kinetis-docs setup [codex]` end to end: a local wheelhouse, stub CLIs, real children.

Setup runs in the test process as a user would see it run (`Machine.run`), with a
throwaway HOME, recording `claude`/`codex` stubs first on PATH, pip pointed at the
session's wheelhouse through its own PIP_* variables, and the documentation origin reached
through HTTPS_PROXY and SSL_CERT_FILE; pip, the stubs and the server it checks are real
processes. It runs as a process of its own where that process is the subject: a signal, a
kill, a read-only mount, the smoke scenarios every Python runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.envs.metadata import installed_distributions
from tests.installer.conftest import SPAWN_ENTRY_RELEASES, PlantedWheelhouse
from tests.support.clients import StubClient
from tests.support.machine import (
    HTTP_URL,
    MARKER,
    START,
    Machine,
    add_http_registration,
    assert_answers_four_messages,
    environments,
    machine_at,
    read_only_or_skip,
)
from tests.support.processes import PROC_AVAILABLE, processes_mentioning, wait_for
from tests.support.wheelhouse import wheelhouse_pip_env


@pytest.mark.interpreter
def test_setup_installs_verifies_and_registers_with_claude_code_and_a_second_run_reinstalls(
    machine: Machine,
) -> None:
    # A smoke scenario, run on every Python: `kinetis-docs` as a process, as a user runs it.
    first = machine.run_process("setup")

    assert first.returncode == 0, first.stderr
    argv = machine.registered_argv()
    assert machine.claude.calls() == [
        ["mcp", "get", "kinetis-docs"],
        ["mcp", "remove", "kinetis-docs", "--scope", "user"],
        ["mcp", "add", "--scope", "user", "kinetis-docs", "--", *argv],
        ["mcp", "get", "kinetis-docs"],
    ]
    assert machine.codex.calls() == []
    lines = first.stdout.splitlines()
    assert lines[0].startswith("Checking prerequisites")
    assert lines[1] == f"Installing kinetis-mcp-docs>=1.0,<2 into {machine.install}"
    assert lines[2].startswith("Installed version 1.0.1")
    assert lines[3] == "Registering kinetis-docs with Claude Code"
    assert "claude mcp get kinetis-docs" in lines[-2]
    assert "1.0.1" in lines[-2]
    command = machine.install / "current" / "bin" / "kinetis-docs"
    assert lines[-1] == (
        f"Look after it with `KINETIS_MCP_DOCS_DIR={machine.install} {command} status` (or "
        "`update`, `uninstall` in place of `status`)."
    )
    assert (machine.install / ".kinetis-mcp-docs").read_bytes() == MARKER
    assert (machine.install / "requirements.txt").read_text() == "kinetis-mcp-docs>=1.0,<2\n"
    assert float((machine.install / ".last-update-check").read_text())
    (env_name,) = environments(machine.install)
    assert (machine.install / "current").readlink().as_posix() == f"envs/{env_name}"
    # Installed without pip's compile step, yet left compiled: the updater's pip included.
    (pip_package,) = (machine.install / "envs" / env_name / "lib").glob(
        "python3.*/site-packages/pip"
    )
    assert list((pip_package / "__pycache__").glob("__init__.*.pyc"))
    # The verification spawn found a fresh timestamp: it built no environment of its own.
    assert assert_answers_four_messages(argv, machine.env) == "1.0.1"

    machine.claude.clear_log()
    second = machine.run_process("setup")

    assert second.returncode == 0, second.stderr
    assert machine.claude.calls() == [
        ["mcp", "get", "kinetis-docs"],
        ["mcp", "remove", "kinetis-docs", "--scope", "user"],
        ["mcp", "add", "--scope", "user", "kinetis-docs", "--", *argv],
        ["mcp", "get", "kinetis-docs"],
    ]
    assert list(machine.claude.registrations()) == ["kinetis-docs"]
    new_env = (machine.install / "current").readlink().as_posix()
    assert new_env != f"envs/{env_name}"
    assert (machine.install / "previous").readlink().as_posix() == f"envs/{env_name}"
    assert sorted(environments(machine.install)) == sorted([env_name, Path(new_env).name])
    assert assert_answers_four_messages(argv, machine.env) == "1.0.1"


@pytest.mark.interpreter
def test_setup_codex_registers_the_shells_proxy_certificate_and_pip_settings_with_the_command(
    machine: Machine,
) -> None:
    machine.env["NO_PROXY"] = "example.invalid"
    machine.env["UNRELATED_SETTING"] = "not passed"

    result = machine.run_process("setup", "codex")  # a smoke scenario, as a process

    assert result.returncode == 0, result.stderr
    argv = machine.registered_argv()
    passed = {
        name: machine.env[name]
        for name in (
            "HTTPS_PROXY",
            "NO_PROXY",
            "PIP_CONFIG_FILE",
            "PIP_FIND_LINKS",
            "PIP_NO_INDEX",
            "SSL_CERT_DIR",
            "SSL_CERT_FILE",
        )
    }
    options = [f"--env={name}={value}" for name, value in sorted(passed.items())]
    assert machine.codex.calls() == [
        ["mcp", "get", "kinetis-docs", "--json"],
        ["mcp", "remove", "kinetis-docs"],
        ["mcp", "add", *options, "kinetis-docs", "--", *argv],
        ["mcp", "get", "kinetis-docs", "--json"],
    ]
    assert machine.claude.calls() == []
    assert "codex mcp get kinetis-docs" in result.stdout.splitlines()[-2]
    assert result.stdout.splitlines()[-1].endswith(
        "(or `update`, `uninstall codex` in place of `status`)."
    )
    # Started the way Codex starts it — its short list of variables plus the registered
    # ones — the server still reaches the origin through the proxy and trusts its CA.
    entry = machine.codex.registrations()["kinetis-docs"]
    assert "UNRELATED_SETTING" not in entry["launch_env"]
    assert assert_answers_four_messages(argv, entry["launch_env"]) == "1.0.1"


def test_a_failing_verification_registers_nothing_and_leaves_no_install_directory(
    tmp_path: Path, wheelhouse_env: dict[str, str], refusing_port: int
) -> None:
    machine = machine_at(
        tmp_path, wheelhouse_env, {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"}
    )

    result = machine.setup()

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (kept,) = (machine.home.parent / "tmp").iterdir()
    # The server's own account of the failure is in that file, and its last line in the line.
    said = kept.read_text().splitlines()[-1]
    assert "Connection refused" in said
    assert result.stderr.splitlines()[-1] == (
        "kinetis-docs: Verification failed: resources/read of kinetis://docs/index was "
        'answered with error -32603: Could not read "kinetis://docs/index"; the server\'s last '
        f"line on stderr: {said} (all of its stderr is in {kept}). Check that this machine "
        "reaches raw.githubusercontent.com with the proxy and certificate settings the client "
        "gives the server (HTTPS_PROXY, SSL_CERT_FILE), or serve the pages from a local "
        "directory with KINETIS_MCP_DOCS_PAGES, and run setup again. Nothing was left "
        f"installed: {machine.install} was removed again."
    )
    # Read before anything was written, never changed.
    assert machine.claude.calls() == [["mcp", "get", "kinetis-docs"]]
    assert not machine.install.exists()


def test_setup_refuses_a_non_empty_directory_without_the_marker_and_leaves_it_untouched(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.install.mkdir()
    (machine.install / "notes.txt").write_text("mine\n")

    result = machine.setup()

    assert result.returncode == 1
    assert result.stderr.startswith(f"kinetis-docs: Refusing to install into {machine.install}:")
    assert len(result.stderr.splitlines()) == 1
    assert [path.name for path in machine.install.iterdir()] == ["notes.txt"]
    assert machine.claude.calls() == []


def test_setup_refuses_a_marker_that_is_a_symlink_even_to_the_right_content(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.install.mkdir()
    real = tmp_path / "real-marker"
    real.write_bytes(MARKER)
    (machine.install / ".kinetis-mcp-docs").symlink_to(real)

    result = machine.setup("codex")

    assert result.returncode == 1
    assert "is a symlink" in result.stderr
    assert [path.name for path in machine.install.iterdir()] == [".kinetis-mcp-docs"]
    assert machine.codex.calls() == []


def test_setup_with_any_other_argument_is_a_usage_error_that_touches_nothing(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})

    for arguments in (["claude"], ["codex", "extra"], ["--scope=user"], ["Codex"]):
        result = machine.setup(*arguments)
        assert result.returncode == 2, arguments
        (line,) = result.stderr.splitlines()  # one line, not click's usage block
        assert line.startswith("kinetis-docs: "), line
        assert line.endswith("(see `kinetis-docs setup --help`)"), line
    assert not machine.install.exists()
    assert machine.claude.calls() == machine.codex.calls() == []


def test_setup_claude_is_told_the_choices_and_that_claude_code_is_the_default(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})

    result = machine.setup("claude")

    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        (
            "kinetis-docs: `kinetis-docs setup claude`: setup takes no argument for Claude "
            "Code, or `codex` for Codex, and nothing else. Claude Code is the default: "
            "`kinetis-docs setup` (see `kinetis-docs setup --help`)"
        )
    ]
    assert not machine.install.exists()


def test_setup_without_the_clients_cli_on_path_says_so_before_writing_anything(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.codex.path.unlink()
    machine.env["PATH"] = (
        os.pathsep.join(
            entry
            for entry in machine.env["PATH"].split(os.pathsep)
            if not Path(entry, "codex").exists()
        )
        or os.defpath
    )

    result = machine.setup("codex")

    assert result.returncode == 1
    assert result.stderr == (
        "kinetis-docs: The Codex CLI `codex` is not on PATH. Install Codex, make sure "
        "`codex` runs in this shell, and run setup again.\n"
    )
    assert not machine.install.exists()


# KINETIS_MCP_DOCS_DIR values setup refuses among its prerequisites, and how it names them.
UNUSABLE_DIRECTORIES = [
    pytest.param("   ", "'   ', only whitespace, which names no install directory", id="spaces"),
    pytest.param(
        "/srv/kinetis\ndocs",
        "'/srv/kinetis\\ndocs', which holds a control character that no registered command "
        "can carry",
        id="a newline",
    ),
    pytest.param(
        "/srv/kinetis\tdocs",
        "'/srv/kinetis\\tdocs', which holds a control character that no registered command "
        "can carry",
        id="a tab",
    ),
]


@pytest.mark.parametrize("setting", [None, "~/kinetis"], ids=["the default", "a ~ setting"])
def test_setup_refuses_an_install_directory_a_home_with_a_newline_would_name(
    tmp_path: Path, wheelhouse_env: dict[str, str], setting: str | None
) -> None:
    # A HOME holding a newline (or any control character) names an install directory no
    # registration can carry whole, as KINETIS_MCP_DOCS_DIR holding one would.
    machine = machine_at(tmp_path, wheelhouse_env, {})
    home = tmp_path / "home\nnext"
    home.mkdir()
    machine.env["HOME"] = os.fspath(home)
    machine.env.pop("KINETIS_MCP_DOCS_DIR", None)
    if setting is not None:
        machine.env["KINETIS_MCP_DOCS_DIR"] = setting

    result = machine.setup()

    assert result.returncode == 1
    if setting is None:
        named = os.fspath(home / ".kinetis-mcp-docs")
        said = (
            f"The default install directory, {named!r}, holds a control character from HOME "
            "that no registered command can carry; set KINETIS_MCP_DOCS_DIR to an install "
            "directory without one."
        )
    else:
        named = os.fspath(home / "kinetis")
        said = (
            f"KINETIS_MCP_DOCS_DIR is '~/kinetis', which names {named!r}, and that holds a "
            "control character (from HOME, or the directory setup ran in) that no registered "
            "command can carry; set it to an absolute install directory without one."
        )
    assert result.stderr == f"kinetis-docs: {said} Nothing was written.\n"
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(("value", "said"), UNUSABLE_DIRECTORIES)
def test_setup_refuses_an_unusable_install_directory_setting_before_changing_anything(
    installed: Machine, value: str, said: str
) -> None:
    machine = installed
    machine.claude.clear_log()
    registered = machine.claude.registrations()
    home = sorted(path.name for path in machine.home.iterdir())
    machine.env["KINETIS_MCP_DOCS_DIR"] = value

    result = machine.setup()

    assert result.returncode == 1
    assert result.stderr == (
        f"kinetis-docs: KINETIS_MCP_DOCS_DIR is {said}; set it to the install directory, or "
        "unset it to use the default, ~/.kinetis-mcp-docs. Nothing was written.\n"
    )
    assert result.stdout == (
        "Checking prerequisites: the Claude Code CLI and its kinetis-docs registration, and "
        "Python's venv support\n"
    )
    assert sorted(path.name for path in machine.home.iterdir()) == home
    assert [call for call in machine.claude.calls() if call[1] != "get"] == []
    assert machine.claude.registrations() == registered


def _assert_refused_in_one_line(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("kinetis-docs: "), line
    for text in expected:
        assert text in line, line


def test_setup_refuses_an_envs_that_is_a_symlink_and_deletes_nothing_through_it(
    machine: Machine, tmp_path: Path
) -> None:
    virtualenvs = tmp_path / "home" / ".virtualenvs"
    for project in ("project-a", "project-b"):
        (virtualenvs / project / "bin").mkdir(parents=True)
    machine.install.mkdir(mode=0o755)
    (machine.install / ".kinetis-mcp-docs").write_bytes(MARKER)
    (machine.install / "envs").symlink_to(virtualenvs)

    result = machine.setup()

    _assert_refused_in_one_line(result, f"{machine.install / 'envs'} is a symlink")
    assert sorted(path.name for path in virtualenvs.iterdir()) == ["project-a", "project-b"]
    assert sorted(path.name for path in machine.install.iterdir()) == [".kinetis-mcp-docs", "envs"]
    assert machine.claude.calls() == []


@pytest.mark.parametrize("planted", ["dangling", "to-a-file"])
def test_setup_never_makes_or_opens_its_lock_file_through_a_planted_link(
    machine: Machine, tmp_path: Path, planted: str
) -> None:
    target = tmp_path / "outside" / "target"
    target.parent.mkdir()
    if planted == "to-a-file":
        target.write_text("theirs\n")
    machine.install.mkdir(mode=0o755)
    (machine.install / ".kinetis-mcp-docs").write_bytes(MARKER)
    (machine.install / ".update.lock").symlink_to(target)

    result = machine.setup()

    _assert_refused_in_one_line(result, f"{machine.install / '.update.lock'} is a symlink")
    if planted == "dangling":
        assert not target.exists()
    else:
        assert target.read_text() == "theirs\n"
    assert sorted(path.name for path in machine.install.iterdir()) == [
        ".kinetis-mcp-docs",
        ".update.lock",
    ]


@pytest.mark.parametrize(
    "state",
    [
        "current-is-a-directory",
        "envs-is-a-file",
        "lock-is-a-directory",
        "last-check-is-a-directory",
        "read-only",
    ],
)
def test_setup_over_an_install_in_an_odd_state_is_one_line_and_switches_nothing(
    installed: Machine, state: str
) -> None:
    machine = installed
    machine.claude.clear_log()
    install = machine.install
    serving = (install / "current").readlink()
    wrapper: Sequence[str] = ()
    expected = ""
    if state == "current-is-a-directory":
        (install / "current").unlink()
        (install / "current").mkdir()
        expected = f"{install / 'current'} is a directory"
    elif state == "envs-is-a-file":
        (install / "envs").rename(install.parent / "envs-aside")
        (install / "envs").write_text("not a directory\n")
        expected = f"{install / 'envs'} is a regular file"
    elif state == "lock-is-a-directory":
        (install / ".update.lock").unlink(missing_ok=True)
        (install / ".update.lock").mkdir()
        expected = f"{install / '.update.lock'} is a directory"
    elif state == "last-check-is-a-directory":
        (install / ".last-update-check").unlink()
        (install / ".last-update-check").mkdir()
        expected = f"{install / '.last-update-check'} is a directory"
    else:
        wrapper = read_only_or_skip(install)
        # Among the prerequisites, with the fix, rather than at the lock with none.
        expected = (
            f"Refusing to install into {install}: {install} cannot be written (it is on a "
            "read-only file system). Nothing was changed there; choose a writable location "
            "with KINETIS_MCP_DOCS_DIR, or fix the permissions, and run setup again."
        )
    entries = (
        sorted(path.name for path in (install / "envs").iterdir())
        if state not in {"envs-is-a-file"}
        else []
    )

    # A read-only mount is a namespace of the process's own.
    result = machine.run_process("setup", wrapper=wrapper) if wrapper else machine.setup()

    _assert_refused_in_one_line(result, expected)
    # Read, perhaps (the registration setup would replace), but never changed.
    assert [call for call in machine.claude.calls() if call[1] != "get"] == []
    if state != "current-is-a-directory":
        assert (install / "current").readlink() == serving
    if state != "envs-is-a-file":
        assert sorted(path.name for path in (install / "envs").iterdir()) == entries


def _modes(root: Path) -> dict[str, int]:
    """The mode of every directory and file under `root` (links are not followed)."""
    found = {os.fspath(root): stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            found[os.fspath(path)] = stat.S_IMODE(path.lstat().st_mode)
    return found


def test_setup_under_umask_0_leaves_nothing_other_users_can_write(machine: Machine) -> None:
    nested = machine.install / "deeper"
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(nested)

    result = machine.setup(umask=0)

    assert result.returncode == 0, result.stderr
    for directory in (machine.install, nested, nested / "envs", nested / "current"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755, directory
    writable = {
        path: mode for path, mode in _modes(nested).items() if mode & (stat.S_IWGRP | stat.S_IWOTH)
    }
    assert writable == {}


def test_setup_refuses_an_empty_directory_other_users_can_write_naming_the_fix(
    machine: Machine,
) -> None:
    machine.install.mkdir()
    machine.install.chmod(0o777)

    result = machine.setup()

    _assert_refused_in_one_line(
        result, "writable by other users (mode 0777)", f"`chmod -R go-w {machine.install}`"
    )
    assert list(machine.install.iterdir()) == []


@pytest.mark.parametrize("link", ["current", "previous"])
def test_setup_refuses_an_install_whose_environment_others_can_write_until_the_named_fix(
    installed: Machine, link: str
) -> None:
    machine = installed
    if link == "previous":
        assert machine.setup().returncode == 0
    install = machine.install
    serving = machine.current()
    environment = install / "envs" / (install / link).readlink().name
    # What an earlier version left under umask 000: the environment writable throughout.
    subprocess.run(["chmod", "-R", "go+w", os.fspath(environment)], check=True)
    machine.claude.clear_log()

    refused = machine.setup()

    _assert_refused_in_one_line(
        refused,
        f"{environment}, the environment {link} points at, is writable by other users",
        f"fix it with `chmod -R go-w {install}` and run setup again.",
    )
    assert machine.current() == serving
    assert machine.claude.calls() == []

    subprocess.run(["chmod", "-R", "go-w", os.fspath(install)], check=True)
    assert machine.setup().returncode == 0


def _compiles(install: Path) -> list[int]:
    """The byte-compiles running over an environment of `install`, by pid."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        script = any(part.endswith(b"/compile_env.py") for part in argv)
        if script and any(os.fsencode(install) in part for part in argv):
            found.append(int(entry.name))
    return found


@pytest.fixture
def frozen() -> Iterator[list[int]]:
    """Process groups a test stops: killed at teardown, whatever happened."""
    groups: list[int] = []
    yield groups
    for group in groups:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)


@pytest.mark.skipif(not PROC_AVAILABLE, reason="finds the byte-compile in /proc")
def test_a_sigkilled_setups_compile_never_leaves_a_stray_environment_behind_later_runs(
    installed: Machine, frozen: list[int]
) -> None:
    machine = installed
    killed = machine.start_setup()
    try:
        wait_for(lambda: bool(_compiles(machine.install)), "the background compile", 60)
    finally:
        compiles = _compiles(machine.install)
        for pid in compiles:
            # The compile is the leader of its group: all of it stops.
            frozen.append(os.getpgid(pid))
            os.killpg(os.getpgid(pid), signal.SIGSTOP)
        killed.kill()
        killed.wait(timeout=60)
    (leader,) = {os.getpgid(pid) for pid in compiles}
    compiled = Path(
        next(
            part.decode()
            for part in (Path("/proc") / str(leader) / "cmdline").read_bytes().split(b"\0")
            if part.endswith(b"/lib")
        )
    ).parent

    # Later runs switch away from it, whether the killed one had switched to it or not,
    # until it is neither current nor previous: one that may be pruned.
    for _ in range(2):
        assert machine.setup().returncode == 0
        if compiled.name not in {machine.current(), (machine.install / "previous").readlink().name}:
            break
    assert compiled.name not in {machine.current(), (machine.install / "previous").readlink().name}
    # Its compile still holds it: it was left in place, not removed under the compile.
    assert (compiled / "bin" / "python").exists()

    os.killpg(leader, signal.SIGCONT)
    wait_for(lambda: not _compiles(machine.install), "the compile to finish", 120)
    # What it left is a whole environment, never a directory of bytecode alone...
    assert (compiled / "pyvenv.cfg").is_file()
    # ...and the next run, with the compile gone, removes it.
    assert machine.setup().returncode == 0
    assert not compiled.exists()
    kept = {machine.current(), (machine.install / "previous").readlink().name}
    assert set(environments(machine.install)) == kept


def _register_by_hand(stub: StubClient, command: str, args: list[str]) -> None:
    """A `kinetis-docs` registration made before this setup, as the stub keeps it."""
    stub.state.write_text(
        json.dumps({"kinetis-docs": {"command": command, "args": args, "env": {}}})
    )


def test_setup_says_so_when_the_registration_it_replaces_ran_another_install_directory(
    machine: Machine, tmp_path: Path
) -> None:
    other = tmp_path / "other install"
    other.mkdir()
    _register_by_hand(machine.claude, os.fspath(other / "current" / "bin" / "python"), START)

    first = machine.setup()

    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[4] == (
        f"Claude Code's kinetis-docs ran the install in another directory, {other}; replacing "
        f"it. That directory stays: remove it with `KINETIS_MCP_DOCS_DIR='{other}' kinetis-docs "
        "uninstall`"
    )
    assert machine.claude.registrations()["kinetis-docs"]["command"] == os.fspath(
        machine.install / "current" / "bin" / "python"
    )
    # Replacing its own registration is no news.
    second = machine.setup()
    assert second.returncode == 0, second.stderr
    assert not [line for line in second.stdout.splitlines() if "replacing" in line]


def test_setup_says_so_when_the_registration_it_replaces_ran_another_command(
    machine: Machine,
) -> None:
    _register_by_hand(machine.codex, "docker", ["run", "-i", "--rm", "kinetis/mcp-docs"])

    result = machine.setup("codex")

    assert result.returncode == 0, result.stderr
    assert (
        "Codex's kinetis-docs ran another command, `docker run -i --rm kinetis/mcp-docs`; "
        "replacing it"
    ) in result.stdout.splitlines()


def test_setup_into_the_home_directory_says_the_default_install_directory_is_in_it(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    default = machine.home / ".kinetis-mcp-docs"
    default.mkdir()
    (default / ".kinetis-mcp-docs").write_bytes(MARKER)
    (machine.home / ".profile").write_text("export PATH\n")
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(machine.home)

    result = machine.setup()

    _assert_refused_in_one_line(
        result,
        f"Refusing to install into {machine.home}: it is your home directory, which holds the "
        f"default install directory, {default}",
        f"unset KINETIS_MCP_DOCS_DIR to use the default, {default}, or set it to a new directory",
    )
    assert "not a regular file" not in result.stderr
    assert sorted(path.name for path in machine.home.iterdir()) == [".kinetis-mcp-docs", ".profile"]


def test_the_installs_own_serve_http_without_the_extra_names_what_works_from_a_clone(
    installed: Machine,
) -> None:
    machine = installed

    # The install's environment carries no http extra: every update rebuilds it.
    result = machine.run_process("serve", "--http", program=machine.own_command)

    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line.startswith("kinetis-docs: serve --http needs the http extra, which this ")
    assert (
        "From a clone of kinetis-mcp-docs, install it into an environment of its own with "
        "`python3 -m venv .venv && .venv/bin/python -m pip install '.[http]'`, run in the "
        "clone, then run `.venv/bin/kinetis-docs serve --http` there."
    ) in line
    assert "pip install 'kinetis-mcp-docs[http]'" not in line


def test_setup_refuses_an_empty_home_directory_and_writes_nothing_there(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.env["KINETIS_MCP_DOCS_DIR"] = os.fspath(machine.home)
    assert list(machine.home.iterdir()) == []

    result = machine.setup()

    _assert_refused_in_one_line(
        result,
        f"Refusing to install into {machine.home}: it is your home directory; an install "
        "directory is a directory of its own",
        "unset KINETIS_MCP_DOCS_DIR to use the default",
    )
    assert list(machine.home.iterdir()) == []
    # A second try is refused as the first: nothing was claimed.
    assert machine.setup().returncode == 1
    assert list(machine.home.iterdir()) == []


def test_a_failed_verification_over_an_install_says_the_new_environment_stays_current(
    installed: Machine, refusing_port: int
) -> None:
    machine = installed
    registered = machine.claude.registrations()
    serving = machine.current()
    machine.env["HTTPS_PROXY"] = f"http://127.0.0.1:{refusing_port}"

    result = machine.setup()

    assert result.returncode == 1
    (kept,) = machine.temporary.iterdir()
    line = result.stderr.splitlines()[-1]
    assert line.startswith("kinetis-docs: Verification failed: resources/read of ")
    assert line.endswith(
        "and run setup again. The new environment stays current in "
        f"{machine.install}, the one before it kept as previous; no registration was changed."
    )
    assert f"(all of its stderr is in {kept})" in line
    assert machine.current() != serving
    assert (machine.install / "previous").readlink().name == serving
    assert machine.claude.registrations() == registered


def test_setup_says_an_install_directory_a_registration_ran_is_gone_rather_than_to_remove_it(
    machine: Machine, tmp_path: Path
) -> None:
    gone = tmp_path / "deleted by hand"
    _register_by_hand(machine.claude, os.fspath(gone / "current" / "bin" / "python"), START)

    result = machine.setup()

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[4] == (
        f"Claude Code's kinetis-docs ran the install in {gone}, which no longer exists; "
        "replacing it"
    )
    assert "uninstall`" not in result.stdout.splitlines()[4]


@pytest.mark.parametrize("kind", ["claude", "codex"])
def test_setup_says_it_replaces_an_http_registration_naming_its_url_never_a_header_value(
    machine: Machine, kind: str
) -> None:
    add_http_registration(machine, kind)

    result = machine.setup(*([] if kind == "claude" else ["codex"]))

    assert result.returncode == 0, result.stderr
    label = "Claude Code" if kind == "claude" else "Codex"
    assert (
        f"{label}'s kinetis-docs was an HTTP registration of {HTTP_URL} (headers: "
        "Authorization); replacing it"
    ) in result.stdout.splitlines()
    assert "s3cret" not in result.stdout + result.stderr
    stub = machine.claude if kind == "claude" else machine.codex
    entry = stub.registrations()["kinetis-docs"]
    assert [entry["command"], *entry["args"]] == machine.registered_argv()


def test_setup_refuses_while_a_local_scope_registration_for_home_hides_the_user_one(
    machine: Machine,
) -> None:
    # What the HTTP route's page suggests, run in the home directory: local scope.
    machine.claude.register_locally(
        machine.home,
        {"type": "http", "url": HTTP_URL, "headers": {"Authorization": "Bearer s3cret"}},
    )

    result = machine.setup()

    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    assert line == (
        f"kinetis-docs: Claude Code reports a local-scope kinetis-docs for {machine.home}, which "
        f"hides the user-scope one there: sessions started in {machine.home} run an HTTP "
        f"registration of {HTTP_URL} (headers: Authorization). Remove it with `claude mcp "
        f"remove kinetis-docs --scope local`, run in {machine.home}, then run setup again. "
        "Nothing was written."
    )
    assert not machine.install.exists()
    assert machine.claude.calls() == [["mcp", "get", "kinetis-docs"]]


def test_setup_run_in_a_project_with_a_registration_of_its_own_reads_back_the_user_one(
    machine: Machine, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    machine.claude.register_locally(project, {"command": "/opt/project/python", "args": []})

    result = machine.run("setup", cwd=project)

    assert result.returncode == 0, result.stderr
    assert set(machine.claude.directories()) == {os.path.realpath(machine.home)}
    entry = machine.claude.registrations()["kinetis-docs"]
    assert [entry["command"], *entry["args"]] == machine.registered_argv()


def _building(install: Path) -> bool:
    """Whether venv or pip is building an environment under `install` right now."""
    for pid in processes_mentioning(os.fspath(install / "envs")):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"pip" in argv:
            return True
    return False


@pytest.mark.skipif(not PROC_AVAILABLE, reason="waits for pip in /proc")
@pytest.mark.parametrize(
    ("sent", "status", "said"),
    [
        (signal.SIGINT, 130, "Interrupted"),
        # A service manager's stop, a closed terminal: once the process ended where it
        # stood, leaving the half-built install claimed and its pip running.
        (signal.SIGTERM, 143, "Stopped by SIGTERM"),
        (signal.SIGHUP, 129, "Stopped by SIGHUP"),
    ],
    ids=["ctrl-c", "sigterm", "sighup"],
)
def test_a_first_setup_stopped_by_a_signal_exits_with_its_status_leaving_nothing_installed(
    machine: Machine, sent: signal.Signals, status: int, said: str
) -> None:
    with machine.started("setup") as process:
        wait_for(lambda: _building(machine.install), "pip to build the environment", 120)
        process.send_signal(sent)
        stdout, stderr = process.communicate(timeout=120)

    assert process.returncode == status, stdout + stderr
    assert "Traceback" not in stderr
    assert "Aborted" not in stderr
    assert stderr.splitlines()[-1] == (
        f"kinetis-docs: {said}. Nothing was left installed: {machine.install} was removed again."
    )
    assert not machine.install.exists()
    assert processes_mentioning(os.fspath(machine.install)) == []
    assert [call for call in machine.claude.calls() if call[1] != "get"] == []


@pytest.mark.parametrize(("module", "code", "said"), SPAWN_ENTRY_RELEASES)
def test_setup_refuses_a_release_that_misbehaves_where_a_spawn_runs_before_switching_to_it(
    installed: Machine, planted_wheelhouse: PlantedWheelhouse, module: str, code: str, said: str
) -> None:
    machine = installed
    registered = machine.claude.registrations()
    serving = machine.current()
    machine.env |= wheelhouse_pip_env(planted_wheelhouse(module, code))

    result = machine.setup()

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    line = result.stderr.splitlines()[-1]
    assert line.startswith("kinetis-docs: The new environment's server failed its check: ")
    assert said in line
    assert line.endswith(
        f"The install in {machine.install} is as it was, and no registration was changed."
    )
    assert machine.current() == serving
    assert environments(machine.install) == [serving]
    assert machine.claude.registrations() == registered


def test_setup_again_replaces_an_install_whose_python_was_removed(installed: Machine) -> None:
    # A Python upgrade (Homebrew's, pyenv's, a distribution's) removes the interpreter the
    # environments were made from: their interpreter links dangle, and the registered
    # command cannot even start (docs/troubleshooting.md, "After a Python upgrade").
    environment = (installed.install / "current").resolve()
    (interpreter,) = [
        entry
        for entry in (environment / "bin").iterdir()
        if entry.is_symlink() and entry.readlink().is_absolute()
    ]
    interpreter.unlink()
    interpreter.symlink_to(installed.home / "removed-python" / "bin" / interpreter.name)
    with pytest.raises(FileNotFoundError):
        subprocess.run(installed.registered_argv(), stdin=subprocess.DEVNULL, check=False)

    again = installed.setup()

    assert again.returncode == 0, again.stderr
    assert installed.current() != environment.name
    assert (installed.install / "previous").readlink().name == environment.name
    assert assert_answers_four_messages(installed.registered_argv(), installed.env) == "1.0.1"


def test_setup_installs_whole_whatever_pip_options_the_shell_or_pip_conf_holds(
    machine: Machine, tmp_path: Path
) -> None:
    # A shell's settings for other installs: without dependencies (either spelling), a dry
    # run, a requirements file of the user's own; and a pip.conf with the same, and with
    # `user = true` (which pip refuses in a virtual environment). Any one of them kept would
    # fail this setup: nothing installed, no dependency, a package that is nowhere, or no
    # install at all. One setup for all, since each real one costs a few CPU-seconds.
    requirements = tmp_path / "mine.txt"
    requirements.write_text("not-a-package-anywhere\n")
    configuration = tmp_path / "pip.conf"
    configuration.write_text(
        "[global]\n"
        "no-index = true\n"
        f"find-links = {machine.env['PIP_FIND_LINKS']}\n"
        "user = true\n"
        "no-dependencies = true\n"
        "dry-run = true\n"
        "[install]\n"
        "no-deps = yes\n"
        f"requirement = {requirements}\n"
        f"editable = {tmp_path}\n"
    )
    machine.env.update(
        {
            "PIP_CONFIG_FILE": os.fspath(configuration),
            "PIP_NO_DEPS": "1",
            "PIP_no_dependencies": "1",
            "PIP_DRY_RUN": "1",
            "PIP_REQUIREMENT": os.fspath(requirements),
        }
    )
    del machine.env["PIP_NO_INDEX"], machine.env["PIP_FIND_LINKS"]  # the file's to say

    result = machine.setup()

    assert result.returncode == 0, result.stderr
    env = machine.install / "envs" / machine.current()
    assert {"kinetis-mcp-docs", "httpx", "click"} <= set(installed_distributions(env))
