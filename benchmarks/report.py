"""One row per figure: what was measured, ours beside the peer, the target and whether it holds."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HEADERS = ("figure", "ours", "peer", "ratio", "target", "met?")
X = "\u00d7"  # the multiplication sign of ratios


@dataclass
class Row:
    """A figure of the results table, and the raw numbers behind it (for the JSON)."""

    figure: str
    ours: str
    peer: str
    ratio: str
    target: str
    met: bool | None
    """None: informative, no target."""
    data: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def cells(self) -> tuple[str, ...]:
        met = "—" if self.met is None else ("yes" if self.met else "NO")
        return (self.figure, self.ours, self.peer, self.ratio, self.target, met)


def failed_row(figure: str, target: str, error: BaseException) -> Row:
    """A figure that could not be measured: shown as missed, with the reason."""
    return Row(figure, "failed", "—", "—", target, met=False, note=f"{error}")


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def summary(values: Sequence[float]) -> dict[str, float | int]:
    """The numbers kept in the JSON for a list of samples."""
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "median": statistics.median(ordered),
        "min": ordered[0],
        "max": ordered[-1],
        "p90": ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))],
    }


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def times(value: float) -> str:
    return f"{value:.1f}{X}" if value < 100 else f"{value:.0f}{X}"


def table(rows: Sequence[Row]) -> str:
    """A Markdown table, columns padded so it also reads as plain text."""
    cells = [HEADERS, *(row.cells() for row in rows)]
    widths = [max(len(line[column]) for line in cells) for column in range(len(HEADERS))]

    def render(line: Sequence[str]) -> str:
        return (
            "| "
            + " | ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
            + " |"
        )

    rule = "| " + " | ".join("-" * width for width in widths) + " |"
    return "\n".join([render(HEADERS), rule, *(render(line) for line in cells[1:])])


def notes(rows: Sequence[Row]) -> str:
    lines = [f"- {row.figure}: {row.note}" for row in rows if row.note]
    return "\n".join(lines)


def write_json(path: Path, document: dict[str, Any], rows: Sequence[Row]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {**document, "rows": [asdict(row) for row in rows]}
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
