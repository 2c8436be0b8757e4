"""A user's machine in miniature, for end-to-end tests of the `kinetis-docs` commands.

A throwaway HOME and install directory, recording `claude`/`codex` stubs first on PATH,
pip pointed at the session's wheelhouse through its own PIP_* variables, TMPDIR inside the
test's directory, and — when given — the documentation origin reached through HTTPS_PROXY
and SSL_CERT_FILE.

A command runs in this process (`run`, `setup`): the CLI's click command, with the machine's
environment and home directory, its output and exit status as a user sees them
(`tests.support.in_process`), the children it starts real processes on the stub CLIs.
Where the process itself is what a test is about (a signal, a lock held across processes, a
read-only mount, a smoke scenario on each Python) or the program is another (the install's
own `kinetis-docs`, an earlier release's), it runs as a process of its own (`run_process`,
`started`, `start_setup`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.clients import StubClient, install_stub, stub_at
from tests.support.in_process import run_cli
from tests.support.processes import sigint_restored
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess

KINETIS_DOCS = Path(sys.executable).with_name("kinetis-docs")
MARKER = b"kinetis-mcp-docs install directory\n"
START = ["-I", "-m", "kinetis_mcp_docs.installer.start"]
COMMAND_TIMEOUT = 180.0


@dataclass
class Machine:
    """A home, an install directory, stubs, and the environment every command runs with."""

    home: Path
    install: Path
    claude: StubClient
    codex: StubClient
    env: dict[str, str]

    @property
    def temporary(self) -> Path:
        """TMPDIR: where a failed check keeps the server's stderr."""
        return Path(self.env["TMPDIR"])

    def run(
        self,
        *arguments: str,
        umask: int | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run `kinetis-docs ARGUMENTS` (this checkout's) in this process, with `env` (the
        machine's) from `cwd` (the home directory); `umask` is the shell's (None: this
        process's)."""
        return run_cli(
            arguments,
            env=dict(self.env if env is None else env),
            cwd=self.home if cwd is None else cwd,
            timeout=COMMAND_TIMEOUT,
            umask=umask,
            program=KINETIS_DOCS,
        )

    def run_process(
        self,
        *arguments: str,
        wrapper: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        program: Path = KINETIS_DOCS,
    ) -> subprocess.CompletedProcess[str]:
        """Run `kinetis-docs ARGUMENTS` as a process of its own, as `run` runs it in this
        one; `wrapper` runs it, `program` is the `kinetis-docs` run (this checkout's)."""
        return subprocess.run(
            [*wrapper, os.fspath(program), *arguments],
            env=dict(self.env if env is None else env),
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
            cwd=self.home if cwd is None else cwd,
        )

    def setup(self, *arguments: str, umask: int | None = None) -> subprocess.CompletedProcess[str]:
        """Run setup in this process; `umask` is the shell's (None: this process's)."""
        return self.run("setup", *arguments, umask=umask)

    @contextmanager
    def started(self, *arguments: str) -> Iterator[subprocess.Popen[str]]:
        """`kinetis-docs ARGUMENTS` running, its output piped as text; killed if the block fails.

        SIGINT has its default action in it, so a test can Ctrl-C it whatever this process
        ignores. Reap it with `communicate` after the block.
        """
        process = subprocess.Popen(
            sigint_restored([os.fspath(KINETIS_DOCS), *arguments]),
            env=self.env,
            cwd=self.home,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            yield process
        except BaseException:
            process.kill()
            process.communicate()
            raise

    def start_setup(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [os.fspath(KINETIS_DOCS), "setup"],
            env=self.env,
            cwd=self.home,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def current(self) -> str:
        return (self.install / "current").readlink().name

    def registered_argv(self, *server_options: str) -> list[str]:
        return [os.fspath(self.install / "current" / "bin" / "python"), *START, *server_options]

    @property
    def own_command(self) -> Path:
        """The install's own `kinetis-docs`, which setup's last line names."""
        return self.install / "current" / "bin" / "kinetis-docs"


def machine_at(
    tmp_path: Path, wheelhouse_env: Mapping[str, str], origin_env: Mapping[str, str]
) -> Machine:
    """A machine under `tmp_path`; `origin_env` (may be empty) reaches the docs origin."""
    (tmp_path / "home").mkdir()
    for kind in ("claude", "codex"):
        install_stub(kind, tmp_path / "bin", tmp_path / "stub-state")
    (tmp_path / "tmp").mkdir()
    return machine_in(tmp_path, wheelhouse_env, origin_env)


def machine_in(
    root: Path, wheelhouse_env: Mapping[str, str], origin_env: Mapping[str, str]
) -> Machine:
    """The machine `machine_at(root, ...)` made, its commands run with `origin_env`."""
    home = root / "home"
    bin_dir = root / "bin"
    claude = stub_at("claude", bin_dir, root / "stub-state")
    codex = stub_at("codex", bin_dir, root / "stub-state")
    install = root / "install"
    temporary = root / "tmp"
    env = {
        # Only what a login shell would have, so the test controls every variable that
        # reaches pip, the server and the Codex registration.
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.fspath(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.fspath(temporary),
        "KINETIS_MCP_DOCS_DIR": os.fspath(install),
        **wheelhouse_env,
        **{
            k: v
            for k, v in origin_env.items()
            if k in {"HTTPS_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"}
        },
    }
    return Machine(home, install, claude, codex, env)


def four_messages(argv: list[str], env: Mapping[str, str]) -> list[dict[str, Any]]:
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


def assert_answers_four_messages(argv: list[str], env: Mapping[str, str]) -> str:
    """The server answers the four messages; its version."""
    frames = four_messages(argv, env)
    assert [frame.get("id") for frame in frames] == [1, 2, 3]
    assert "serverInfo" in frames[0]["result"]
    assert frames[1]["result"]["resources"]
    assert frames[2]["result"]["contents"][0]["uri"] == "kinetis://docs/index"
    version: str = frames[0]["result"]["serverInfo"]["version"]
    return version


def index_page(argv: list[str], env: Mapping[str, str]) -> str:
    """The text of kinetis://docs/index as the server started from `argv` serves it."""
    frames = four_messages(argv, env)
    text: str = frames[2]["result"]["contents"][0]["text"]
    return text


def environments(install: Path) -> list[str]:
    return sorted(path.name for path in (install / "envs").iterdir())


HTTP_URL = "https://docs.example.com/api/mcp"


def add_http_registration(machine: Machine, kind: str, name: str = "kinetis-docs") -> None:
    """`name` registered as the HTTP route's page shows: a URL and a bearer header."""
    if kind == "claude":
        stub = machine.claude
        add = ["--transport", "http", "--scope", "user", name, HTTP_URL]
        add += ["--header", "Authorization: Bearer s3cret"]
    else:
        stub = machine.codex
        add = [name, "--url", HTTP_URL, "--bearer-token-env-var", "MCP_BEARER_TOKEN"]
    subprocess.run(
        [stub.path, "mcp", "add", *add],
        env=machine.env,
        cwd=machine.home,
        check=True,
        capture_output=True,
        timeout=60,
    )
    stub.clear_log()


def python_removed(environment: Path) -> str:
    """What a Python upgrade that removes the interpreter `environment` was made from
    leaves: its `bin/python` links to nothing. Returns where it linked to now."""
    python = environment / "bin" / "python"
    gone = environment.parent.parent.parent / "removed-python" / "bin" / "python3.9"
    python.unlink()
    python.symlink_to(gone)
    return os.fspath(gone)


def read_only(path: Path) -> list[str] | None:
    """A command prefix that runs a program with `path` (a directory or a file) read-only,
    whoever runs it (root included, which file modes would not stop), or None here."""
    prefix = [
        "unshare",
        "--map-root-user",
        "--mount",
        "sh",
        "-c",
        'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"',
        os.fspath(path),
    ]
    # A file is opened for appending nothing: where the mount fails, it is left unchanged.
    probe = 'touch "$0/.write-test"' if path.is_dir() else ': >> "$0"'
    try:
        attempt = subprocess.run(
            [*prefix, "sh", "-c", probe, os.fspath(path)],
            capture_output=True,
            timeout=30,
            check=False,
        )
    except OSError:
        return None
    if attempt.returncode == 0 or (path / ".write-test").exists():
        return None
    return prefix if b"Read-only file system" in attempt.stderr else None


def read_only_or_skip(path: Path) -> list[str]:
    """`read_only(path)`, or the test skipped where no mount namespace is allowed."""
    prefix = read_only(path)
    if prefix is None:
        pytest.skip("no private mount namespace here to make a path read-only")
    return prefix
