"""docs/results.md's numbers, from the records (``results/<paper>/<artefact>.json`` and the
summary tables ``.csv`` beside them): the prose is written by hand, every reproduced number
in it is filled in from the data, so the page cannot drift from the report.

Two kinds of markup, both invisible when the Markdown is rendered:

* a generated block between ``<!-- scorecard ... -->`` and ``<!-- end scorecard -->``: the
  scorecard (published cells consistent, claims by verdict, per artefact and in total), from
  :func:`rankrepro.report.scorecard.scorecard`, the counts of the HTML report;
* a number followed by ``<!--=FORMAT EXPRESSION-->``: the number is replaced by the
  expression's value formatted with the format spec (``.3f``, ``d``, ``,.0f``, ...).
  ``<!--@paper/artefact metric-->`` sets the artefact (and its default metric) the following
  expressions refer to.  The expressions are Python, with ``min``, ``max``, ``abs``,
  ``round``, ``len``, ``sum`` and these functions (``metric``, ``art`` default to the current
  ones; a curve metric's value is its last round unless ``round`` is given):

  ``v(cell, metric, round, field="mean")``
      a cell's reproduced mean (or ``"ci"``, ``"low"``, ``"high"``, ``"n"``), from the summary table;
  ``ids(*algorithms)``
      the cell ids of these algorithms (``max(v(c) - pub(c) for c in ids("prank", "oap_bpm"))``);
  ``vs(algorithm, metric, round)``
      the means of every cell of an algorithm (``min(vs("oap_bpm"))``);
  ``pub(cell, metric)``
      the published value beside a cell;
  ``consistent()``, ``compared()``, ``held()``, ``claims()``, ``inconclusive()``, ``not_held()``
      the artefact's counts (published cells consistent / judged; claims by verdict);
  ``sens(choice, value, key)``
      a sensitivity value's ``consistent``, ``compared``, ``mean_abs_difference``, ``extra_cells``;
  ``sv(choice, value, cell, metric)``
      a cell's headline mean under a sensitivity value;
  ``n_trials()``
      the artefact's number of trials.

:func:`fill` returns the text with every marked number and the scorecard recomputed;
``scripts/results_doc.py`` rewrites docs/results.md with it (``--check``: fail when it
differs), and ``tests/test_results_doc.py`` fails when the committed page and the committed
records disagree.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from .scorecard import scorecard

#: a marked number: the number (digits, thousands commas, decimals; no sign) and its expression
MARK = re.compile(r"(?P<value>\d[\d,]*(?:\.\d+)?)<!--=(?P<fmt>\S+) (?P<expr>.*?)-->")
#: sets the artefact (and default metric) of the expressions that follow
CONTEXT = re.compile(r"<!--@(?P<name>[\w]+/[\w]+)(?: (?P<metric>\w+))?-->")
SCORE_BEGIN = "<!-- scorecard: generated from results/*/*.json by scripts/results_doc.py, do not edit -->"
SCORE_END = "<!-- end scorecard -->"


class DocError(ValueError):
    """A marker that cannot be computed: names the line and the expression."""


class Records:
    """The committed records and summary tables under ``root`` (``results/``)."""

    def __init__(self, root: str | Path = "results"):
        self.root = Path(root)
        self.records = {f"{p.parent.name}/{p.stem}": json.loads(p.read_text())
                        for p in sorted(self.root.glob("*/*.json"))}
        self._summaries: dict[str, pd.DataFrame] = {}

    def record(self, name: str) -> dict:
        if name not in self.records:
            raise KeyError(f"no record results/{name}.json (known: {sorted(self.records)})")
        return self.records[name]

    def summary(self, name: str) -> pd.DataFrame:
        if name not in self._summaries:
            self.record(name)
            self._summaries[name] = pd.read_csv(self.root / f"{name}.csv")
        return self._summaries[name]


class _Scope:
    """The functions an expression may call, for the current artefact."""

    def __init__(self, recs: Records, name: str | None, metric: str | None):
        self.recs, self.name, self.metric = recs, name, metric

    def _art(self, art):
        art = art or self.name
        if art is None:
            raise KeyError("no artefact: put <!--@paper/artefact metric--> before the marker")
        return art

    def _rows(self, cell, metric, round, art):
        art = self._art(art)
        metric = metric or self.metric
        s = self.recs.summary(art)
        rows = s[(s["cell"] == cell) & (s["metric"] == metric)]
        if rows.empty:
            known = sorted(set(s["cell"])) if cell not in set(s["cell"]) else sorted(set(s[s["cell"] == cell]["metric"]))
            raise KeyError(f"{art}: no summary row for cell '{cell}', metric '{metric}' (known: {known})")
        if rows["round"].notna().any():
            rows = rows.sort_values("round")
            rows = rows.tail(1) if round is None else rows[rows["round"] == round]
            if rows.empty:
                raise KeyError(f"{art}: cell '{cell}' has no round {round} of '{metric}'")
        return rows.iloc[0]

    def v(self, cell, metric=None, round=None, field="mean", art=None):
        return float(self._rows(cell, metric, round, art)[field])

    def ids(self, *algorithms, art=None):
        s = self.recs.summary(self._art(art))
        out = []
        for a in algorithms:
            cells = list(dict.fromkeys(s[s["algorithm"] == a]["cell"]))
            if not cells:
                raise KeyError(f"{self._art(art)}: no cell of algorithm '{a}'")
            out += cells
        return out

    def vs(self, algorithm, metric=None, round=None, art=None):
        return [self.v(c, metric, round, art=art) for c in self.ids(algorithm, art=art)]

    def _table_row(self, cell, metric, art):
        art, metric = self._art(art), metric or self.metric
        for t in self.recs.record(art)["table"]:
            if t["cell"] == cell and t["metric"] == metric:
                return t
        raise KeyError(f"{art}: no table row for cell '{cell}', metric '{metric}'")

    def pub(self, cell, metric=None, art=None):
        p = self._table_row(cell, metric, art)["published_mean"]
        if p is None:
            raise KeyError(f"{self._art(art)}: cell '{cell}' has no published value")
        return float(p)

    def _score(self, art):
        return scorecard([self.recs.record(self._art(art))]).artefacts[0]

    def consistent(self, art=None):
        return self._score(art).consistent

    def compared(self, art=None):
        return self._score(art).compared

    def held(self, art=None):
        return self._score(art).held

    def claims(self, art=None):
        return self._score(art).claims

    def inconclusive(self, art=None):
        return self._score(art).inconclusive

    def not_held(self, art=None):
        return self._score(art).not_held

    def _sens_value(self, choice, value, art):
        art = self._art(art)
        for sc in self.recs.record(art).get("sensitivity", []):
            if sc["choice"] == choice:
                for val in sc["values"]:
                    if val["value"] == str(value):
                        return val
                raise KeyError(f"{art}: choice '{choice}' has no value '{value}' "
                               f"(known: {[x['value'] for x in sc['values']]})")
        raise KeyError(f"{art}: no sensitivity choice '{choice}'")

    def sens(self, choice, value, key, art=None):
        return self._sens_value(choice, value, art)[key]

    def sv(self, choice, value, cell, metric=None, art=None):
        metric = metric or self.metric
        for h in self._sens_value(choice, value, art)["headline"]:
            if h["cell"] == cell and h["metric"] == metric:
                return float(h["mean"])
        raise KeyError(f"{self._art(art)}: no headline value of '{cell}' ({metric}) under {choice}={value}")

    def n_trials(self, art=None):
        return int(self.recs.record(self._art(art))["n_trials"])

    def namespace(self) -> dict[str, Any]:
        fns = ("v", "ids", "vs", "pub", "consistent", "compared", "held", "claims", "inconclusive", "not_held", "sens", "sv",
               "n_trials")
        ns: dict[str, Any] = {f: getattr(self, f) for f in fns}
        ns.update(min=min, max=max, abs=abs, round=round, len=len, sum=sum)
        return ns


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def fill_numbers(text: str, recs: Records) -> str:
    """Every ``NUMBER<!--=FORMAT EXPR-->`` with its number recomputed."""
    out, pos = [], 0
    scope = _Scope(recs, None, None)
    token = re.compile(f"{CONTEXT.pattern}|{MARK.pattern}")
    for m in token.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        if m.group("name"):
            scope = _Scope(recs, m.group("name"), m.group("metric"))
            out.append(m.group(0))
            continue
        expr, fmt = m.group("expr"), m.group("fmt")
        try:
            val = eval(expr, {"__builtins__": {}, **scope.namespace()})  # noqa: S307 - the repository's own doc
            if isinstance(val, float) and not math.isfinite(val):
                raise ValueError(f"value {val}")
            s = format(val, fmt)
        except Exception as e:  # noqa: BLE001 - reported with the line
            raise DocError(f"line {_line(text, m.start())}: <!--={fmt} {expr}-->: {type(e).__name__}: {e}") from None
        out.append(f"{s}<!--={fmt} {expr}-->")
    out.append(text[pos:])
    return "".join(out)


def scorecard_markdown(recs: Records) -> str:
    """The scorecard as a Markdown table: per artefact and in total."""
    sc = scorecard(list(recs.records.values()))
    lines = ["| artefact | data | published cells consistent | claims held | inconclusive | not held |",
             "|---|---|---:|---:|---:|---:|"]
    for a in sorted(sc.artefacts, key=lambda a: a.name):
        if not a.reproduced:
            lines.append(f"| `{a.name}` | not run | | | | |")
            continue
        cells = f"{a.consistent} / {a.compared}" if a.compared else (f"({a.references} references)" if a.references
                                                                        else "–")
        lines.append(f"| `{a.name}` | {'original' if a.original else 'substitute'} | {cells} | "
                     f"{a.held} / {a.claims} | {a.inconclusive} | {a.not_held} |")
    lines.append(f"| **all** | {len(sc.reproduced)} of {len(sc.artefacts)} run, {sc.substitutes} on substitutes | "
                 f"**{sc.total('consistent')} / {sc.total('compared')}** | **{sc.total('held')} / {sc.total('claims')}** | "
                 f"{sc.total('inconclusive')} | {sc.total('not_held')} |")
    diag = ", ".join(f"{k} {v}" for k, v in sc.disagreements.items()) or "none"
    return ("\n".join(lines) + f"\n\nDisagreements (cells that differ, claims not held) by diagnosis: {diag}. "
            f"Published values on substitute data ({sc.total('references')}) are references, not judged.")


def fill(text: str, recs: Records) -> str:
    """The page with its scorecard block and every marked number recomputed from ``recs``."""
    if SCORE_BEGIN in text:
        a = text.index(SCORE_BEGIN) + len(SCORE_BEGIN)
        b = text.index(SCORE_END, a)
        text = text[:a] + "\n\n" + scorecard_markdown(recs) + "\n\n" + text[b:]
    return fill_numbers(text, recs)
