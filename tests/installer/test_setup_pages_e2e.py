"""Setup with local pages (`KINETIS_MCP_DOCS_PAGES`), and the paths it records for Codex.

With the pages variable set, no documentation origin is reachable at all: the proxy every
test here gives the server refuses connections, so only the local directory can answer.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.throttle import record_check
from kinetis_mcp_docs.installer.update import TIMEOUT_VARIABLE
from tests.support.machine import Machine, index_page, machine_at
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess

DAY = 86_400
WAIT = 60.0


def _pages(tmp_path: Path, text: str = "# Local index\n") -> Path:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "index.md").write_text(text)
    return pages


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_setup_with_local_pages_needs_no_origin_and_registers_them_as_an_absolute_docs_dir(
    tmp_path: Path, wheelhouse_env: dict[str, str], client: str, refusing_port: int
) -> None:
    machine = machine_at(
        tmp_path, wheelhouse_env, {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"}
    )
    pages = _pages(tmp_path)
    # Relative to the directory setup runs in (the home), as a user may type it.
    machine.env["KINETIS_MCP_DOCS_PAGES"] = "../pages"

    result = machine.setup(*([] if client == "claude" else ["codex"]))

    assert result.returncode == 0, result.stderr
    argv = machine.registered_argv("--docs-dir", os.fspath(pages))
    stub = machine.claude if client == "claude" else machine.codex
    entry = stub.registrations()["kinetis-docs"]
    assert [entry["command"], *entry["args"]] == argv
    lines = result.stdout.splitlines()
    assert lines[2].endswith(f"verifying it through the command to register (a page from {pages})")
    assert f"installed in {machine.install}, pages from {pages})" in lines[-2]
    # Started as the client starts it, the server reads the directory on every call.
    launch = machine.env if client == "claude" else entry["launch_env"]
    assert index_page(argv, launch) == "# Local index\n"
    (pages / "index.md").write_text("# Edited\n")
    assert index_page(argv, launch) == "# Edited\n"


@pytest.mark.parametrize("found", ["missing", "a-file", "no-index"])
def test_a_pages_variable_naming_no_directory_of_pages_is_refused_before_anything_is_written(
    tmp_path: Path, wheelhouse_env: dict[str, str], found: str
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    pages = tmp_path / "pages"
    if found == "a-file":
        pages.write_text("# not a directory\n")
    elif found == "no-index":
        pages.mkdir()
        (pages / "tools.md").write_text("# Tools\n")
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(pages)

    result = machine.setup()

    assert result.returncode == 1
    (line,) = result.stderr.splitlines()
    expected = {
        "missing": f"{pages} does not exist",
        "a-file": f"{pages} is not a directory",
        "no-index": f"{pages} has no index.md, the page setup's verification reads",
    }[found]
    assert line.startswith(f"kinetis-docs: KINETIS_MCP_DOCS_PAGES={pages}: {expected}; ")
    assert line.endswith("Nothing was written.")
    assert not machine.install.exists()
    assert machine.claude.calls() == []


def test_setup_codex_records_relative_path_settings_absolute_so_a_codex_start_can_update(
    machine: Machine, wheelhouse: Path
) -> None:
    # Each path as a user may give it: relative to the directory setup runs in.
    shutil.copy(machine.env["SSL_CERT_FILE"], machine.home / "ca.pem")
    machine.env["SSL_CERT_FILE"] = "ca.pem"
    machine.env["PIP_FIND_LINKS"] = os.path.relpath(wheelhouse, machine.home)

    result = machine.setup("codex")

    assert result.returncode == 0, result.stderr
    entry = machine.codex.registrations()["kinetis-docs"]
    assert entry["env"]["SSL_CERT_FILE"] == os.fspath(machine.home / "ca.pem")
    assert entry["env"]["PIP_FIND_LINKS"] == os.fspath(wheelhouse)
    # Codex starts the server elsewhere; a due update still finds the wheelhouse.
    last_check = machine.install / ".last-update-check"
    record_check(last_check, time.time() - DAY - 1)
    # A generous deadline: a loaded machine must not turn this into a test of the bound.
    launch_env = entry["launch_env"] | {TIMEOUT_VARIABLE: "120"}
    server = ServerProcess(machine.registered_argv(), launch_env)
    try:
        response = server.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
        assert response["result"]["serverInfo"]["version"] == "1.0.1", server.stderr
        assert server.finish(timeout=WAIT) == 0
    finally:
        server.kill()
    assert "could not update" not in server.stderr, server.stderr
    assert float(last_check.read_text()) > time.time() - DAY


def _offline(tmp_path: Path, wheelhouse_env: dict[str, str], refusing_port: int) -> Machine:
    return machine_at(
        tmp_path, wheelhouse_env, {"HTTPS_PROXY": f"http://127.0.0.1:{refusing_port}"}
    )


@pytest.mark.parametrize("client", ["claude", "codex"])
def test_a_copy_of_the_pages_held_by_the_install_is_served_through_a_command_naming_none(
    tmp_path: Path, wheelhouse_env: dict[str, str], client: str, refusing_port: int
) -> None:
    machine = _offline(tmp_path, wheelhouse_env, refusing_port)
    pages = _pages(tmp_path)
    machine.env["KINETIS_MCP_DOCS_PAGES_COPY"] = os.fspath(pages)

    result = machine.setup(*([] if client == "claude" else ["codex"]))

    assert result.returncode == 0, result.stderr
    held = machine.install / "pages"
    stub = machine.claude if client == "claude" else machine.codex
    entry = stub.registrations()["kinetis-docs"]
    # The command a person runs by hand from the troubleshooting page serves the same.
    assert [entry["command"], *entry["args"]] == machine.registered_argv()
    assert f"pages from the install's copy of {pages} (in {held}))" in result.stdout
    launch = machine.env if client == "claude" else entry["launch_env"]
    assert index_page(machine.registered_argv(), launch) == "# Local index\n"
    # The directory it was copied from goes: the install serves its last pages.
    shutil.rmtree(pages)
    assert index_page(machine.registered_argv(), launch) == "# Local index\n"


def test_an_update_makes_the_copy_again_from_its_directory_and_uninstall_removes_it(
    tmp_path: Path, wheelhouse_env: dict[str, str], refusing_port: int
) -> None:
    machine = _offline(tmp_path, wheelhouse_env, refusing_port)
    pages = _pages(tmp_path)
    machine.env["KINETIS_MCP_DOCS_PAGES_COPY"] = os.fspath(pages)
    assert machine.setup().returncode == 0
    (pages / "index.md").write_text("# Edited since\n")
    (pages / "tools.md").write_text("# Tools\n")

    updated = machine.run_process("update", program=machine.own_command)

    assert updated.returncode == 0, updated.stderr
    assert (
        f"Refreshed the install's copy of the pages from {pages} (2 changed)"
        in updated.stdout.splitlines()
    )
    assert index_page(machine.registered_argv(), machine.env) == "# Edited since\n"
    removed = machine.run_process("uninstall", program=machine.own_command)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert not machine.install.exists()


def test_setup_for_the_kinetis_repository_removes_the_copy_and_says_what_now_reads_it(
    machine: Machine, tmp_path: Path
) -> None:
    pages = _pages(tmp_path)
    machine.env["KINETIS_MCP_DOCS_PAGES_COPY"] = os.fspath(pages)
    assert machine.setup().returncode == 0
    del machine.env["KINETIS_MCP_DOCS_PAGES_COPY"]

    result = machine.setup()

    assert result.returncode == 0, result.stderr
    assert (
        f"Removed the install's copy of the pages of {pages}: every registration of "
        f"{machine.install} that names no pages directory reads the Kinetis repository from "
        "now on"
    ) in result.stdout.splitlines()
    assert not (machine.install / "pages").exists()
    assert not (machine.install / "pages-source.json").exists()


def test_both_pages_variables_at_once_are_refused_before_anything_is_written(
    tmp_path: Path, wheelhouse_env: dict[str, str], refusing_port: int
) -> None:
    machine = _offline(tmp_path, wheelhouse_env, refusing_port)
    pages = _pages(tmp_path)
    machine.env["KINETIS_MCP_DOCS_PAGES"] = machine.env["KINETIS_MCP_DOCS_PAGES_COPY"] = os.fspath(
        pages
    )

    result = machine.setup()

    assert result.returncode == 1
    assert result.stderr == (
        "kinetis-docs: KINETIS_MCP_DOCS_PAGES (pages read in place) and "
        "KINETIS_MCP_DOCS_PAGES_COPY (a copy the install holds) are both set; unset one of "
        "them. Nothing was written.\n"
    )
    assert not machine.install.exists()
