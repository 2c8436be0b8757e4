"""`kinetis-docs uninstall` in-process, against stub client CLIs on PATH and a directory the
test lays out: the error paths that need no real install (uninstall_e2e has those)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.commands.uninstall import run_uninstall
from kinetis_mcp_docs.installer.envs.built import hold
from kinetis_mcp_docs.installer.errors import InstallerError
from kinetis_mcp_docs.installer.layout import MARKER_CONTENT, InstallLayout
from tests.support.clients import StubClient, install_stub
from tests.support.machine import START


def _codex_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str) -> Path:
    """A stub `codex` on PATH whose `kinetis-docs` runs the install in the directory returned
    (absent), and whose `mcp remove` fails saying `failure`."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    monkeypatch.setenv("PATH", os.fspath(tmp_path / "bin"))
    codex: StubClient = install_stub(
        "codex", tmp_path / "bin", tmp_path / "stub-state", fail={"remove": failure}
    )
    root = tmp_path / "install"
    layout = InstallLayout(root)
    entry = {"command": os.fspath(layout.python(layout.current)), "args": START, "env": None}
    codex.state.write_text(json.dumps({"kinetis-docs": entry}))
    return root


@pytest.mark.parametrize(
    "said",
    [
        "Error: failed to persist config.toml: Permission denied (os error 13)",
        "Error: failed to write config.toml: Read-only file system (os error 30)",
    ],
)
def test_a_codex_that_cannot_write_its_config_is_named_so_with_what_makes_uninstall_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: str
) -> None:
    root = _codex_registered(tmp_path, monkeypatch, said)

    with pytest.raises(InstallerError) as error:
        run_uninstall("codex", say=lambda _: None, environ={"KINETIS_MCP_DOCS_DIR": f"{root}"})

    # `codex mcp get` works: the advice is the write that failed, not that read.
    assert error.value.message == (
        "Codex could not remove the existing registration (`codex mcp remove` exited with "
        f"status 1: {said}). Codex cannot write config.toml in CODEX_HOME (~/.codex unless "
        "set), where it keeps its kinetis-docs registration. Nothing was changed; make that "
        "file and its directory writable (fix their permissions, or remount them "
        "read-write), then run uninstall again."
    )
    assert "\n" not in error.value.message


def test_a_codex_remove_failing_otherwise_names_the_remove_not_the_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _codex_registered(tmp_path, monkeypatch, "Error: something else went wrong")

    with pytest.raises(InstallerError) as error:
        run_uninstall("codex", say=lambda _: None, environ={"KINETIS_MCP_DOCS_DIR": f"{root}"})

    assert error.value.message.endswith(
        "Nothing was changed; once `codex mcp remove kinetis-docs` works in this shell, run "
        "uninstall again."
    )


@pytest.mark.parametrize("notes", [False, True], ids=["all of it ours", "a file of the user's"])
def test_uninstall_kept_for_a_compile_of_an_environment_without_a_command_names_its_removal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, notes: bool
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", os.fspath(home))
    monkeypatch.setenv("PATH", os.fspath(tmp_path / "bin"))
    for kind in ("claude", "codex"):
        install_stub(kind, tmp_path / "bin", tmp_path / "stub-state")
    layout = InstallLayout(tmp_path / "install")
    environment = layout.envs / "20261130T120000-0123abcd"
    # Its `kinetis-docs` not (or no longer) there: nothing of it can run an uninstall.
    (environment / "lib").mkdir(parents=True)
    layout.marker.write_text(MARKER_CONTENT)
    if notes:
        (layout.root / "notes.txt").write_text("mine\n")
    lines: list[str] = []

    compiling = hold(environment, wait=False)
    assert compiling is not None
    try:
        run_uninstall(None, say=lines.append, environ={"KINETIS_MCP_DOCS_DIR": f"{layout.root}"})
    finally:
        os.close(compiling)

    removal = f"rm -rf -- {environment if notes else layout.root}"
    assert lines[-1].endswith(
        f"a byte-compile is still writing into envs/{environment.name}: once it has finished "
        f"(seconds), `{removal}` removes {'them' if notes else 'the rest'}"
    )
    subprocess.run(["sh", "-c", removal], env={"PATH": os.defpath}, check=True, timeout=60)
    if notes:
        assert sorted(path.name for path in layout.root.iterdir()) == [
            ".kinetis-mcp-docs",
            ".update.lock",
            "envs",
            "notes.txt",
        ]
    else:
        assert not layout.root.exists()
