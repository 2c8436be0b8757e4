"""Every command in a ```sh block of the README and docs/ runs as written, or says why it
cannot run here.

The commands are read from the pages themselves. Those that can run here are run, as
written, in the order a user would meet them, on a machine in miniature (`machine.py`): a
throwaway home holding the default install directory, the stub `claude` and `codex` first
on PATH, pip pointed at the session's wheelhouse, the documentation origin reached through
its proxy, and `python` and `kinetis-docs` on PATH from an environment where the package
is installed, as the server page asks. Each must exit 0. Every other command is listed in
`NOT_RUN` with the reason it cannot run here, or the test that runs it as written (the
README's install, run in a clone that then moves); a command added to a page and in
neither fails this test, and so does an entry no page holds any more.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.doc_commands import DOCS, SH_BLOCK, commands, pages
from tests.support.machine import Machine
from tests.support.wheelhouse import PROJECT_ROOT

OWN = "~/.kinetis-mcp-docs/current/bin/kinetis-docs"

_NOT_PUBLISHED = "the package is not on PyPI yet"
_SUITE = "the test suite itself: CI runs it (`.ci/run`)"
_BENCH = "the benchmarks, minutes long: `nox -s bench` runs them"
_FROM_CLONE = (
    "builds the clone from the package index: test_setup_from_source_e2e.py runs the session"
)
_README_INSTALL = (
    "the README's install, run as written by test_setup_from_source_e2e.py in a copy of this "
    "clone, which it then moves and deletes"
)
_CLONE = "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]'"
_SESSION = ".venv/bin/python -m nox -s setup_from_source"
_EXAMPLE_PATH = "an example path, not one that exists here"
_CURL = "tests/server/http/test_http_docs.py runs every curl example against a real route"
_FIXED_PORT = (
    "a server on a fixed port (8000, 8080) that runs until stopped: the HTTP tests run it on port 0"
)
NOT_RUN: dict[str, str] = {
    "python3 -m venv .venv && .venv/bin/pip install 'nox[uv]' && .venv/bin/nox": _SUITE,
    "PYENV_VERSION=3.11.7:3.10.13:3.12.1:3.13.0 .venv/bin/nox": _SUITE,
    ".venv/bin/nox -s tests-3.12 -- -k window": _SUITE,
    "python3 -m venv .venv && .venv/bin/python -m pip install '.[http]'": (
        "installs the http extra from the package index, which this machine's tests have "
        "not: the test suite's own environment has it"
    ),
    ".venv/bin/kinetis-docs serve --http": _FIXED_PORT,
    "MCP_BEARER_TOKEN=... .venv/bin/kinetis-docs serve --http --host 0.0.0.0 --port 8080 "
    "--workers 4": _FIXED_PORT,
    ".venv/bin/kinetis-docs serve --http --docs-dir ./docs": _FIXED_PORT,
    "KINETIS_DOCS_PAGES_DIR=/srv/docs MCP_BEARER_TOKEN=... uvicorn --factory "
    "kinetis_mcp_docs.server.http:create_app --host 0.0.0.0 --workers 4 "
    "--http kinetis_mcp_docs.server.http.uvicorn.connection:BoundedHttpToolsProtocol --ws none": (
        "a deployment's own directory and address: test_deploy.py runs the factory under uvicorn"
    ),
    f"{_CLONE} && {_SESSION}": _README_INSTALL,
    f"{_CLONE} && {_SESSION} -- codex": (
        "the README's install with `-- codex`: test_setup_from_source_e2e.py runs the session "
        "with `codex`, and the line without it as written"
    ),
    _CLONE: _FROM_CLONE,
    f"rm -rf .venv && {_CLONE} && {_SESSION}": _FROM_CLONE,
    _SESSION: _FROM_CLONE,
    f"{_SESSION} -- codex": _FROM_CLONE,
    f"{_SESSION} -- --docs-in-place": _FROM_CLONE,
    f"{_SESSION} -- --live": _FROM_CLONE,
    f"git pull && {_SESSION}": (
        "pulls from a remote this machine cannot reach; the session is run by "
        "test_setup_from_source_e2e.py"
    ),
    "python3 -m venv .venv": _FROM_CLONE,
    ".venv/bin/python -m pip install .": _FROM_CLONE,
    ".venv/bin/python -m pip wheel --wheel-dir build/wheelhouse .": _FROM_CLONE,
    "wheelhouse=$(.venv/bin/python -c 'import pathlib; "
    'print(pathlib.Path("build/wheelhouse").resolve().as_uri())\')': _FROM_CLONE,
    'PIP_FIND_LINKS="$wheelhouse" PIP_NO_INDEX=1 KINETIS_MCP_DOCS_PAGES_COPY="$PWD/docs" '
    ".venv/bin/kinetis-docs setup": _FROM_CLONE,
    ".venv/bin/nox -s bench": _BENCH,
    ".venv/bin/nox -s bench -- --quick": _BENCH,
    ".venv/bin/nox -s bench -- --only spawn": _BENCH,
    ".venv/bin/nox -s bench -- --only http_route,http_search": _BENCH,
    # As performance.md gives it, whole.
    ".venv/bin/nox -s bench -- --only http_hostile,http_rate_keys,http_stalled_bodies,http_supervisor_killed": _BENCH,  # noqa: E501
    ".venv/bin/nox -s bench -- --only http_floor": _BENCH,
    "pipx run --spec kinetis-mcp-docs kinetis-docs setup": _NOT_PUBLISHED,
    "pipx run --spec kinetis-mcp-docs kinetis-docs setup codex": _NOT_PUBLISHED,
    "PIP_INDEX_URL=https://pypi.example.internal/simple pipx run --spec kinetis-mcp-docs "
    "kinetis-docs setup": _NOT_PUBLISHED,
    "KINETIS_MCP_DOCS_DIR=/opt/kd /opt/kd/current/bin/kinetis-docs status": _EXAMPLE_PATH,
    "KINETIS_MCP_DOCS_DIR=DIR DIR/current/bin/kinetis-docs status": _EXAMPLE_PATH,
    "sudo apt install python3-venv": "installs a system package, as root",
}


def _documented() -> dict[str, list[str]]:
    """Each command of the README and docs/, and the pages that give it."""
    where: dict[str, list[str]] = {}
    for page in pages():
        for command in commands(page.read_text(encoding="utf-8")):
            where.setdefault(command, []).append(page.name)
    return where


def _shown(prefix: str) -> list[str]:
    """The documented commands that start with `prefix`, in the order of the pages."""
    return [command for command in _documented() if command.startswith(prefix)]


def _the(command: str) -> str:
    """`command` as a page gives it: the test fails if no page does any more."""
    assert command in _documented(), f"no page gives `{command}` any more"
    return command


# What the scenario runs, by step, each step one bash session (a `cd` lasts for its step).
STEPS: list[tuple[str, list[str]]] = [
    (
        "setup again over the install, with local pages",
        [f"KINETIS_MCP_DOCS_PAGES=~/src/kinetis/docs {OWN} setup"],
    ),
    (
        "the HTTP route, registered beside the install under a name of its own",
        [
            (
                "claude mcp add --scope user --transport http kinetis-docs-http "
                "https://docs.example.com/api/mcp --header "
                '"Authorization: Bearer $MCP_BEARER_TOKEN"'
            ),
            (
                "codex mcp add kinetis-docs-http --url https://docs.example.com/api/mcp "
                "--bearer-token-env-var MCP_BEARER_TOKEN"
            ),
        ],
    ),
    ("status", [f"{OWN} status"]),
    ("after a Python upgrade", ["ls -l ~/.kinetis-mcp-docs/current/bin/python3.*"]),
    (
        "the clients' read-back",
        ["claude mcp get kinetis-docs", "codex mcp get kinetis-docs --json"],
    ),
    ("the server by hand", ["*printf-server"]),
    (
        "a local directory",
        [
            "kinetis-docs serve --docs-dir ./docs",
            "python -m kinetis_mcp_docs.server --docs-dir ./docs",
        ],
    ),
    ("the registered command by hand", ["*printf-start"]),
    ("forcing an update", [f"{OWN} update"]),
    (
        "the next start checks",
        ['rm "${KINETIS_MCP_DOCS_DIR:-$HOME/.kinetis-mcp-docs}/.last-update-check"'],
    ),
    (
        "rolling back",
        [
            'cd "${KINETIS_MCP_DOCS_DIR:-$HOME/.kinetis-mcp-docs}"',
            "ls -l current previous",
            'ln -sfn "$(readlink previous)" current',
            "date +%s > .last-update-check",
        ],
    ),
    # The README's: Claude Code's registration goes, and the directory stays for Codex.
    ("uninstalling with the install's own command", [f"{OWN} uninstall"]),
    (
        "setup again, for the registration the hand removal below removes",
        [f"KINETIS_MCP_DOCS_PAGES=~/src/kinetis/docs {OWN} setup"],
    ),
    ("writable by others", ['chmod -R go-w "${KINETIS_MCP_DOCS_DIR:-$HOME/.kinetis-mcp-docs}"']),
    ("an entry setup did not write", ["mv ~/.kinetis-mcp-docs/current ~/kinetis-current-aside"]),
    (
        "uninstalling by hand",
        [
            "claude mcp remove kinetis-docs --scope user",
            "codex mcp remove kinetis-docs",
            'cat "${KINETIS_MCP_DOCS_DIR:-$HOME/.kinetis-mcp-docs}/.kinetis-mcp-docs"',
            'rm -rf "${KINETIS_MCP_DOCS_DIR:-$HOME/.kinetis-mcp-docs}"',
        ],
    ),
]


def _step_commands(names: list[str]) -> list[str]:
    """The step's commands as the pages give them (`*printf-...`: the printf pipelines)."""
    resolved = []
    for name in names:
        if name == "*printf-server":
            (pipeline,) = [c for c in _shown("printf") if c.endswith("kinetis_mcp_docs.server")]
            resolved.append(pipeline)
        elif name == "*printf-start":
            (pipeline,) = [c for c in _shown("printf") if c.endswith("installer.start")]
            resolved.append(pipeline)
        else:
            resolved.append(_the(name))
    return resolved


def test_every_command_in_docs_is_run_here_or_says_why_not() -> None:
    documented = set(_documented())
    run = {command for _, names in STEPS for command in _step_commands(names)}
    covered = (
        run | set(NOT_RUN) | {command for command in documented if command.startswith("curl ")}
    )

    assert sorted(documented - covered) == [], "a command in docs/ that nothing runs"
    assert sorted(set(NOT_RUN) - documented) == [], "NOT_RUN names a command no page gives"


def test_every_sh_block_in_docs_is_valid_bash() -> None:
    for page in pages():
        for block in SH_BLOCK.findall(page.read_text(encoding="utf-8")):
            done = subprocess.run(
                ["bash", "-n"], input=block, text=True, capture_output=True, check=False
            )
            assert done.returncode == 0, f"docs/{page.name}: {done.stderr}\n{block}"


@pytest.fixture
def home_machine(machine: Machine, tmp_path: Path) -> Machine:
    """The machine with the default install directory, set up for both clients, pages from
    the origin, and `python` and `kinetis-docs` on PATH from an installed environment."""
    del machine.env["KINETIS_MCP_DOCS_DIR"]
    machine.install = machine.home / ".kinetis-mcp-docs"
    tools = tmp_path / "installed-bin"
    tools.mkdir()
    # Scripts, not links: a link out of the environment's bin/ would not find its pyvenv.cfg.
    for name in ("python", "kinetis-docs"):
        program = Path(sys.executable).with_name(name)
        (tools / name).write_text(f'#!/bin/sh\nexec "{program}" "$@"\n', encoding="utf-8")
        (tools / name).chmod(0o755)
    machine.env["PATH"] = f"{tools}{os.pathsep}{machine.env['PATH']}"
    for client in ([], ["codex"]):
        result = machine.setup(*client)
        assert result.returncode == 0, result.stdout + result.stderr
    shutil.copytree(DOCS, machine.home / "src" / "kinetis" / "docs")
    # The HTTP route's page registers it with the token of the shell it runs in.
    machine.env["MCP_BEARER_TOKEN"] = "s3cret"
    return machine


def _run(machine: Machine, script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        env=machine.env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_commands_of_the_pages_run_as_written_in_the_order_a_user_meets_them(
    home_machine: Machine,
) -> None:
    machine = home_machine
    for step, names in STEPS:
        script = "\n".join(_step_commands(names))
        # The server page's commands name ./docs: run in a checkout.
        cwd = PROJECT_ROOT if step == "a local directory" else machine.home
        done = _run(machine, script, cwd)
        assert done.returncode == 0, f"{step}: {script}\n{done.stdout}\n{done.stderr}"
        if step in {"the server by hand", "the registered command by hand"}:
            frames = [json.loads(line) for line in done.stdout.splitlines()]
            assert frames, f"{step}: no answer\n{done.stderr}"
            assert all("result" in frame for frame in frames), frames
        if step == "status":
            assert done.stdout.splitlines()[-1].startswith("No problems"), done.stdout
        if step.startswith("the HTTP route"):
            # The token the route reads, where the page once sent `$TOKEN`, set by no one.
            route = machine.claude.registrations()["kinetis-docs-http"]
            assert route["headers"] == {"Authorization": "Bearer s3cret"}
            route = machine.codex.registrations()["kinetis-docs-http"]
            assert route["bearer_token_env_var"] == "MCP_BEARER_TOKEN"

    assert not machine.install.exists()
    assert "kinetis-docs" not in machine.claude.registrations()
    assert "kinetis-docs" not in machine.codex.registrations()
