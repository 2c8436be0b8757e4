"""A due client start whose name server never answers: the check gives up, the server serves.

pip's socket timeout does not bound a name lookup, so a silent name server would hold the
check for a newer release until the whole update deadline passed. A start gives that check
at most half its deadline (2.5 s of the default 5, more when KINETIS_MCP_DOCS_UPDATE_TIMEOUT
gives more); `kinetis-docs update` waits as long as it takes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.package_source import PackageSource, record_source
from kinetis_mcp_docs.installer.install_dir.throttle import read_last_check, record_check
from kinetis_mcp_docs.installer.layout import InstallLayout
from kinetis_mcp_docs.installer.update import TIMEOUT_VARIABLE
from tests.support.blackhole import UNRESOLVED_INDEX, BlackHoleUnavailable, black_hole_prefix
from tests.support.machine import machine_at
from tests.support.stdio import INITIALIZE_PARAMS, ServerProcess

DAY = 86_400
WAIT = 60.0


@pytest.fixture
def behind_a_black_hole(tmp_path: Path) -> list[str]:
    try:
        return black_hole_prefix(tmp_path / "black-hole")
    except BlackHoleUnavailable as reason:
        pytest.skip(str(reason))


@pytest.mark.parametrize(
    ("deadline", "given"), [(None, "2.5"), ("3", "1.5")], ids=["the default deadline", "3 s"]
)
def test_a_due_start_behind_a_silent_name_server_gives_up_the_check_at_half_its_deadline(
    tmp_path: Path,
    wheelhouse_env: dict[str, str],
    behind_a_black_hole: list[str],
    deadline: str | None,
    given: str,
) -> None:
    machine = machine_at(tmp_path, wheelhouse_env, {})
    machine.env["KINETIS_MCP_DOCS_PAGES"] = os.fspath(Path(__file__).parents[2] / "docs")
    assert machine.setup().returncode == 0
    last_check = machine.install / ".last-update-check"
    stale = time.time() - 2 * DAY
    record_check(last_check, stale)
    # The index is a name only a name server could resolve: the one the install came from.
    env = {
        key: value
        for key, value in machine.env.items()
        if key not in {"PIP_FIND_LINKS", "PIP_NO_INDEX", "HTTPS_PROXY", TIMEOUT_VARIABLE}
    }
    env["PIP_INDEX_URL"] = UNRESOLVED_INDEX
    record_source(InstallLayout(machine.install), PackageSource.of(env))
    if deadline is not None:
        env[TIMEOUT_VARIABLE] = deadline

    server = ServerProcess([*behind_a_black_hole, *machine.registered_argv()], env)
    try:
        response = server.request("initialize", INITIALIZE_PARAMS, timeout=WAIT)
        assert server.finish(timeout=WAIT) == 0
    finally:
        server.kill()

    assert response["result"]["serverInfo"]["version"] == "1.0.1"
    update = f"KINETIS_MCP_DOCS_DIR={machine.install} {machine.own_command} update"
    assert (
        "kinetis-docs: could not update (Could not check for a newer kinetis-mcp-docs within "
        f"{given} s, the most a client start waits for the package index (or a name server) "
        f"to answer: half of its update deadline, which {TIMEOUT_VARIABLE} sets; `{update}` "
        "waits longer); starting the installed version 1.0.1."
    ) in server.stderr.splitlines()
    # Nothing recorded: the next start tries again.
    assert read_last_check(last_check) == stale
