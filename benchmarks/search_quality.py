"""The search quality figure: every judged tree, both rankings beside two plain BM25
baselines (`bm25s`, SQLite's FTS5), and the minimum of each figure across trees.

The trees tuned on and the trees held out are summed up apart: a held-out tree's figures
are read, never used to choose a change (see `search_eval/README.md`). A tree that is not
exported is a row naming the command that exports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchmarks.report import Row
from benchmarks.search_eval import evaluate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from benchmarks.bench import Bench

RANKINGS = ("relevance", "owndocs")
BASELINES = ("bm25s", "fts5")
# The relevance ranking's targets on every tree (issue 37), and its lead over bm25s.
TARGETS = {"mrr": 0.80, "questions": 0.70, "errors": 0.85, "snippets": 0.70}
LEAD_OVER_BM25S = 0.05
MAX_AGENT_BYTES = 32_000
FIGURES = "MRR@10 / questions / errors Hit@1 / snippets / agent p95"


@dataclass(frozen=True)
class Figures:
    """One system's figures on one tree."""

    mrr: float
    questions: float
    errors: float
    snippets: float | None  # None: the system shows no snippet of its own (bm25s)
    agent_p95: float

    @classmethod
    def of(cls, scores: dict[str, evaluate.Scores], *, snippets: bool) -> Figures:
        overall = scores["all"].summary()
        return cls(
            overall["mrr@10"],
            scores["question"].summary()["mrr@10"],
            scores["error"].summary()["hit@1"],
            overall["snippet_rate"] if snippets else None,
            overall["agent_bytes_p95"],
        )

    def cells(self) -> str:
        snippets = "—" if self.snippets is None else f"{self.snippets:.0%}"
        return (
            f"{self.mrr:.3f} / {self.questions:.3f} / {self.errors:.3f} / {snippets} / "
            f"{self.agent_p95 / 1000:.1f} KB"
        )


def search_quality(bench: Bench) -> list[Row]:  # noqa: ARG001 - same signature as every figure
    """Every judged tree's rows (`search_quality_rows`)."""
    return search_quality_rows(evaluate.judged_trees())


def search_quality_rows(trees: list[evaluate.JudgedTree]) -> list[Row]:
    """Each tree's rows, tuned on first, then the worst of each figure across the tuned
    trees and across the held-out ones."""
    rows: list[Row] = []
    measured: dict[bool, list[dict[str, Figures]]] = {False: [], True: []}
    for tree in trees:
        if not tree.exported:
            rows.append(_not_exported(tree))
            continue
        figures = measure(tree)
        measured[tree.held_out].append(figures)
        rows += _tree_rows(tree, figures)
    for held_out, label in ((False, "the tuned trees"), (True, "the held-out trees")):
        if measured[held_out]:
            rows += _minimum_rows(label, measured[held_out])
    return rows


def measure(tree: evaluate.JudgedTree) -> dict[str, Figures]:
    """Every system's figures on `tree`, in one run."""
    judged = evaluate.queries(tree.queries)
    found: dict[str, Figures] = {}
    for ranking in RANKINGS:
        system, close = evaluate.route_system(ranking, tree.root)
        try:
            found[ranking] = Figures.of(evaluate.evaluate(system, judged, tree.root), snippets=True)
        finally:
            close()
    baseline = evaluate.bm25s_system(tree.root)
    if baseline is not None:
        scores = evaluate.evaluate(baseline, judged, tree.root)
        found["bm25s"] = Figures.of(scores, snippets=False)
    fts5 = evaluate.fts5_system(tree.root)
    found["fts5"] = Figures.of(evaluate.evaluate(fts5, judged, tree.root), snippets=True)
    return found


def _not_exported(tree: evaluate.JudgedTree) -> Row:
    return not_exported(f"search quality, {tree.name}", tree)


def not_exported(figure: str, tree: evaluate.JudgedTree) -> Row:
    """The row of a figure over `tree`, which is not exported here: how to export it."""
    return Row(
        f"{figure}: not exported",
        "not run",
        "—",
        "—",
        "—",
        None,
        note=f"export it with: {tree.export_command()}",
    )


def _tree_rows(tree: evaluate.JudgedTree, figures: dict[str, Figures]) -> list[Row]:
    kind = "held out" if tree.held_out else "tuned on"
    bm25s = figures.get("bm25s")
    rows = []
    for name, found in figures.items():
        target, met = "—", None
        if name == "relevance":
            target, met = _relevance_target(found, bm25s)
        rows.append(
            Row(
                f"search quality, {tree.name} ({kind}), {name}: {FIGURES}",
                found.cells(),
                "—",
                "—",
                target,
                met,
                data=vars(found),
            )
        )
    return rows


def _relevance_target(found: Figures, bm25s: Figures | None) -> tuple[str, bool]:
    floor = TARGETS["mrr"] if bm25s is None else max(TARGETS["mrr"], bm25s.mrr + LEAD_OVER_BM25S)
    target = (
        f"≥ {floor:.3f} (0.80, bm25s + {LEAD_OVER_BM25S}) / ≥ {TARGETS['questions']} / "
        f"≥ {TARGETS['errors']} / ≥ {TARGETS['snippets']:.0%} / ≤ {MAX_AGENT_BYTES // 1000} KB"
    )
    met = (
        found.mrr >= floor
        and found.questions >= TARGETS["questions"]
        and found.errors >= TARGETS["errors"]
        and (found.snippets or 0.0) >= TARGETS["snippets"]
        and found.agent_p95 <= MAX_AGENT_BYTES
    )
    return target, met


def _minimum_rows(label: str, trees: list[dict[str, Figures]]) -> list[Row]:
    rows = []
    for name in (*RANKINGS, *BASELINES):
        over = [figures[name] for figures in trees if name in figures]
        if not over:
            continue
        snippets = [found.snippets for found in over if found.snippets is not None]
        worst = Figures(
            min(found.mrr for found in over),
            min(found.questions for found in over),
            min(found.errors for found in over),
            min(snippets) if snippets else None,
            max(found.agent_p95 for found in over),
        )
        note = f"over {len(over)} trees (agent bytes: the largest p95)"
        if name == "relevance":
            leads = [
                figures["relevance"].mrr - figures["bm25s"].mrr
                for figures in trees
                if "bm25s" in figures
            ]
            if leads:
                note += f"; its smallest MRR@10 lead over bm25s {min(leads):+.3f}"
        rows.append(
            Row(
                f"search quality, the worst across {label}, {name}: {FIGURES}",
                worst.cells(),
                "—",
                "—",
                "—",
                None,
                data=vars(worst),
                note=note,
            )
        )
    return rows
