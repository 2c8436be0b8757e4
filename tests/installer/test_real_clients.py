"""Setup against the real Claude Code and Codex CLIs (the optional `nox -s clients`).

Skipped unless `KINETIS_TEST_CLIENTS_BIN` names a directory holding the real `claude` and
`codex` executables, which the `clients` session installs from npm into a temporary
directory. Each client gets a throwaway HOME (and CODEX_HOME), so nothing of the machine's
own configuration is read or changed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.machine import read_only_or_skip
from tests.support.origin import DocsOrigin

CLIENTS_BIN = os.environ.get("KINETIS_TEST_CLIENTS_BIN", "")
KINETIS_DOCS = Path(sys.executable).with_name("kinetis-docs")
TIMEOUT = 300.0

pytestmark = pytest.mark.skipif(
    not CLIENTS_BIN, reason="the real client CLIs run only in `nox -s clients`"
)


def _environment(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    base = {
        "PATH": f"{CLIENTS_BIN}{os.pathsep}{os.environ['PATH']}",
        "HOME": os.fspath(home),
        "CODEX_HOME": os.fspath(home / ".codex"),
        "LANG": "C.UTF-8",
        "KINETIS_MCP_DOCS_DIR": os.fspath(tmp_path / "install"),
        # Keep Claude Code from phoning home through the test proxy.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        **wheelhouse_env,
    }
    docs_origin.serve_docs()
    return docs_origin.environ(base)


def _run(
    argv: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `argv` from `cwd`, by default the throwaway home, as a user's shell would."""
    return subprocess.run(
        argv,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=cwd or env["HOME"],
    )


def test_setup_registers_with_the_real_claude_code_which_reports_it_connected(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)

    result = _run([os.fspath(KINETIS_DOCS), "setup"], env)

    assert result.returncode == 0, result.stdout + result.stderr
    shown = _run(["claude", "mcp", "get", "kinetis-docs"], env)
    assert shown.returncode == 0, shown.stderr
    assert "Connected" in shown.stdout
    python = tmp_path / "install" / "current" / "bin" / "python"
    assert f"Command: {python}" in shown.stdout
    assert "Args: -I -m kinetis_mcp_docs.installer.start" in shown.stdout


def test_setup_again_names_the_variables_added_by_hand_to_the_real_claude_codes_entry(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    assert _run([os.fspath(KINETIS_DOCS), "setup"], env).returncode == 0
    # As a user adds them: in the entry's "env" in ~/.claude.json.
    settings = Path(env["HOME"]) / ".claude.json"
    document = json.loads(settings.read_text())
    document["mcpServers"]["kinetis-docs"]["env"] = {"LOG_LEVEL": "debug", "GH_TOKEN": "s3cret"}
    settings.write_text(json.dumps(document))

    again = _run([os.fspath(KINETIS_DOCS), "setup"], env)

    assert again.returncode == 0, again.stdout + again.stderr
    assert (
        "Claude Code's kinetis-docs has settings added by hand that re-registering drops: "
        '"env": {"GH_TOKEN": ...} (value not shown); "env": {"LOG_LEVEL": "debug"}. '
        "Add them back to its entry in ~/.claude.json"
    ) in again.stdout + again.stderr
    assert "s3cret" not in again.stdout + again.stderr
    shown = _run(["claude", "mcp", "get", "kinetis-docs"], env)
    assert "LOG_LEVEL" not in shown.stdout


def test_setup_codex_registers_with_the_real_codex_which_shows_the_registered_command(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)

    result = _run([os.fspath(KINETIS_DOCS), "setup", "codex"], env)

    assert result.returncode == 0, result.stdout + result.stderr
    shown = _run(["codex", "mcp", "get", "kinetis-docs", "--json"], env)
    assert shown.returncode == 0, shown.stderr
    entry = json.loads(shown.stdout)
    launch = entry.get("transport", entry)
    assert launch["command"] == os.fspath(tmp_path / "install" / "current" / "bin" / "python")
    assert launch["args"] == ["-I", "-m", "kinetis_mcp_docs.installer.start"]
    assert launch["env"]["HTTPS_PROXY"] == env["HTTPS_PROXY"]
    assert launch["env"]["SSL_CERT_FILE"] == env["SSL_CERT_FILE"]


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_status_then_uninstall_with_the_real_client_leave_nothing_registered_or_installed(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin, client: str
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    choice = [] if client == "claude" else ["codex"]
    installed = _run([os.fspath(KINETIS_DOCS), "setup", *choice], env)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    # status reads the registration back through the real CLI and reads a page through it.
    status = _run([os.fspath(KINETIS_DOCS), "status", "--json"], env)
    assert status.returncode == 0, status.stdout + status.stderr
    report = json.loads(status.stdout)
    assert report["ok"] is True, report["problems"]
    assert report["install"]["path"] == os.fspath(tmp_path / "install")
    assert report["install"]["state"] == "installed"
    (registered,) = [entry for entry in report["clients"] if entry["cli"] and entry["registered"]]
    assert registered["runs_this_install"] is True
    assert registered["page_read"]["ok"] is True, registered["page_read"]

    removed = _run([os.fspath(KINETIS_DOCS), "uninstall", *choice], env)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not (tmp_path / "install").exists()
    shown = _run([client, "mcp", "get", "kinetis-docs"], env)
    assert shown.returncode != 0, shown.stdout

    again = _run([os.fspath(KINETIS_DOCS), "uninstall", *choice], env)
    assert again.returncode == 0, again.stdout + again.stderr


def test_uninstall_keeps_the_install_when_the_real_claude_code_cannot_write_its_config(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    assert _run([os.fspath(KINETIS_DOCS), "setup"], env).returncode == 0
    settings = Path(env["HOME"]) / ".claude.json"
    written = settings.read_text()
    install = tmp_path / "install"
    entries = sorted(path.name for path in install.iterdir())
    # Claude Code 2.1 then says it removed the entry and exits 0, having written nothing.
    wrapper = read_only_or_skip(settings)

    removed = _run([*wrapper, os.fspath(KINETIS_DOCS), "uninstall"], env)

    assert removed.returncode == 1, removed.stdout + removed.stderr
    assert removed.stdout == ""
    assert removed.stderr == (
        "kinetis-docs: Claude Code still reports its kinetis-docs registration after `claude "
        "mcp remove kinetis-docs --scope user` succeeded: it did not write ~/.claude.json, "
        "where it keeps it. Nothing was changed; make that file and its directory writable "
        "(fix their permissions, or remount them read-write), then run uninstall again.\n"
    )
    assert json.loads(settings.read_text())["mcpServers"] == json.loads(written)["mcpServers"]
    assert sorted(path.name for path in install.iterdir()) == entries
    shown = _run(["claude", "mcp", "get", "kinetis-docs"], env)
    assert "Connected" in shown.stdout, shown.stdout + shown.stderr


@pytest.mark.parametrize("spaces", [" ", "  "])
def test_the_real_claude_codes_read_back_of_paths_with_spaces_satisfies_setup_and_status(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin, spaces: str
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    install = tmp_path / f"the{spaces}install"
    pages = tmp_path / f"the{spaces}pages"
    pages.mkdir()
    (pages / "index.md").write_text("# Spaced out\n")
    env |= {"KINETIS_MCP_DOCS_DIR": os.fspath(install), "KINETIS_MCP_DOCS_PAGES": os.fspath(pages)}

    installed = _run([os.fspath(KINETIS_DOCS), "setup"], env)

    assert installed.returncode == 0, installed.stdout + installed.stderr
    # Claude Code prints the arguments joined by spaces: the path's own spaces included.
    shown = _run(["claude", "mcp", "get", "kinetis-docs"], env)
    assert f"--docs-dir {pages}" in shown.stdout
    status = _run([os.fspath(KINETIS_DOCS), "status", "--json"], env)
    report = json.loads(status.stdout)
    assert status.returncode == 0, report["problems"]
    claude = report["clients"][0]
    assert claude["command"] == [
        os.fspath(install / "current" / "bin" / "python"),
        "-I",
        "-m",
        "kinetis_mcp_docs.installer.start",
        "--docs-dir",
        os.fspath(pages),
    ]
    assert claude["page_read"]["ok"] is True


URL = "https://docs.example.com/api/mcp"


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_an_http_registration_in_the_real_client_is_shown_by_status_and_replaced_by_setup(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin, client: str
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    if client == "claude":
        add = ["claude", "mcp", "add", "--transport", "http", "--scope", "user", "kinetis-docs"]
        add += [URL, "--header", "Authorization: Bearer s3cret"]
    else:
        add = ["codex", "mcp", "add", "kinetis-docs", "--url", URL]
        add += ["--bearer-token-env-var", "KINETIS_TOKEN"]
    assert _run(add, env).returncode == 0
    label = "Claude Code" if client == "claude" else "Codex"

    status = _run([os.fspath(KINETIS_DOCS), "status"], env)

    assert (
        f"{label}: kinetis-docs is an HTTP registration of {URL} (headers: Authorization), "
        "not this install"
    ) in status.stdout.splitlines()
    assert "s3cret" not in status.stdout + status.stderr

    installed = _run(
        [os.fspath(KINETIS_DOCS), "setup", *([] if client == "claude" else ["codex"])], env
    )

    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (
        f"{label}'s kinetis-docs was an HTTP registration of {URL} (headers: Authorization); "
        "replacing it"
    ) in installed.stdout.splitlines()
    assert "s3cret" not in installed.stdout + installed.stderr


def test_a_local_scope_registration_in_the_real_claude_code_is_refused_by_setup_where_it_hides(
    tmp_path: Path, wheelhouse_env: dict[str, str], docs_origin: DocsOrigin
) -> None:
    env = _environment(tmp_path, wheelhouse_env, docs_origin)
    home = Path(env["HOME"])
    project = tmp_path / "project"
    project.mkdir()
    # `claude mcp add` with no --scope is local: to the directory it runs in.
    local = ["claude", "mcp", "add", "--transport", "http", "kinetis-docs", URL]
    assert _run(local, env, cwd=project).returncode == 0

    # In a project of its own, it hides nothing from setup, which asks from the home.
    installed = _run([os.fspath(KINETIS_DOCS), "setup"], env, cwd=project)

    assert installed.returncode == 0, installed.stdout + installed.stderr

    # In the home directory, it hides the user-scope one: setup says so and writes nothing.
    assert _run(local, env, cwd=home).returncode == 0
    env["KINETIS_MCP_DOCS_DIR"] = os.fspath(tmp_path / "second install")
    refused = _run([os.fspath(KINETIS_DOCS), "setup"], env, cwd=project)

    assert refused.returncode == 1
    assert refused.stderr.startswith(
        f"kinetis-docs: Claude Code reports a local-scope kinetis-docs for {home}, which hides "
        "the user-scope one there"
    )
    assert f"`claude mcp remove kinetis-docs --scope local`, run in {home}" in refused.stderr
    assert not (tmp_path / "second install").exists()
