"""A directory made once per test run, whichever test process asks first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.per_run import made_once_per_run

# One test process of a run: waits for the others to have started, then asks for the
# directory, whose making takes a while and is written down.
_WORKER = """
import os, sys, tempfile, time
from pathlib import Path
from tests.support.per_run import made_once_per_run

base, go, log = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
base.mkdir()
while not go.exists():
    time.sleep(0.01)

def make() -> Path:
    made = Path(tempfile.mkdtemp(dir=base))
    time.sleep(0.5)
    (made / "maker").write_text(str(os.getpid()))
    with open(log, "a") as record:
        record.write(f"{os.getpid()}\\n")
    return made

print(made_once_per_run(base, "shared", make))
"""


def test_processes_asking_together_get_one_directory_made_once(tmp_path: Path) -> None:
    run, go, log = tmp_path / "pytest-0", tmp_path / "go", tmp_path / "made"
    run.mkdir()
    root = Path(__file__).resolve().parents[2]
    environ = {**os.environ, "PYTHONPATH": os.fspath(root)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", _WORKER, os.fspath(run / f"popen-gw{n}"), go, log],
            env={**environ, "PYTEST_XDIST_WORKER": f"gw{n}"},
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    go.touch()
    answers = {worker.communicate(timeout=60)[0].strip() for worker in workers}
    assert [worker.returncode for worker in workers] == [0, 0, 0, 0]

    assert answers == {os.fspath(run / "shared")}
    (maker,) = log.read_text().split()
    assert (run / "shared" / "maker").read_text() == maker


def test_outside_xdist_every_process_makes_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    own = tmp_path / "own"
    own.mkdir()
    assert made_once_per_run(tmp_path / "base", "shared", lambda: own) == own
    assert not (tmp_path / "shared").exists()
