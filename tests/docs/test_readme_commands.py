"""The README's commands: what a new user types first, and what CI runs."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from kinetis_mcp_docs.installer.install_dir.advice import install_here

PROJECT_ROOT = Path(__file__).resolve().parents[2]
README = PROJECT_ROOT / "README.md"
CI = PROJECT_ROOT / ".ci" / "run"
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install 'nox[uv]' && .venv/bin/nox"
INSTALL_COMMAND = (
    "python3 -m venv .venv && .venv/bin/python -m pip install 'nox[uv]' && "
    ".venv/bin/python -m nox -s setup_from_source"
)


def _shell_lines(text: str) -> list[str]:
    """Every line of the ```sh blocks of `text`."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readmes_commands_install_into_a_virtual_environment_never_the_systems_python() -> None:
    lines = _shell_lines(README.read_text(encoding="utf-8"))

    assert TEST_COMMAND in lines
    assert INSTALL_COMMAND in lines
    assert f"{INSTALL_COMMAND} -- codex" in lines
    # `python3 -m pip install` is refused by an externally managed Python (PEP 668).
    assert not [line for line in lines if re.search(r"(^|\s)python3? -m pip install", line)]


def test_the_readmes_install_runs_no_script_of_its_venv_so_it_works_after_the_clone_moves() -> None:
    # A venv's scripts name the path it had when they were made: in a clone that moved,
    # `.venv/bin/nox` no longer runs, where `.venv/bin/python -m nox` does.
    lines = _shell_lines(README.read_text(encoding="utf-8"))
    installs = [line for line in lines if "setup_from_source" in line]

    assert installs
    assert not [line for line in installs if re.search(r"\.venv/bin/(pip|nox)\b", line)]


def test_the_command_messages_name_to_install_from_a_clone_is_the_readmes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))

    assert install_here(tmp_path / ".kinetis-mcp-docs") == INSTALL_COMMAND
    assert install_here(tmp_path / ".kinetis-mcp-docs", "codex") == f"{INSTALL_COMMAND} -- codex"


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    if not CI.exists():
        pytest.skip("an sdist carries no .ci/run")
    commands = [
        line
        for line in CI.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]

    assert commands[-1] == TEST_COMMAND
    assert TEST_COMMAND in _shell_lines(README.read_text(encoding="utf-8"))


# A pyenv with the four supported Pythons (and others), recording how it is called.
_PYENV = """#!/bin/sh
echo "pyenv $*" >> "$CI_LOG"
case "$1" in
    versions) printf '3.9.18\\n3.10.13\\n3.11.7\\n3.12.0\\n3.12.1\\n3.13.0\\n' ;;
    init) echo true ;;
esac
"""
# `python3 -m venv .venv`: makes the venv's pip and a nox that records what it sees.
_PYTHON3 = """#!/bin/sh
echo "python3 $*" >> "$CI_LOG"
mkdir -p .venv/bin
printf '#!/bin/sh\\necho "pip $*" >> "$CI_LOG"\\n' > .venv/bin/pip
printf '#!/bin/sh\\necho "nox $* PYENV_VERSION=$PYENV_VERSION" >> "$CI_LOG"\\n' > .venv/bin/nox
chmod +x .venv/bin/pip .venv/bin/nox
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_ci_shows_pyenvs_four_pythons_for_its_run_only_never_setting_pyenv_global(
    tmp_path: Path,
) -> None:
    if not CI.exists():
        pytest.skip("an sdist carries no .ci/run")
    clone = tmp_path / "clone"
    (clone / ".ci").mkdir(parents=True)
    shutil.copy2(CI, clone / ".ci" / "run")
    tools = tmp_path / "bin"
    tools.mkdir()
    _executable(tools / "pyenv", _PYENV)
    _executable(tools / "python3", _PYTHON3)
    # Where a Debian package the tests use is missing, the script installs it: recorded here.
    _executable(tools / "apt-get", '#!/bin/sh\necho "apt-get $*" >> "$CI_LOG"\n')
    log = tmp_path / "calls.log"
    env = {"PATH": f"{tools}{os.pathsep}/usr/bin{os.pathsep}/bin", "CI_LOG": os.fspath(log)}

    subprocess.run(["bash", ".ci/run"], cwd=clone, env=env, check=True, timeout=60)

    calls = log.read_text(encoding="utf-8").splitlines()
    assert [call for call in calls if call.startswith("pyenv")] == [
        "pyenv versions --bare",
        "pyenv versions --bare",
        "pyenv versions --bare",
        "pyenv versions --bare",
        "pyenv init --path",
    ]
    # The newest of each supported minor, the one that `python3` runs first; nothing more.
    assert calls[-3:] == [
        "python3 -m venv .venv",
        "pip install nox[uv]",
        "nox  PYENV_VERSION=3.11.7:3.10.13:3.12.1:3.13.0",
    ]
