"""A command run in this process is seen as its own process would be, and leaves nothing
of it behind: what it and its children wrote, its exit status, and this process as it was."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import click
import pytest

from tests.support.in_process import run_cli

# Descriptors, signals and the standard streams, which every Python's installer runs rely on.
pytestmark = pytest.mark.interpreter

WAIT = 60.0


def _env(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": os.fspath(tmp_path),
        "LANG": "C.UTF-8",
        "TMPDIR": os.fspath(tmp_path / "tmp"),
    }


def test_what_the_command_and_its_children_write_is_captured_in_order(tmp_path: Path) -> None:
    @click.command()
    def command() -> None:
        click.echo("one")
        click.echo("two", err=True)
        # A child writes to the descriptors it inherits, as pip writes to the command's stderr.
        subprocess.run(["sh", "-c", "echo three >&2; echo four"], check=True)
        click.echo("five", err=True)
        sys.exit(3)

    result = run_cli([], env=_env(tmp_path), cwd=tmp_path, timeout=WAIT, command=command)

    assert (result.returncode, result.stdout, result.stderr) == (
        3,
        "one\nfour\n",
        "two\nthree\nfive\n",
    )


def test_a_child_left_holding_the_output_is_waited_for_as_a_process_would_be(
    tmp_path: Path,
) -> None:
    children: list[subprocess.Popen[bytes]] = []

    @click.command()
    def command() -> None:
        children.append(subprocess.Popen(["sh", "-c", "sleep 0.5; echo late >&2"]))

    try:
        result = run_cli([], env=_env(tmp_path), cwd=tmp_path, timeout=WAIT, command=command)
    finally:
        for child in children:
            child.wait(WAIT)

    assert (result.returncode, result.stderr) == (0, "late\n")


def test_an_exception_let_through_is_a_traceback_and_status_1(tmp_path: Path) -> None:
    @click.command()
    def command() -> None:
        raise RuntimeError("not expected")

    result = run_cli([], env=_env(tmp_path), cwd=tmp_path, timeout=WAIT, command=command)

    assert result.returncode == 1
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert result.stderr.endswith("RuntimeError: not expected\n")


def test_the_command_sees_the_environment_directory_and_warning_filters_of_its_own_process(
    tmp_path: Path,
) -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @click.argument("given")
    def command(given: str) -> None:
        seen.update(
            environ=dict(os.environ),
            cwd=os.getcwd(),  # noqa: PTH109
            argv=list(sys.argv),
            given=given,
            umask=os.umask(0o077),
            temporary=tempfile.gettempdir(),
        )
        # pytest's filters would raise the first and keep the second from stderr.
        warnings.warn("deprecated", DeprecationWarning, stacklevel=1)
        warnings.warn("said", UserWarning, stacklevel=1)

    env = _env(tmp_path)
    program = Path("/opt/bin/kinetis-docs")
    result = run_cli(
        ["an-argument"],
        env=env,
        cwd=tmp_path,
        timeout=WAIT,
        umask=0o027,
        program=program,
        command=command,
    )

    assert result.returncode == 0, result.stderr
    assert seen == {
        "environ": env,
        "cwd": os.fspath(tmp_path),
        "argv": [os.fspath(program), "an-argument"],
        "given": "an-argument",
        "umask": 0o027,
        "temporary": env["TMPDIR"],
    }
    assert "UserWarning: said" in result.stderr
    assert "deprecated" not in result.stderr


def _handler(_number: int, _frame: object) -> None:
    pass


def test_whatever_the_command_changed_of_this_process_is_given_back(tmp_path: Path) -> None:
    @click.command()
    def command() -> None:
        os.environ["CHANGED_BY_THE_COMMAND"] = "1"
        os.chdir("/")
        os.umask(0)
        tempfile.tempdir = "/nowhere"
        sys.argv.append("more")
        signal.signal(signal.SIGTERM, _handler)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        logging.getLogger().addHandler(logging.StreamHandler(sys.stderr))
        warnings.simplefilter("always")

    environ = dict(os.environ)
    cwd = os.getcwd()  # noqa: PTH109
    argv = list(sys.argv)
    umask = os.umask(0o022)
    os.umask(umask)
    temporary = tempfile.tempdir
    handlers = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGHUP)}
    logged = logging.getLogger().handlers[:]
    filters = warnings.filters[:]
    streams = sys.stdout, sys.stderr, os.fstat(1), os.fstat(2)

    result = run_cli([], env=_env(tmp_path), cwd=tmp_path, timeout=WAIT, command=command)

    assert result.returncode == 0, result.stderr
    assert dict(os.environ) == environ
    assert os.getcwd() == cwd  # noqa: PTH109
    assert sys.argv == argv
    assert os.umask(umask) == umask
    assert tempfile.tempdir == temporary
    assert {number: signal.getsignal(number) for number in handlers} == handlers
    assert logging.getLogger().handlers == logged
    assert warnings.filters == filters
    assert (sys.stdout, sys.stderr) == streams[:2]
    assert [os.fstat(1).st_ino, os.fstat(2).st_ino] == [stat.st_ino for stat in streams[2:]]


def test_a_command_past_its_time_is_stopped_and_raises_timeout_expired(tmp_path: Path) -> None:
    cleaned: list[bool] = []

    @click.command()
    def command() -> None:
        try:
            time.sleep(WAIT)
        finally:
            cleaned.append(True)  # its own clean-up runs, as for any exception

    handler = signal.getsignal(signal.SIGALRM)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli([], env=_env(tmp_path), cwd=tmp_path, timeout=0.2, command=command)

    assert time.monotonic() - started < WAIT / 2
    assert cleaned == [True]
    assert signal.getsignal(signal.SIGALRM) is handler
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.parametrize("command", ["serve", "start"])
def test_a_command_that_becomes_the_server_is_refused_in_this_process(
    tmp_path: Path, command: str
) -> None:
    with pytest.raises(ValueError, match="run it as a process"):
        run_cli([command], env=_env(tmp_path), cwd=tmp_path, timeout=WAIT)


def test_a_locale_whose_streams_are_not_utf_8_is_refused_in_this_process(tmp_path: Path) -> None:
    env = _env(tmp_path) | {"LC_ALL": "en_US.ISO-8859-1"}

    with pytest.raises(ValueError, match="not UTF-8"):
        run_cli(["--version"], env=env, cwd=tmp_path, timeout=WAIT)
