"""How much a diagnosis explains, computed from the record's own sensitivity results over the
whole artefact, never written by hand.

A diagnosis of kind *open protocol choice* names the choice (``choice``) whose values were run
as extra cells; the record's sensitivity section has, for every value, the headline numbers (the
artefact's published cells) and every claim's verdict.  The value a diagnosis is measured under
is picked after the fact among the k values tried (one value for all the cells it covers), so
the search is counted (where the choice is crossed in the artefact's multiverse, the values
tried are every reading with the choice off its main value, and the strength says how the
choice moves the artefact averaged over the other choices' readings, and whether it interacts:
:func:`crossed_effect`):

- over ALL published cells of the artefact, under that value against the main run: the cells
  it makes consistent and those it makes inconsistent, the mean gap |reproduced - published|,
  and a one-sided paired t-test over the cells that the gap shrinks, Holm-adjusted over the k
  values tried (``p_gap_holm``);
- the paper's claims of the artefact that it turns held (each claim's adjusted p-value Holm-
  adjusted again over the k values) and those it breaks (held in the main run, not under it);

and the level follows from those numbers alone:

- *reproduces*: under the value the diagnosed cells are consistent (the claim holds), EVERY
  published cell of the artefact is consistent (on original data), the whole-artefact gap does
  not grow, and no claim of the artefact is broken;
- *moves toward*: the whole-artefact gap shrinks significantly (``p_gap_holm`` < 0.05; an
  artefact without published cells: nothing to shrink) and the diagnosed cell's own gap shrinks
  (a claim: its verdict moves toward *held*);
- *not explained*: otherwise.

Each cell gets its own level (a diagnosis shared by several cells is measured under one value
for all of them, but a cell that value does not help is not carried by the others).  The record
marks the value ``post_hoc`` when it was picked among more than one.  Any other diagnosis
(*paper*, *substitute data*, *implementation*) has no sweep to measure it by: its strength is
*not swept*, and it rests on its evidence.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import numpy as np

LEVELS = ("reproduces", "moves toward", "not explained", "not swept")
#: the level the whole-artefact tests are made at
ALPHA = 0.05
_ORDER = {"not held": 0, "not evaluable": 0, "inconclusive": 1, "held": 2}
NOT_SWEPT = {"level": "not swept", "text": "no sweep measures it: it rests on its evidence"}


def _choice(record: dict, name: str | None) -> dict | None:
    """The sensitivity choice a diagnosis names, as its values were run.  Where the choice is
    crossed in the artefact's multiverse, its values are every reading with the choice off its
    main value, whatever the other choices (labelled by the reading, "a=y, b=q"), beside the
    main reading: the strength is then measured over the multiverse, the search counted over
    all of them (Holm over the readings tried), and ``multiverse_effect`` says how the choice
    acts with the others (:func:`crossed_effect`)."""
    if not name:
        return None
    sc = next((s for s in record.get("sensitivity", []) if s["choice"] == name), None)
    mv = record.get("multiverse")
    if sc is None or not mv or name not in mv.get("cross", []):
        return sc
    from .readings import all_readings, reading_key

    values, main = [], None
    for reading, v in all_readings(record["sensitivity"]):
        if not reading:
            main = {**v, "value": sc["main"], "main": True}
        elif name in reading:
            values.append({**v, "value": reading_key(reading), "main": False})
    if main is None:
        return sc
    return {**sc, "values": [main, *values], "multiverse_effect": crossed_effect(record, name)}


def crossed_effect(record: dict, name: str) -> dict:
    """How choice ``name`` moves the artefact's mean gap to the paper (over its published cells,
    or its claims held without them), averaged over the readings of the other choices: each pair
    of readings that differ in ``name`` alone (one at its main value) gives an effect; their
    mean, range and count, and whether it *interacts* (the effect changes sign across the other
    choices' readings)."""
    from .readings import all_readings

    rows = [(r, v) for r, v in all_readings(record["sensitivity"])]
    effects = []
    for r, v in rows:
        if name not in r:
            continue
        rest = {k: x for k, x in r.items() if k != name}
        base = next((w for q, w in rows if q == rest), None)
        if base is None:
            continue
        if v.get("mean_abs_difference") is not None and base.get("mean_abs_difference") is not None:
            effects.append(v["mean_abs_difference"] - base["mean_abs_difference"])
        else:
            held = lambda w: sum(c["verdict"] == "held" for c in w["claims"])  # noqa: E731
            effects.append(float(held(v) - held(base)))
    if not effects:
        return {"pairs": 0}
    signs = {np.sign(round(e, 12)) for e in effects} - {0.0}
    return {"pairs": len(effects), "mean": float(np.mean(effects)), "low": float(min(effects)),
            "high": float(max(effects)), "interacts": len(signs) > 1,
            "on": "mean gap" if record.get("table") and any(v.get("mean_abs_difference") is not None
                                                            for _, v in rows) else "claims held"}


def _published(value: dict) -> dict:
    """(cell, metric) -> (|reproduced - published|, verdict) of a value's published headline rows."""
    return {(h["cell"], h["metric"]): (abs(h["mean"] - h["published_mean"]), h["verdict"])
            for h in value["headline"]
            if h.get("published_mean") is not None and h.get("mean") is not None and np.isfinite(h["mean"])}


def _claims_holm(sc: dict) -> dict:
    """value -> claim id -> the verdict under that value with the claim's adjusted p-value Holm-
    adjusted again over the k values tried (a value that makes a claim hold was searched for)."""
    from ..stats import holm

    tried = [v for v in sc["values"] if not v["main"]]
    out = {v["value"]: {} for v in tried}
    ids = list(dict.fromkeys(c["id"] for v in tried for c in v["claims"]))  # in order: records repeat bit for bit
    for cid in ids:
        cs = [next((c for c in v["claims"] if c["id"] == cid), None) for v in tried]
        ps = [c.get("p_adjusted", np.nan) if c is not None else np.nan for c in cs]
        adj = holm([np.nan if p is None else p for p in ps])
        for v, c, pa in zip(tried, cs, adj):
            if c is None:
                continue
            if "p_adjusted" not in c or c["verdict"] == "not evaluable":
                out[v["value"]][cid] = c["verdict"]  # an untested claim: its verdict as given
            elif np.isfinite(pa) and pa < ALPHA and c.get("direction") in ("held", "not held"):
                out[v["value"]][cid] = c["direction"]
            else:
                out[v["value"]][cid] = "inconclusive"
    return out


def whole_artefact(record: dict, sc: dict) -> dict:
    """value -> what it does to the whole artefact against the main run (see the module)."""
    from ..stats import holm, paired_t_greater

    main = next(v for v in sc["values"] if v["main"])
    pm = _published(main)
    main_claims = {c["id"]: c["verdict"] for c in record.get("claims", [])}
    holm_claims = _claims_holm(sc)
    tried = [v for v in sc["values"] if not v["main"]]
    out, ps = {}, []
    for v in tried:
        pv = _published(v)
        keys = [k for k in pm if k in pv]
        gm = np.array([pm[k][0] for k in keys])
        gv = np.array([pv[k][0] for k in keys])
        if len(keys) >= 2:
            p = paired_t_greater(gm, gv)
            p = 1.0 if not np.isfinite(p) else p  # no spread and no change: nothing shrinks
        else:  # one published cell: no test, its gap shrinks or it does not
            p = (0.0 if gv[0] < gm[0] else 1.0) if keys else float("nan")
        ps.append(p)
        verdicts = holm_claims.get(v["value"], {})
        out[v["value"]] = {
            "cells": len(keys),
            "gap_main": float(gm.mean()) if keys else None, "gap_value": float(gv.mean()) if keys else None,
            "p_gap": None if not np.isfinite(p) else float(p),
            "made_consistent": [f"{c} {m}" for (c, m) in keys if pm[(c, m)][1] == "differs" and pv[(c, m)][1] == "consistent"],
            "made_inconsistent": [f"{c} {m}" for (c, m) in keys if pm[(c, m)][1] == "consistent" and pv[(c, m)][1] == "differs"],
            "consistent_main": sum(pm[k][1] == "consistent" for k in keys),
            "consistent_value": sum(pv[k][1] == "consistent" for k in keys),
            "judged": any(pm[k][1] in ("consistent", "differs") for k in keys),
            "claims_held": sorted(c for c, vv in verdicts.items() if vv == "held" and main_claims.get(c) != "held"),
            "claims_broken": sorted(c for c, vv in verdicts.items() if main_claims.get(c) == "held" and vv != "held"),
            "claim_verdicts": verdicts,
        }
    adj = holm(ps) if ps else []
    for v, pa in zip(tried, adj):
        out[v["value"]]["p_gap_holm"] = None if not np.isfinite(pa) else float(pa)
    return out


def _gap_shrinks(w: dict) -> bool:
    """The whole artefact's gap shrinks significantly (Holm over the values), or the artefact has
    no published cells to shrink."""
    if not w["cells"]:
        return True
    return w.get("p_gap_holm") is not None and w["p_gap_holm"] < ALPHA and w["gap_value"] < w["gap_main"]


def _whole_ok(w: dict) -> bool:
    """Every published cell consistent (on original data), the gap not grown, no claim broken."""
    all_consistent = not w["judged"] or w["consistent_value"] == w["cells"]
    no_growth = not w["cells"] or w["gap_value"] <= w["gap_main"] + 1e-12
    return all_consistent and no_growth and not w["claims_broken"]


def _whole_text(choice: str, value: str, k: int, w: dict) -> str:
    t = f"{choice} = {value}" + (f" (picked after the fact among the {k} values tried)" if k > 1 else "")
    if w["cells"]:
        ph = "-" if w.get("p_gap_holm") is None else f"{w['p_gap_holm']:.3g}"
        t += (f": over all {w['cells']} published cells the mean gap goes {w['gap_main']:.3g} -> {w['gap_value']:.3g}"
              f" (one-sided paired p over the cells that it shrinks, Holm over the values: {ph})")
        if w["judged"]:
            t += (f"; consistent {w['consistent_main']} -> {w['consistent_value']} of {w['cells']}"
                  f" ({len(w['made_consistent'])} made consistent, {len(w['made_inconsistent'])} made inconsistent)")
    t += ("; claims it turns held: " + (", ".join(w["claims_held"]) or "none")
          + "; claims it breaks: " + (", ".join(w["claims_broken"]) or "none"))
    return t


def _effect_text(choice: str, eff: dict | None) -> str:
    if not eff or not eff.get("pairs"):
        return ""
    unit = "the mean gap" if eff["on"] == "mean gap" else "the claims held"
    return (f"; over the multiverse, {choice} moves {unit} by {eff['mean']:+.3g} on average over the other "
            f"choices' readings ({eff['pairs']} pairs, {eff['low']:+.3g} to {eff['high']:+.3g}"
            + ("; it interacts: the effect changes sign with the other choices)" if eff["interacts"] else ")"))


def choice_strength(record: dict, choice: str, rows: list[dict]) -> dict:
    """The strength of one choice's diagnosis of the differing cells ``rows``: the value picked
    (the best level, then the most of these cells consistent, then their smallest mean gap), its
    whole-artefact effect, and a level per cell (``per_cell``)."""
    sc = _choice(record, choice)
    if sc is None:
        return dict(NOT_SWEPT)
    main = sc["main"]
    tried = [v["value"] for v in sc["values"] if not v["main"]]
    base = {"choice": choice, "cells": len(rows), "tried": tried, "post_hoc": len(tried) > 1,
            **({"multiverse_effect": sc["multiverse_effect"]} if sc.get("multiverse_effect") else {})}
    per = {v["value"]: _published(v) for v in sc["values"]}
    keys = [(r["cell"], r["metric"]) for r in rows]
    if not tried or any(k not in per[main] for k in keys) or any(k not in per[v] for v in tried for k in keys):
        return {**base, "level": "not explained", "text": f"no other value of {choice} was run on these cells",
                "per_cell": {f"{c} {m}": "not explained" for c, m in keys}}
    whole = whole_artefact(record, sc)

    def levels(v):
        w = whole[v]
        out = {}
        for k in keys:
            ok = per[v][k][1] == "consistent"
            if ok and w["judged"] and _whole_ok(w) and all(per[v][x][1] == "consistent" for x in keys):
                out[k] = "reproduces"
            elif _gap_shrinks(w) and per[v][k][0] < per[main][k][0]:
                out[k] = "moves toward"
            else:
                out[k] = "not explained"
        return out

    rank = {"reproduces": 2, "moves toward": 1, "not explained": 0}

    def score(v):
        lv = levels(v)
        return (min(rank[x] for x in lv.values()), sum(rank[x] for x in lv.values()),
                sum(per[v][k][1] == "consistent" for k in keys), -sum(per[v][k][0] for k in keys))

    best = max(tried, key=score)
    lv = levels(best)
    g0 = sum(per[main][k][0] for k in keys) / len(keys)
    gb = sum(per[best][k][0] for k in keys) / len(keys)
    ok = sum(per[best][k][1] == "consistent" for k in keys)
    level = max(lv.values(), key=lambda x: rank[x]) if len(set(lv.values())) == 1 else (
        "moves toward" if any(x != "not explained" for x in lv.values()) else "not explained")
    if all(x == "reproduces" for x in lv.values()):
        level = "reproduces"
    text = (f"{_whole_text(choice, best, len(tried), whole[best])}; "
            + (f"this cell: {'consistent' if ok else 'not consistent'} under it, its gap {g0:.3g} -> {gb:.3g}"
               if len(keys) == 1 else
               f"the {len(keys)} cells diagnosed: {ok} consistent under it, their mean gap {g0:.3g} -> {gb:.3g}")
            + _effect_text(choice, sc.get("multiverse_effect")))
    return {**base, "value": best, "consistent": ok, "gap_main": g0, "gap_best": gb,
            "share": (g0 - gb) / g0 if g0 > 0 else 0.0, "whole": whole[best], "level": level, "text": text,
            "per_cell": {f"{c} {m}": lv[(c, m)] for c, m in keys},
            "per_value": {v: sum(per[v][k][1] == "consistent" for k in keys) for v in [main, *tried]}}


def claim_strength(record: dict, claim: dict, diag: dict) -> dict:
    """The strength of the diagnosis of a claim that is not held (or inconclusive)."""
    sc = _choice(record, diag.get("choice"))
    if sc is None:
        return dict(NOT_SWEPT)
    whole = whole_artefact(record, sc)
    tried = [v["value"] for v in sc["values"] if not v["main"]]
    verdicts = {v["value"]: next((c["verdict"] for c in v["claims"] if c["id"] == claim["id"]), None)
                for v in sc["values"]}
    base = {"choice": sc["choice"], "tried": tried, "post_hoc": len(tried) > 1, "verdicts": verdicts,
            **({"multiverse_effect": sc["multiverse_effect"]} if sc.get("multiverse_effect") else {})}
    if not tried:
        return {**base, "level": "not explained", "text": f"no other value of {sc['choice']} was run"}

    def level(v):
        w = whole[v]
        corrected = w["claim_verdicts"].get(claim["id"])
        if corrected == "held" and _whole_ok(w):
            return "reproduces", corrected
        if _ORDER.get(corrected, 0) > _ORDER.get(claim["verdict"], 0) and _gap_shrinks(w):
            return "moves toward", corrected
        return "not explained", corrected

    rank = {"reproduces": 2, "moves toward": 1, "not explained": 0}
    best = max(tried, key=lambda v: (rank[level(v)[0]], _ORDER.get(level(v)[1], 0)))
    lv, corrected = level(best)
    text = (f"under {sc['choice']} = {best} the claim is {verdicts[best]} "
            f"({corrected} after Holm over the {len(tried)} value{'s' if len(tried) != 1 else ''} tried); "
            + _whole_text(sc["choice"], best, len(tried), whole[best]) + _effect_text(sc["choice"],
                                                                                      sc.get("multiverse_effect")))
    return {**base, "value": best, "corrected_verdict": corrected, "whole": whole[best], "level": lv, "text": text}


def add_strengths(record: dict) -> None:
    """Every diagnosis of a disagreement in the record (the cells that differ, by the choice
    their diagnosis names; a claim not held or inconclusive) gets its ``strength``; a cell's
    level is its own (``per_cell``), the rest is shared by the cells of its choice."""
    groups: dict[str, list[dict]] = {}
    for row in record.get("table", []):
        if row.get("diagnosis") and row.get("verdict") == "differs":
            groups.setdefault(row["diagnosis"].get("choice") or "", []).append(row)
    for choice, rows in groups.items():
        st = choice_strength(record, choice, rows) if choice else dict(NOT_SWEPT)
        for row in rows:
            own = (st.get("per_cell") or {}).get(f"{row['cell']} {row['metric']}", st["level"])
            row["diagnosis"] = {**row["diagnosis"], "strength": {**st, "level": own}}
    for c in record.get("claims", []):
        if c.get("diagnosis") and c.get("verdict") in ("not held", "inconclusive"):
            c["diagnosis"] = {**c["diagnosis"], "strength": claim_strength(record, c, c["diagnosis"])}


def _number_functions(record: dict, summary, trials=None) -> dict:
    """What a diagnosis text may quote: ``v(cell, metric)`` the cell's final mean in this run,
    ``sv(choice, value, cell, metric)`` the same under one value of an open choice (a published
    cell or the headline metric: the sensitivity section's numbers), ``ev(path, *keys)`` a
    value of an evidence record under results/; with the run's trials, ``per(cell, metric)``
    each trial's value, ``pdiff(a, b, metric)`` the mean paired difference and
    ``ci(cell, metric)`` its 95% half-width, ``cv(choice, value, claim)`` a claim's verdict under
    one value of a choice and ``mv(claim)``
    its verdict in the main run; ``p_greater(a, b, metric)`` the one-sided paired t-test's p-value (per test query for a
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
        from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name

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

    def _value_of(choice: str, value: str) -> dict:
        """One value's entry of an open choice in the record's sensitivity section."""
        sc = next((s for s in record.get("sensitivity", []) if s["choice"] == choice), None)  # as run
        if sc is None:
            raise KeyError(f"no open choice '{choice}'")
        val = next((x for x in sc["values"] if x["value"] == str(value)), None)
        if val is None:
            raise KeyError(f"open choice '{choice}' has no value '{value}'")
        return val

    def sv(choice: str, value: str, cell: str, metric: str) -> float:
        val = _value_of(choice, value)
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

    def ci(cell: str, metric: str) -> float:
        """A cell's 95% half-width (its final round for a curve) in this run."""
        s = summary[(summary["cell"] == cell) & (summary["metric"] == metric)]
        if s.empty:
            raise KeyError(f"no value of cell '{cell}', metric '{metric}' in this run")
        return float(s.sort_values("round").iloc[-1]["ci"]) if s["round"].notna().any() else float(s.iloc[-1]["ci"])

    def cv(choice: str, value: str, claim: str) -> str:
        """A claim's verdict under one value of an open choice (the sensitivity section's)."""
        val = _value_of(choice, value)
        c = next((x for x in val["claims"] if x["id"] == claim), None)
        if c is None:
            raise KeyError(f"choice {choice}={value}: no claim '{claim}'")
        return c["verdict"]

    def mv(claim: str) -> str:
        """A claim's verdict in the main run."""
        c = next((x for x in record.get("claims", []) if x["id"] == claim), None)
        if c is None:
            raise KeyError(f"no claim '{claim}' in this record")
        return c["verdict"]

    return {"v": v, "sv": sv, "ev": ev, "cv": cv, "mv": mv, "ci": ci, "per": per, "pdiff": pdiff, "pdiffs": pdiffs, "p_greater": p_greater,
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
