"""Compare two result trees: the rule for a change that moves numbers (issue 31).

A regenerated cell may differ from the committed one by at most ``rel`` (1e-9) relative, or
``abs`` (1e-12) absolute near zero, on every value of every metric (the timing metrics of
:data:`rankrepro.metrics.TIMING_METRICS` apart); or, for a cell named as a genuinely different
floating-point path (``different_path``: another EP schedule, a float32 kernel), by at most
``ci_share`` (1%) of that cell's 95% interval half-width for the metric (and round), the
interval of the *old* tree's trials (:func:`rankrepro.stats.t_interval`); or, with a platform
spread (``spread``: ``results/platform_spread.json`` or a file of the same form, issue 60), by at
most the largest absolute difference the old code itself shows for that cell and metric between
CPU kernels.  :func:`measure_spread` measures such a spread from trees the same code computed
under several kernels (``--measure-spread``).  And no outcome may
change: a published value's verdict, marks or diagnosis, a claim's verdict, fraction,
diagnosis or dependence on a choice, a sensitivity choice's flips, the verdicts under each of
its values, the record's status.

The trees are two ``results/`` folders (or checkouts holding one): the records
``<paper>/<artefact>.json`` and the cells ``<paper>/<artefact>/cells/<cell>.parquet``.
``scripts/compare_results.py OLD NEW`` prints, per artefact, the largest relative change and
the largest change as a share of the cell's interval half-width, and exits 1 when a change
breaks the rule.
"""

from __future__ import annotations

import fnmatch
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import read_cell, read_json
from ..metrics import TIMING_METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from ..stats import t_interval
from .verify import align


@dataclass(frozen=True)
class Rule:
    """The tolerances; ``different_path``: fnmatch patterns on ``<paper>/<artefact>/<cell>``
    of the cells whose floating-point path is genuinely different (they may move by up to
    ``ci_share`` of their interval half-width)."""

    rel: float = 1e-9
    abs: float = 1e-12
    ci_share: float = 0.01
    different_path: tuple[str, ...] = ()
    #: ``{<paper>/<artefact>/<cell>: {metric: {"abs": .., "rel": ..}}}``: a value may move by up to
    #: its cell and metric's ``abs`` (the platform spread, docs/reproducibility.md)
    spread: dict | None = None

    def within_spread(self, cell_name: str, metric: str, diff: float) -> bool:
        lim = (self.spread or {}).get(cell_name, {}).get(metric)
        return lim is not None and diff <= lim["abs"] * (1 + 1e-9)

    def is_different_path(self, cell_name: str) -> bool:
        return any(fnmatch.fnmatchcase(cell_name, p) for p in self.different_path)


@dataclass
class Change:
    """One value that moved: where, old and new, and the measures of the rule."""

    cell: str
    metric: str
    trial: int
    round: int | None
    old: float
    new: float
    rel: float
    ci_share: float  # |new - old| / the cell's 95% half-width (inf when there is none)
    ok: bool

    def where(self) -> str:
        rnd = "" if self.round is None else f" round {self.round}"
        return f"{self.cell} {self.metric} trial {self.trial}{rnd}"


@dataclass
class CellComparison:
    name: str  # <paper>/<artefact>/<cell>
    values: int = 0
    changes: list[Change] = field(default_factory=list)
    problem: str = ""  # a file or rows missing on one side
    different_path: bool = False
    added: bool = False  # only in the new tree (a cell the config added): reported, not compared

    @property
    def ok(self) -> bool:
        return not self.problem and all(c.ok for c in self.changes)


@dataclass
class ArtefactComparison:
    name: str  # <paper>/<artefact>
    cells: list[CellComparison] = field(default_factory=list)
    outcome_changes: list[str] = field(default_factory=list)  # break the rule
    notes: list[str] = field(default_factory=list)  # reported, allowed (evidence text, additions)

    @property
    def ok(self) -> bool:
        return not self.outcome_changes and all(c.ok for c in self.cells)

    def changes(self) -> list[Change]:
        return [ch for c in self.cells for ch in c.changes]

    def largest(self, attr: str) -> Change | None:
        chs = self.changes()
        return max(chs, key=lambda ch: getattr(ch, attr)) if chs else None


# -------------------------------------------------------------------------------------
# the cells
# -------------------------------------------------------------------------------------
def results_root(path: str | Path) -> Path:
    """``path`` itself when it holds the papers' folders, ``path/results`` when it is a checkout."""
    p = Path(path)
    if (p / "results").is_dir() and not any(p.glob("*/*.json")):
        return p / "results"
    if not p.is_dir():
        raise FileNotFoundError(f"{p}: not a folder (give a results/ folder or a checkout holding one)")
    return p


def _ci_half_widths(old: pd.DataFrame, groups: set[tuple]) -> dict[tuple, float]:
    """(cell, metric, round) -> the 95% half-width over the old tree's trials."""
    out = {}
    key_round = old["round"].astype("Int64").astype("float64")
    for (cell, metric, rnd), g in old.groupby([old["cell"], old["metric"], key_round.fillna(-1.0)], sort=False):
        k = (cell, metric, None if rnd == -1.0 else int(rnd))
        if k in groups:
            out[k] = t_interval(g["value"].to_numpy(dtype=np.float64)).half_width
    return out


def compare_cell(name: str, old: pd.DataFrame, new: pd.DataFrame, rule: Rule) -> CellComparison:
    """Every value of two versions of a cell, timing metrics apart, under ``rule``."""
    out = CellComparison(name, different_path=rule.is_different_path(name))
    al = align(old, new)
    if al.only_old or al.only_new:
        out.problem = f"{al.only_old} row(s) only in the old tree, {al.only_new} only in the new one"
    both, same = al.both, al.same
    out.values = len(both)
    if same.all():
        return out
    moved = both[~same]
    rnd = [None if (r is None or (isinstance(r, float) and math.isnan(r))) else int(r) for r in moved["round"]]
    hw = _ci_half_widths(old, {(c, mt, r) for c, mt, r in zip(moved["cell"], moved["metric"], rnd)})
    for (_, row), r in zip(moved.iterrows(), rnd):
        x, y = float(row["value_old"]), float(row["value_new"])
        diff = abs(y - x)
        finite = math.isfinite(diff)
        rel = diff / max(abs(x), abs(y)) if finite else math.inf
        half = hw.get((row["cell"], row["metric"], r), math.nan)
        share = diff / half if finite and math.isfinite(half) and half > 0 else math.inf
        tight = finite and (diff <= rule.abs or rel <= rule.rel)
        ok = tight or (out.different_path and share <= rule.ci_share) \
            or (finite and rule.within_spread(name, str(row["metric"]), diff))
        out.changes.append(Change(str(row["cell"]), str(row["metric"]), int(row["trial"]), r, x, y, rel, share, ok))
    return out


# -------------------------------------------------------------------------------------
# the records: what a reader concludes
# -------------------------------------------------------------------------------------
def _diag(d) -> str | None:
    return None if not d else f"{d.get('kind')}: {d.get('choice')}: {d.get('text')}"


def outcomes(record: dict) -> tuple[dict[str, object], dict[str, str]]:
    """The conclusions a record states (key -> value; a change of any breaks the rule) and
    the claims' evidence texts (they print numbers to 3 digits: reported, not a break)."""
    out: dict[str, object] = {"status": record.get("status")}
    for r in record.get("table") or []:
        k = f"table {r.get('cell')} {r.get('metric')}" + (f" round {r['round']}" if r.get("round") is not None else "") \
            + (f" ({r['source']})" if r.get("source") else "")
        out[f"{k}: verdict"] = r.get("verdict")
        out[f"{k}: marks"] = r.get("marks")
        out[f"{k}: diagnosis"] = _diag(r.get("diagnosis"))
    evidence = {}
    for c in record.get("claims") or []:
        k = f"claim {c.get('id')}"
        out[f"{k}: verdict"] = c.get("verdict")
        out[f"{k}: fraction"] = c.get("fraction")
        out[f"{k}: diagnosis"] = _diag(c.get("diagnosis"))
        out[f"{k}: depends on"] = json.dumps(c.get("depends_on"), sort_keys=True)
        evidence[k] = c.get("evidence")
    for s in record.get("sensitivity") or []:
        k = f"sensitivity {s.get('choice')}"
        out[f"{k}: flips"] = sorted(s.get("flips") or [])
        for v in s.get("values") or []:
            kv = f"{k}={v.get('value')}"
            out[f"{kv}: consistent / compared"] = (v.get("consistent"), v.get("compared"))
            for c in v.get("claims") or []:
                out[f"{kv}: claim {c.get('id')}"] = c.get("verdict")
            for h in v.get("headline") or []:
                out[f"{kv}: {h.get('cell')} {h.get('metric')} verdict"] = h.get("verdict")
    return out, evidence


def compare_records(old: dict, new: dict) -> tuple[list[str], list[str]]:
    """(outcome changes, notes) between two versions of a record.  An outcome only in the new
    record (a sensitivity choice or a published value the config added) is a note; one that
    changed or disappeared is a change."""
    (oo, oe), (no, ne) = outcomes(old), outcomes(new)
    changes = [f"{k}: {oo[k]!r} -> {no.get(k, '(absent)')!r}" for k in sorted(oo) if oo[k] != no.get(k, "(absent)")]
    groups: dict[str, list[str]] = {}
    for k in sorted(set(no) - set(oo)):
        groups.setdefault(k.split(": ")[0], []).append(k)
    notes = [f"{ks[0]}: {no[ks[0]]!r} (added)" if len(ks) == 1 else f"{g}: {len(ks)} outcomes (added)"
             for g, ks in groups.items()]
    notes += [f"{k}: evidence text changed" for k in sorted(set(oe) | set(ne)) if oe.get(k) != ne.get(k)]
    return changes, notes


# -------------------------------------------------------------------------------------
# two trees
# -------------------------------------------------------------------------------------
def _artefacts(root: Path) -> set[str]:
    names = {f"{p.parent.name}/{p.stem}" for p in root.glob("*/*.json")}
    names |= {f"{p.parent.parent.parent.name}/{p.parent.parent.name}" for p in root.glob("*/*/cells/*.parquet")}
    return names


def compare_trees(old: str | Path, new: str | Path, rule: Rule = Rule(), only: list[str] | None = None
                  ) -> list[ArtefactComparison]:
    """Every artefact of either tree (``only``: fnmatch patterns on ``<paper>/<artefact>``)."""
    o_root, n_root = results_root(old), results_root(new)
    out = []
    for name in sorted(_artefacts(o_root) | _artefacts(n_root)):
        if only and not any(fnmatch.fnmatchcase(name, p) for p in only):
            continue
        art = ArtefactComparison(name)
        o_rec, n_rec = o_root / f"{name}.json", n_root / f"{name}.json"
        if o_rec.is_file() and n_rec.is_file():
            art.outcome_changes, art.notes = compare_records(read_json(o_rec, "record"),
                                                             read_json(n_rec, "record"))
        elif o_rec.is_file() or n_rec.is_file():
            art.outcome_changes.append(f"record {name}.json only in the {'old' if o_rec.is_file() else 'new'} tree")
        o_cells = {p.stem: p for p in (o_root / name / "cells").glob("*.parquet")}
        n_cells = {p.stem: p for p in (n_root / name / "cells").glob("*.parquet")}
        added = sorted(set(n_cells) - set(o_cells))
        if added:
            art.notes.append(f"{len(added)} cell(s) only in the new tree (added, not compared): {', '.join(added)}")
        for cid in sorted(set(o_cells) | set(n_cells)):
            cname = f"{name}/{cid}"
            if cid not in n_cells:
                art.cells.append(CellComparison(cname, problem="only in the old tree"))
                continue
            if cid not in o_cells:
                art.cells.append(CellComparison(cname, added=True))
                continue
            art.cells.append(compare_cell(cname, read_cell(o_cells[cid]), read_cell(n_cells[cid]), rule))
        out.append(art)
    return out


def measure_spread(base: str | Path, others: list[str | Path], only: list[str] | None = None) -> dict:
    """The platform spread: per cell of ``base`` also in each of ``others`` (the same code under
    other CPU kernels) and per metric (timing metrics apart), the largest absolute and relative
    difference over trials and trees; a cell identical everywhere has no entry."""
    from .verify import by_metric

    b_root = results_root(base)
    out: dict[str, dict] = {}
    for name in sorted(_artefacts(b_root)):
        if only and not any(fnmatch.fnmatchcase(name, p) for p in only):
            continue
        for cpath in sorted((b_root / name / "cells").glob("*.parquet")):
            for other in others:
                opath = results_root(other) / name / "cells" / cpath.name
                if not opath.is_file():
                    continue
                for m, (a, r) in by_metric(read_cell(opath), read_cell(cpath)).items():
                    cur = out.setdefault(f"{name}/{cpath.stem}", {}).setdefault(m, {"abs": 0.0, "rel": 0.0})
                    cur["abs"], cur["rel"] = max(cur["abs"], a), max(cur["rel"], r)
    return out


def _g(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.3g}"


def report(comps: list[ArtefactComparison], rule: Rule = Rule(), details: int = 10) -> str:
    """The table (one row per artefact) and, below it, what breaks the rule."""
    lines = ["| artefact | cells | identical | moved | largest relative change | largest change / 95% half-width "
             "| outside the rule | outcome changes |",
             "|---|---:|---:|---:|---|---|---:|---:|"]
    for a in comps:
        moved = [c for c in a.cells if c.changes or c.problem]
        rel, share = a.largest("rel"), a.largest("ci_share")
        bad = sum(not ch.ok for ch in a.changes()) + sum(bool(c.problem) for c in a.cells)
        n_added = sum(c.added for c in a.cells)
        lines.append(f"| {a.name} | {len(a.cells) - n_added}" + (f" (+{n_added} added)" if n_added else "")
                     + f" | {len(a.cells) - n_added - len(moved)} | {len(moved)} | "
                     + (f"{_g(rel.rel)} ({rel.where()})" if rel else "0") + " | "
                     + (f"{_g(share.ci_share)} ({share.where()})" if share else "0")
                     + f" | {bad} | {len(a.outcome_changes)} |")
    bad_cells = [c for a in comps for c in a.cells if not c.ok]
    bad_outcomes = [(a.name, ch) for a in comps for ch in a.outcome_changes]
    notes = [(a.name, n) for a in comps for n in a.notes]
    n_cells = sum(not c.added for a in comps for c in a.cells)
    n_moved = sum(bool(c.changes or c.problem) for a in comps for c in a.cells)
    named = sorted({c.name for a in comps for c in a.cells if c.different_path and c.changes})
    lines.append("")
    lines.append(f"rule: every value within {rule.rel:g} relative or {rule.abs:g} absolute"
                 + (f", or within {rule.ci_share:g} of the cell's 95% half-width for the cells named as a "
                    f"different floating-point path ({', '.join(rule.different_path)})" if rule.different_path else "")
                 + (f", or within the cell's platform spread ({len(rule.spread)} cell(s) measured)"
                    if rule.spread else "")
                 + f"; no verdict, claim, diagnosis or flip changed (timing metrics not compared: "
                   f"{', '.join(sorted(TIMING_METRICS))})")
    if named:
        lines.append(f"moved cells named as a different path: {len(named)}")
    for c in bad_cells:
        if c.problem:
            lines.append(f"BREAKS THE RULE: {c.name}: {c.problem}")
        bad = sorted((ch for ch in c.changes if not ch.ok), key=lambda ch: -ch.rel)
        for ch in bad[:details]:
            lines.append(f"BREAKS THE RULE: {c.name.rsplit('/', 1)[0]}/{ch.where()}: {ch.old!r} -> {ch.new!r} "
                         f"(relative {_g(ch.rel)}, {_g(ch.ci_share)} of the 95% half-width"
                         + ("" if c.different_path else "; not named as a different path") + ")")
        if len(bad) > details:
            lines.append(f"  ... and {len(bad) - details} more value(s) of {c.name}")
    for name, ch in bad_outcomes:
        lines.append(f"OUTCOME CHANGED: {name}: {ch}")
    for name, n in notes:
        lines.append(f"note: {name}: {n}")
    ok = not bad_cells and not bad_outcomes
    lines.append(f"{n_cells} cell(s) compared, {n_moved} moved; "
                 + ("within the rule" if ok else
                    f"{len(bad_cells)} cell(s) outside the rule, {len(bad_outcomes)} outcome change(s): BREAKS THE RULE"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="compare_results.py",
        description="Compare two result trees (results/ folders, or checkouts holding one) under the rule for a "
                    "change that moves numbers (docs/reproducibility.md): prints per artefact the largest "
                    "relative change and the largest change as a share of the cell's 95%% interval half-width, "
                    "and whether a verdict, claim, diagnosis or sensitivity flip changed; exits 1 when a "
                    "change breaks the rule.",
        epilog="example:\n  git worktree add /tmp/main-results main\n"
               "  python scripts/compare_results.py /tmp/main-results/results results "
               "--different-path 'yu2006/tables/*'",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the committed tree (e.g. a worktree of main)")
    ap.add_argument("new", help="the regenerated tree")
    ap.add_argument("--different-path", action="append", default=[], metavar="PATTERN",
                    help="cells (fnmatch on <paper>/<artefact>/<cell>) whose floating-point path is genuinely "
                         "different: they may move by up to --ci-share of their 95%% half-width (repeatable)")
    ap.add_argument("--only", action="append", default=[], metavar="PATTERN",
                    help="compare only these artefacts (fnmatch on <paper>/<artefact>; repeatable)")
    ap.add_argument("--rel", type=float, default=Rule.rel, help="relative tolerance (default 1e-9)")
    ap.add_argument("--abs", type=float, default=Rule.abs, help="absolute tolerance near zero (default 1e-12)")
    ap.add_argument("--ci-share", type=float, default=Rule.ci_share,
                    help="share of the 95%% half-width allowed for a different path (default 0.01)")
    ap.add_argument("--spread", nargs="?", const="results/platform_spread.json", metavar="FILE",
                    help="accept a value that moves within its cell and metric's platform spread, from FILE "
                         "(default: results/platform_spread.json; the form --measure-spread writes)")
    ap.add_argument("--measure-spread", metavar="OUT",
                    help="instead of comparing: write the platform spread between OLD and NEW (and every --also "
                         "tree), the same code computed under other CPU kernels, to OUT and print it")
    ap.add_argument("--also", action="append", default=[], metavar="TREE",
                    help="with --measure-spread: one more tree computed under another kernel (repeatable)")
    args = ap.parse_args(argv)
    if args.measure_spread:
        cells = measure_spread(args.old, [args.new, *args.also], args.only or None)
        text = json.dumps({"about": "platform spread measured by scripts/compare_results.py --measure-spread: "
                                    "per cell and metric the largest absolute and relative difference between "
                                    "the trees", "trees": [args.old, args.new, *args.also], "cells": cells},
                          indent=1)
        Path(args.measure_spread).write_text(text + "\n")
        for cell, ms in cells.items():
            print(cell + ": " + ", ".join(f"{m} {_g(v['abs'])} ({_g(v['rel'])} rel)" for m, v in sorted(ms.items())))
        return 0
    spread = read_json(Path(args.spread), "platform spread").get("cells", {}) if args.spread else None
    rule = Rule(args.rel, args.abs, args.ci_share, tuple(args.different_path), spread)
    comps = compare_trees(args.old, args.new, rule, args.only or None)
    print(report(comps, rule))
    return 0 if all(a.ok for a in comps) else 1
