"""The README's commands: what a new user types first, and what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
README = PROJECT_ROOT / "README.md"
CI = PROJECT_ROOT / ".ci" / "run"
TEST_COMMAND = "python3 -m venv .venv && .venv/bin/pip install nox && .venv/bin/nox"


def _shell_lines(text: str) -> list[str]:
    """Every line of the ```sh blocks of `text`."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_readmes_commands_install_into_a_virtual_environment_never_the_systems_python() -> None:
    lines = _shell_lines(README.read_text(encoding="utf-8"))

    assert TEST_COMMAND in lines
    assert f"{TEST_COMMAND} -s setup_from_source" in lines
    assert f"{TEST_COMMAND} -s setup_from_source -- codex" in lines
    # `python3 -m pip install` is refused by an externally managed Python (PEP 668).
    assert not [line for line in lines if "-m pip install" in line]


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
