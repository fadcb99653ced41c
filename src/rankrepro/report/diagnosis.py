"""How much a diagnosis explains, computed from the record's own sensitivity results.

A diagnosis of kind *open protocol choice* names the choice (``choice``) whose values were run
as extra cells; the record's sensitivity section has, for every value, the headline numbers and
every claim's verdict.  Its strength is then a measurement, never written by hand:

- *reproduces*: under one value of the choice every differing cell it covers is consistent /
  the claim holds (the value named);
- *moves toward*: under the best single value some cells become consistent or their mean gap
  to the paper shrinks (by how much, in the metric's unit and as a share of the main run's
  gap; for a claim: from *not held* to *inconclusive*);
- *not explained*: no value of the choice closes or shrinks it (the values tried named).

Any other diagnosis (*paper*, *substitute data*, *implementation*) has no sweep to measure it
by: its strength is *not swept*, and it rests on its evidence.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2

LEVELS = ("reproduces", "moves toward", "not explained", "not swept")


def _choice(record: dict, name: str | None) -> dict | None:
    return next((s for s in record.get("sensitivity", []) if s["choice"] == name), None) if name else None


def _gaps(sc: dict, cell: str, metric: str) -> dict:
    """value -> (|reproduced - published|, verdict) of one published cell under each value."""
    gaps = {}
    for v in sc["values"]:
        h = next((x for x in v["headline"] if x["cell"] == cell and x["metric"] == metric), None)
        if h is not None and h["published_mean"] is not None and h["mean"] is not None:
            gaps[v["value"]] = (abs(h["mean"] - h["published_mean"]), h["verdict"])
    return gaps


def choice_strength(record: dict, choice: str, rows: list[dict]) -> dict:
    """The strength of one choice's diagnosis over all the differing cells it covers, under ONE
    value of the choice for all of them (the value that closes the most of them, then the one
    with the smallest mean gap): a diagnosis that needs one value for some cells and another
    for others explains less than either."""
    sc = _choice(record, choice)
    if sc is None:
        return {"level": "not swept", "text": "no sweep measures it: it rests on its evidence"}
    per = [_gaps(sc, r["cell"], r["metric"]) for r in rows]
    main = sc["main"]
    tried = [v["value"] for v in sc["values"] if v["value"] != main and all(v["value"] in g for g in per)]
    base = {"choice": choice, "cells": len(rows), "tried": tried}
    if not tried or any(main not in g for g in per):
        return {**base, "level": "not explained", "text": f"no other value of {choice} was run on these cells"}
    g0 = sum(g[main][0] for g in per) / len(per)

    def score(v):
        return (sum(g[v][1] == "consistent" for g in per), -sum(g[v][0] for g in per))

    best = max(tried, key=score)
    ok = sum(g[best][1] == "consistent" for g in per)
    gb = sum(g[best][0] for g in per) / len(per)
    share = (g0 - gb) / g0 if g0 > 0 else 0.0
    out = {**base, "value": best, "consistent": ok, "gap_main": g0, "gap_best": gb, "share": share,
           "per_value": {v: sum(g[v][1] == "consistent" for g in per) for v in [main, *tried]}}
    counts = ", ".join(f"{v} {n}/{len(rows)}" for v, n in out["per_value"].items())
    if ok == len(rows):
        return {**out, "level": "reproduces",
                "text": f"{choice} = {best} makes all {len(rows)} cells consistent (mean gap {g0:.3g} -> {gb:.3g})"}
    if gb < g0 or ok > 0:
        gap = (f"shrinks their mean gap from {g0:.3g} to {gb:.3g} ({share:.0%})" if gb < g0 else
               f"though their mean gap grows from {g0:.3g} to {gb:.3g}")
        return {**out, "level": "moves toward",
                "text": f"{choice} = {best} makes {ok} of the {len(rows)} cells consistent and {gap}; "
                        f"consistent by value: {counts}"}
    return {**out, "level": "not explained",
            "text": f"no value of {choice} ({', '.join(tried)}) shrinks the gap ({g0:.3g}); consistent by value: {counts}"}


def claim_strength(record: dict, claim: dict, diag: dict) -> dict:
    """The strength of the diagnosis of a claim that is not held (or inconclusive)."""
    sc = _choice(record, diag.get("choice"))
    if sc is None:
        return {"level": "not swept", "text": "no sweep measures it: it rests on its evidence"}
    verdicts = {}
    for v in sc["values"]:
        c = next((x for x in v["claims"] if x["id"] == claim["id"]), None)
        if c is not None:
            verdicts[v["value"]] = c["verdict"]
    tried = [v for v in verdicts if v != sc["main"]]
    out = {"choice": sc["choice"], "tried": tried, "verdicts": verdicts}
    held = [v for v in tried if verdicts[v] == "held"]
    if held:
        return {**out, "level": "reproduces", "values": held,
                "text": f"the claim holds under {sc['choice']} = {', '.join(held)}"}
    toward = [v for v in tried if verdicts[v] == "inconclusive"] if claim["verdict"] == "not held" else []
    if toward:
        return {**out, "level": "moves toward", "values": toward,
                "text": f"under {sc['choice']} = {', '.join(toward)} the claim is inconclusive, not held under none"}
    return {**out, "level": "not explained",
            "text": f"under no value of {sc['choice']} ({', '.join(tried) or 'none run'}) does the claim hold"}


def add_strengths(record: dict) -> None:
    """Every diagnosis of a disagreement in the record (the cells that differ, by the choice
    their diagnosis names; a claim not held or inconclusive) gets its ``strength``."""
    groups: dict[str, list[dict]] = {}
    for row in record.get("table", []):
        if row.get("diagnosis") and row.get("verdict") == "differs":
            groups.setdefault(row["diagnosis"].get("choice") or "", []).append(row)
    for choice, rows in groups.items():
        st = choice_strength(record, choice, rows) if choice else {
            "level": "not swept", "text": "no sweep measures it: it rests on its evidence"}
        for row in rows:
            row["diagnosis"] = {**row["diagnosis"], "strength": st}
    for c in record.get("claims", []):
        if c.get("diagnosis") and c.get("verdict") in ("not held", "inconclusive"):
            c["diagnosis"] = {**c["diagnosis"], "strength": claim_strength(record, c, c["diagnosis"])}


def _number_functions(record: dict, summary, trials=None) -> dict:
    """What a diagnosis text may quote: ``v(cell, metric)`` the cell's final mean in this run,
    ``sv(choice, value, cell, metric)`` the same under one value of an open choice (a published
    cell or the headline metric: the sensitivity section's numbers), ``ev(path, *keys)`` a
    value of an evidence record under results/; with the run's trials, ``per(cell, metric)``
    each trial's value, ``pdiff(a, b, metric)`` the mean paired difference and
    ``p_greater(a, b, metric)`` the one-sided paired t-test's p-value (per test query for a
    per-query metric), ``pdiffs`` the paired differences, ``change(cell, metric, r0, r1)`` each
    trial's change of a curve; ``round=`` picks a curve's round (default: its last); on the
    mean curves, ``peak(cell, metric)`` its highest round and value and ``share_above(a, b,
    metric, first)`` the share of rounds at which a is above b."""

    def v(cell: str, metric: str, round: int | None = None) -> float:
        s = summary[(summary["cell"] == cell) & (summary["metric"] == metric)]
        if round is not None:
            s = s[s["round"] == round]
        if s.empty and trials is not None and (trials["cell"] == cell).any():
            return float(_per(cell, metric, round).mean())  # a sensitivity cell: the mean of its trials
        if s.empty:
            raise KeyError(f"no value of cell '{cell}', metric '{metric}'"
                           f"{'' if round is None else f' at round {round}'} in this run")
        return float(s.sort_values("round").iloc[-1]["mean"]) if s["round"].notna().any() else float(s.iloc[-1]["mean"])

    def _per(cell: str, metric: str, round: int | None = None):
        """The per-trial values (per test query for a per-query metric), indexed for pairing."""
        from ..metrics import METRICS

        if trials is None:
            raise KeyError("per-trial values are not available here")
        t = trials[(trials["cell"] == cell) & (trials["metric"] == metric)]
        if t.empty:
            raise KeyError(f"no trials of cell '{cell}', metric '{metric}' in this run")
        if METRICS[metric].per_query:
            # by query id (the queries of the five folds are distinct), averaged over the trials
            # that hold it: the seeds of a LETOR seeds run (one value per query in a by-fold run)
            return t.groupby(t["round"].astype("int64"))["value"].mean().sort_index()
        if t["round"].notna().any():
            t = t[t["round"] == round] if round is not None else t.sort_values("round").groupby("trial").tail(1)
            if t.empty:
                raise KeyError(f"no trials of cell '{cell}', metric '{metric}' at round {round}")
        return t.set_index("trial")["value"].sort_index()

    def per(cell: str, metric: str, round: int | None = None) -> list[float]:
        """Each trial's value (a curve's at ``round``, else its last), in trial order."""
        return [float(x) for x in _per(cell, metric, round)]

    def _paired(a: str, b: str, metric: str, round: int | None = None):
        x, y = _per(a, metric, round), _per(b, metric, round)
        common = x.index.intersection(y.index)
        if common.empty:
            raise KeyError(f"cells '{a}' and '{b}' share no trial of '{metric}'")
        return x.loc[common].to_numpy(float), y.loc[common].to_numpy(float)

    def pdiff(a: str, b: str, metric: str, round: int | None = None) -> float:
        """The mean paired difference a - b over common trials (test queries for a per-query metric)."""
        x, y = _paired(a, b, metric, round)
        return float((x - y).mean())

    def p_greater(a: str, b: str, metric: str, round: int | None = None) -> float:
        """One-sided paired t-test p-value for 'a higher than b' (stats.paired_t_greater)."""
        from ..stats import paired_t_greater

        x, y = _paired(a, b, metric, round)
        return float(paired_t_greater(x, y))

    def sv(choice: str, value: str, cell: str, metric: str) -> float:
        sc = _choice(record, choice)
        if sc is None:
            raise KeyError(f"no open choice '{choice}'")
        val = next((x for x in sc["values"] if x["value"] == str(value)), None)
        if val is None:
            raise KeyError(f"open choice '{choice}' has no value '{value}'")
        h = next((x for x in val["headline"] if x["cell"] == cell and x["metric"] == metric), None)
        if h is None:
            raise KeyError(f"choice {choice}={value}: no headline value of cell '{cell}', metric '{metric}'")
        return float(h["mean"])

    def ev(path: str, *keys):
        """A number from an evidence record the repository keeps (a JSON file under results/,
        written by a script the diagnosis's evidence names), e.g.
        ``ev("results/yu2006/tables/fit_cap.json", "cells", "gpor-n_items400", "sigma_median")``."""
        p = Path(path)
        if p.is_absolute() or not p.parts or p.parts[0] != "results" or ".." in p.parts or p.suffix != ".json":
            raise KeyError(f"ev() reads JSON records under results/, not {path!r}")
        if not p.is_file():
            raise KeyError(f"no evidence record {path} (its script writes it)")
        x = json.loads(p.read_text())
        for k in keys:
            try:
                x = x[k]
            except (KeyError, IndexError, TypeError):
                raise KeyError(f"{path} has no {'/'.join(map(str, keys))}") from None
        return x

    def pdiffs(a: str, b: str, metric: str, round: int | None = None) -> list[float]:
        """The paired differences a - b, trial by trial."""
        x, y = _paired(a, b, metric, round)
        return [float(d) for d in x - y]

    def change(cell: str, metric: str, r0: int, r1: int) -> list[float]:
        """Each trial's change of a curve from round r0 to round r1."""
        x, y = _per(cell, metric, r0), _per(cell, metric, r1)
        return [float(d) for d in (y - x.loc[y.index])]

    def _curve(cell: str, metric: str, first: int | None = None):
        s = summary[(summary["cell"] == cell) & (summary["metric"] == metric) & summary["round"].notna()]
        if first is not None:
            s = s[s["round"] >= first]
        if s.empty:
            raise KeyError(f"no curve of cell '{cell}', metric '{metric}' in this run")
        return s.set_index("round")["mean"].sort_index()

    def peak(cell: str, metric: str) -> tuple[int, float]:
        """The round at which a cell's mean curve is highest, and its value there."""
        c = _curve(cell, metric)
        return int(c.idxmax()), float(c.max())

    def share_above(a: str, b: str, metric: str, first: int | None = None) -> float:
        """The share of the rounds (from ``first`` on) at which a's mean curve is above b's."""
        x, y = _curve(a, metric, first), _curve(b, metric, first)
        common = x.index.intersection(y.index)
        return float((x.loc[common] > y.loc[common]).mean())

    return {"v": v, "sv": sv, "ev": ev, "per": per, "pdiff": pdiff, "pdiffs": pdiffs, "p_greater": p_greater,
            "change": change, "peak": peak, "share_above": share_above}


def render_numbers(record: dict, summary, where: str = "", trials=None, strict: bool = True) -> None:
    """The numbers a diagnosis text quotes, generated from this run: a text may hold Jinja
    expressions such as ``{{ v("cgpr-n_items400", "mae") | fmt(".3f") }}`` (the report's engine,
    a missing name an error), rendered once when the record is made, so that no quoted number
    can go stale.  An error names the artefact and the diagnosis; with ``strict=False`` (a scale
    other than the paper's, whose runs may lack a quoted round or cell) the text is kept with its
    numbers left out and says so."""
    from .templating import fmt

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    env.filters["fmt"] = fmt
    funcs = _number_functions(record, summary, trials)

    def render(d: dict | None, key: str) -> dict | None:
        if not d or "{{" not in str(d.get("text", "")):
            return d
        try:
            return {**d, "text": env.from_string(d["text"]).render(**funcs)}
        except (jinja2.TemplateError, KeyError, ValueError) as e:
            if strict:
                raise ValueError(f"{where}: the diagnosis of {key}: {e}") from None
            # a smaller scale (smoke) lacks some quoted rounds or cells: the text without its numbers
            return {**d, "text": re.sub(r"\{\{.*?\}\}", "...", d["text"], flags=re.S)
                    + " [its numbers are quoted at paper scale]"}

    for row in record.get("table", []):
        row["diagnosis"] = render(row.get("diagnosis"), f"{row['cell']} {row['metric']}")
    for c in record.get("claims", []):
        c["diagnosis"] = render(c.get("diagnosis"), f"claim {c['id']}")
