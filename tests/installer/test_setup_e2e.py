"""`kinetis-docs setup [codex]` end to end: real processes, a local wheelhouse, stub CLIs.

Setup runs as a user would run it, with a throwaway HOME, recording `claude`/`codex` stubs
first on PATH, pip pointed at the session's wheelhouse through its own PIP_* variables, and
the documentation origin reached through HTTPS_PROXY and SSL_CERT_FILE.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import StubClient, install_stub
from tests.support.origin import DocsOrigin
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess

KINETIS_DOCS = Path(sys.executable).with_name("kinetis-docs")
MARKER = b"kinetis-mcp-docs install directory\n"
START = ["-I", "-m", "kinetis_mcp_docs.installer.start"]
SETUP_TIMEOUT = 180.0


@dataclass
class Machine:
    """A user's machine in miniature: a home, an install directory, stubs, an environment."""

    home: Path
    install: Path
    claude: StubClient
    codex: StubClient
    env: dict[str, str]

    def setup(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [os.fspath(KINETIS_DOCS), "setup", *arguments],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT,
            check=False,
            cwd=self.home,
        )

    def registered_argv(self) -> list[str]:
        return [os.fspath(self.install / "current" / "bin" / "python"), *START]


def _machine(tmp_path: Path, wheelhouse_env: dict[str, str], origin_env: dict[str, str]) -> Machine:
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    claude = install_stub("claude", bin_dir, tmp_path / "stub-state")
    codex = install_stub("codex", bin_dir, tmp_path / "stub-state")
    install = tmp_path / "install"
    env = {
        # Only what a login shell would have, so the test controls every variable that
        # reaches pip, the server and the Codex registration.
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.fspath(home),
        "LANG": "C.UTF-8",
        "KINETIS_MCP_DOCS_DIR": os.fspath(install),
        **wheelhouse_env,
        **{
            k: v
            for k, v in origin_env.items()
            if k in {"HTTPS_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"}
        },
    }
    return Machine(home, install, claude, codex, env)


@pytest.fixture
def machine(
    tmp_path: Path,
    wheelhouse_env: dict[str, str],
    docs_origin: DocsOrigin,
    origin_env: dict[str, str],
) -> Machine:
    docs_origin.serve_docs()
    return _machine(tmp_path, wheelhouse_env, origin_env)


def four_messages(argv: list[str], env: dict[str, str]) -> list[dict[str, Any]]:
    """What a client would see: send the four messages, return every frame the server wrote."""
    server = ServerProcess(argv, env)
    try:
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
        )
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 2, "method": "resources/list"})
        server.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "resources/read",
                "params": {"uri": "kinetis://docs/index"},
            }
        )
        frames = [server.receive() for _ in range(3)]
        assert server.finish() == 0, server.stderr
        return frames + server.remaining_frames()
    finally:
        server.kill()


def assert_answers_four_messages(argv: list[str], env: dict[str, str]) -> str:
    frames = four_messages(argv, env)
    assert [frame.get("id") for frame in frames] == [1, 2, 3]
    assert "serverInfo" in frames[0]["result"]
    assert frames[1]["result"]["resources"]
    assert frames[2]["result"]["contents"][0]["uri"] == "kinetis://docs/index"
    version: str = frames[0]["result"]["serverInfo"]["version"]
    return version


def environments(install: Path) -> list[str]:
    return sorted(path.name for path in (install / "envs").iterdir())


def test_setup_installs_verifies_and_registers_with_claude_code_and_a_second_run_reinstalls(
    machine: Machine,
) -> None:
    first = machine.setup()

    assert first.returncode == 0, first.stderr
    argv = machine.registered_argv()
    assert machine.claude.calls() == [
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
    assert "claude mcp get kinetis-docs" in lines[-1]
    assert "1.0.1" in lines[-1]
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
    second = machine.setup()

    assert second.returncode == 0, second.stderr
    assert machine.claude.calls() == [
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


def test_setup_codex_registers_the_shells_proxy_certificate_and_pip_settings_with_the_command(
    machine: Machine,
) -> None:
    machine.env["NO_PROXY"] = "example.invalid"
    machine.env["UNRELATED_SETTING"] = "not passed"

    result = machine.setup("codex")

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
        ["mcp", "remove", "kinetis-docs"],
        ["mcp", "add", *options, "kinetis-docs", "--", *argv],
        ["mcp", "get", "kinetis-docs", "--json"],
    ]
    assert machine.claude.calls() == []
    assert "codex mcp get kinetis-docs" in result.stdout.splitlines()[-1]
    # Started the way Codex starts it — its short list of variables plus the registered
    # ones — the server still reaches the origin through the proxy and trusts its CA.
    entry = machine.codex.registrations()["kinetis-docs"]
    assert "UNRELATED_SETTING" not in entry["launch_env"]
    assert assert_answers_four_messages(argv, entry["launch_env"]) == "1.0.1"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_a_failing_verification_registers_nothing_and_leaves_no_install_directory(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = _machine(
        tmp_path, wheelhouse_env, {"HTTPS_PROXY": f"http://127.0.0.1:{_closed_port()}"}
    )

    result = machine.setup()

    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert (
        "kinetis-docs: Verification failed: resources/read of kinetis://docs/index was "
        'answered with error -32603: Could not read "kinetis://docs/index".\n'
        "The server's stderr:\n"
    ) in result.stderr
    # The server's own account of the failure follows.
    assert "Connection refused" in result.stderr
    assert machine.claude.calls() == []
    assert not machine.install.exists()


def test_setup_refuses_a_non_empty_directory_without_the_marker_and_leaves_it_untouched(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = _machine(tmp_path, wheelhouse_env, {})
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
    machine = _machine(tmp_path, wheelhouse_env, {})
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
    machine = _machine(tmp_path, wheelhouse_env, {})

    for arguments in (["claude"], ["codex", "extra"], ["--scope=user"]):
        result = machine.setup(*arguments)
        assert result.returncode == 2, arguments
        assert "Usage:" in result.stderr
    assert not machine.install.exists()
    assert machine.claude.calls() == machine.codex.calls() == []


def test_setup_without_the_clients_cli_on_path_says_so_before_writing_anything(
    tmp_path: Path, wheelhouse_env: dict[str, str]
) -> None:
    machine = _machine(tmp_path, wheelhouse_env, {})
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
