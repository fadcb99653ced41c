"""``rankrepro compare RUN_A RUN_B``: two runs side by side, for reading.

Per artefact that both runs hold (``results/<paper>/<artefact>.json``: the ``--out`` folder of
``rankrepro run`` or ``arena``, ``runs/<scale>/``, a checkout, or a ``results/`` folder itself),
and per cell, metric and round of its table: each run's mean and 95% Student-t half-width,
the difference B - A and its 95% interval (Welch: the two half-widths turned back into standard
errors, Welch-Satterthwaite degrees of freedom); cells only one run has are listed with the
other side empty.  Then each claim's verdict in A and in B.  Nothing is judged: two learners,
two seeds or two configs differ as they differ (``scripts/compare_results.py`` is the other
comparison: a regression check of a code change against the rule for numbers that move).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from scipy import stats as _st

from ..files import read_json


class CompareError(ValueError):
    """A run folder that holds no records (one line)."""


def results_dir(run: str | Path) -> Path:
    """The ``results/`` folder of a run folder (or the folder itself when it is one)."""
    p = Path(run)
    if (p / "results").is_dir():
        return p / "results"
    if p.name == "results" and p.is_dir():
        return p
    raise CompareError(f"{run}: no results/ folder there (give the --out folder of `rankrepro run`, "
                       "runs/<scale>, a checkout or a results/ folder)")


def records(results: Path) -> dict[str, Path]:
    """``<paper>/<artefact>`` -> its record, the artefacts' records only (not the arena's
    comparisons, not the report)."""
    out = {}
    for p in sorted(results.glob("*/*.json")):
        if p.parent.name != "report":
            out[f"{p.parent.name}/{p.stem}"] = p
    return out


def _se(ci, n) -> float | None:
    if ci is None or n is None or n < 2 or not math.isfinite(ci):
        return None
    return ci / _st.t.ppf(0.975, n - 1)


def difference(a: dict | None, b: dict | None) -> tuple[float | None, float | None]:
    """B - A and the half-width of its 95% Welch interval (None where a side lacks it)."""
    if a is None or b is None or a.get("mean") is None or b.get("mean") is None:
        return None, None
    d = b["mean"] - a["mean"]
    sa, sb = _se(a.get("ci"), a.get("n")), _se(b.get("ci"), b.get("n"))
    if sa is None or sb is None:
        return d, None
    var = sa ** 2 + sb ** 2
    if var == 0:
        return d, 0.0
    df = var ** 2 / (sa ** 4 / (a["n"] - 1) + sb ** 4 / (b["n"] - 1))
    return d, float(_st.t.ppf(0.975, df) * math.sqrt(var))


@dataclass
class Row:
    artefact: str
    cell: str
    label: str
    metric: str
    round: int | None
    a: dict | None
    b: dict | None

    def values(self) -> dict:
        d, half = difference(self.a, self.b)
        side = lambda r, k: None if r is None else r.get(k)  # noqa: E731
        return {"artefact": self.artefact, "cell": self.cell, "label": self.label, "metric": self.metric,
                "round": self.round, "a_mean": side(self.a, "mean"), "a_ci": side(self.a, "ci"),
                "a_n": side(self.a, "n"), "b_mean": side(self.b, "mean"), "b_ci": side(self.b, "ci"),
                "b_n": side(self.b, "n"), "difference": d, "difference_ci": half}


def compare(run_a: str | Path, run_b: str | Path, only: list[str] | None = None) -> tuple[list[Row], list[dict], list[str]]:
    """The rows of every artefact both runs hold (or those ``only`` names: papers or
    ``<paper>/<artefact>``), the claims side by side, and the artefacts one run alone holds."""
    ra, rb = records(results_dir(run_a)), records(results_dir(run_b))
    keep = lambda n: not only or n in only or n.split("/")[0] in only  # noqa: E731
    both = [n for n in ra if n in rb and keep(n)]
    alone = [f"{n} (only in {'A' if n in ra else 'B'})" for n in sorted(set(ra) ^ set(rb)) if keep(n)]
    if not both:
        raise CompareError(f"no artefact in both runs ({results_dir(run_a)}: {len(ra)} records, "
                           f"{results_dir(run_b)}: {len(rb)})" + (f" among {', '.join(only)}" if only else ""))
    rows, claims = [], []
    for name in both:
        a, b = read_json(ra[name], "record"), read_json(rb[name], "record")
        key = lambda t: (t["cell"], t["metric"], t.get("round"))  # noqa: E731
        ta, tb = {key(t): t for t in a.get("table") or []}, {key(t): t for t in b.get("table") or []}
        for k in list(ta) + [k for k in tb if k not in ta]:
            t = ta.get(k) or tb.get(k)
            rows.append(Row(name, k[0], t.get("label") or k[0], k[1], k[2], ta.get(k), tb.get(k)))
        ca, cb = {c["id"]: c for c in a.get("claims") or []}, {c["id"]: c for c in b.get("claims") or []}
        for cid in list(ca) + [c for c in cb if c not in ca]:
            claims.append({"artefact": name, "claim": cid, "a": (ca.get(cid) or {}).get("verdict"),
                           "b": (cb.get(cid) or {}).get("verdict")})
    return rows, claims, alone


def _num(v, fmt=".4g") -> str:
    return "" if v is None else format(v, fmt)


def render(rows: list[Row], claims: list[dict], alone: list[str], run_a: str, run_b: str) -> str:
    """Plain text, one block per artefact."""
    out = [f"A = {run_a}", f"B = {run_b}", ""]
    by: dict[str, list[Row]] = {}
    for r in rows:
        by.setdefault(r.artefact, []).append(r)
    for name, rs in by.items():
        head = ("cell", "metric", "round", "A mean ± 95% CI", "B mean ± 95% CI", "B - A ± 95% CI")
        lines = []
        for r in rs:
            v = r.values()
            a = f"{_num(v['a_mean'])} ± {_num(v['a_ci'], '.2g')}" if v["a_mean"] is not None else "-"
            b = f"{_num(v['b_mean'])} ± {_num(v['b_ci'], '.2g')}" if v["b_mean"] is not None else "-"
            d = (f"{_num(v['difference'], '+.3g')}" + (f" ± {_num(v['difference_ci'], '.2g')}"
                                                       if v["difference_ci"] is not None else "")
                 if v["difference"] is not None else "")
            lines.append((r.label if r.label == r.cell else f"{r.label} ({r.cell})", r.metric,
                          "" if r.round is None else str(r.round), a, b, d))
        width = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
        out.append(f"## {name}")
        out += ["  ".join(x[i].ljust(width[i]) for i in range(len(head))).rstrip() for x in [head, *lines]]
        cl = [c for c in claims if c["artefact"] == name]
        if cl:
            out.append("claims: " + "; ".join(f"{c['claim']}: {c['a'] or '-'} / {c['b'] or '-'}"
                                              + ("" if c["a"] == c["b"] else " (differs)") for c in cl))
        out.append("")
    if alone:
        out.append("not compared: " + ", ".join(alone))
    return "\n".join(out).rstrip() + "\n"


def write_csv(rows: list[Row], path: str | Path) -> None:
    import pandas as pd

    from ..files import write_text

    write_text(path, pd.DataFrame([r.values() for r in rows]).to_csv(index=False, lineterminator="\n"))
