"""What every figure is given: how many times to do things, and the stage it runs on.

Its own module so that the figure modules import it and nothing imports a figure module
but `run.py`, which holds the one registry of figures.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.stage import PROJECT_ROOT, Stage
from benchmarks.wire import BenchError


@dataclass
class Settings:
    """How many times each thing is done; `quick` shrinks them for a smoke run."""

    spawns: int = 30
    pings: int = 10_000
    lists: int = 1_000
    burst: int = 16
    delay: float = 0.2
    reads: int = 50
    setups: int = 3
    update_spawns: int = 5
    repeats: int = 15

    @classmethod
    def quick(cls) -> Settings:
        return cls(spawns=5, pings=1_000, lists=100, setups=1, update_spawns=2, repeats=3)


@dataclass
class Bench:
    """What the figures share: the stage, the two servers' commands, the install."""

    stage: Stage
    settings: Settings
    python: str
    install: Path | None = None
    install_error: str = ""
    setup_times: list[float] = field(default_factory=list)

    @property
    def ours(self) -> list[str]:
        return [self.python, "-I", "-m", "kinetis_mcp_docs.server"]

    @property
    def peer(self) -> list[str]:
        return [self.python, "-I", os.fspath(PROJECT_ROOT / "benchmarks" / "peer_server.py")]

    def servers(self) -> list[tuple[str, list[str]]]:
        return [("ours", self.ours), ("peer", self.peer)]

    def server_env(self) -> dict[str, str]:
        return self.stage.environ()

    def installed(self) -> Path:
        """The install the setup figure made, for the figures that spawn or update it."""
        if self.install is None:
            raise BenchError(f"no install: {self.install_error}")
        return self.install
