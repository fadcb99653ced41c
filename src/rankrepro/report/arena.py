"""The arena's comparison of one family of learners over several data sets (Demsar 2006).

A family is defined by ``config/arena/<family>.yaml``: its member experiments (ordinary
experiments of the catalog, ``config/experiment/arena/*.yaml``, each one data set with its
paper's protocol and seeds), the metric that ranks the learners and which way is better, what a
block of the comparison is (a data set, or a fold of a data set), for a learner run on a grid,
the setting that enters the comparison (fixed in the file before any result is seen), and, when
members share a data set (e.g. one experiment per training size), each member's column label.

From the members' cells it computes, per learner and data set, the mean and 95% Student-t
interval of the metric (its last round for a curve), each learner's average rank over the
blocks, Friedman's test (and Iman & Davenport's F), Nemenyi's critical difference and every
pair of learners compared by their average ranks, Holm-corrected (:mod:`rankrepro.stats`), and
draws the critical-difference diagram.  Outputs: ``results/arena/comparison/<family>.{json,md,csv}``
and ``figures/arena/comparison/cd_<family>.png`` (beside the members' own records and figures).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from .. import provenance
from ..files import atomic_write
from .md import md_cell, md_text
from ..metrics import METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from ..pipeline.cells import Experiment, same_value
from ..stats import (block_ranks, cd_groups, critical_difference, friedman, nemenyi_q, pairwise_rank_tests,
                     t_interval)

#: the keys of config/arena/<family>.yaml
KEYS = ("title", "description", "experiments", "labels", "metric", "better", "blocks", "alpha", "enter", "notes")
BLOCKS = ("dataset", "fold")


class ArenaError(ValueError):
    """A mistake in config/arena/<family>.yaml or in what its experiments run, naming the key."""

    def __init__(self, family: str, key: str, message: str):
        super().__init__(f"config error in config/arena/{family}.yaml at key '{key}': {message}")
        self.family, self.key = family, key


@dataclass
class Arena:
    family: str
    title: str
    experiments: list[str]
    metric: str
    better: str
    blocks: str
    alpha: float
    enter: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    description: str = ""
    text: str = ""  # the file as written
    #: the column label of a member experiment (default: its data set's name), for members
    #: that share a data set (e.g. one per training size)
    labels: dict[str, str] = field(default_factory=dict)

    @property
    def lower_is_better(self) -> bool:
        return self.better == "lower"


def list_arenas(config_dir: str | os.PathLike) -> list[str]:
    """The families of the arena: the files ``config/arena/<family>.yaml``."""
    d = Path(config_dir) / "arena"
    return sorted(p.stem for p in d.glob("*.yaml")) if d.is_dir() else []


def load_arena(family: str, config_dir: str | os.PathLike, experiments: list[str] | None = None) -> Arena:
    """The family's file, checked (every key known, the metric known, the members in
    ``experiments`` when given: the catalog's names).  Raises :class:`ArenaError`."""
    path = Path(config_dir) / "arena" / f"{family}.yaml"
    if not path.is_file():
        known = ", ".join(list_arenas(config_dir)) or "none"
        raise ArenaError(family, "family", f"no file {path} (known families: {known})")
    text = path.read_text()
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise ArenaError(family, "file", f"not YAML: {e}") from None
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise ArenaError(family, unknown[0], f"unknown key (known: {', '.join(KEYS)})")
    for key in ("title", "experiments", "metric", "better", "blocks"):
        if key not in raw:
            raise ArenaError(family, key, "missing")
    exps = raw["experiments"]
    if not isinstance(exps, list) or len(exps) < 1 or not all(isinstance(e, str) for e in exps):
        raise ArenaError(family, "experiments", "a list of experiment names <paper>/<artefact>")
    if experiments is not None:
        for i, e in enumerate(exps):
            if e not in experiments:
                raise ArenaError(family, f"experiments[{i}]", f"no experiment '{e}' in the catalog")
    if raw["metric"] not in METRICS:
        raise ArenaError(family, "metric", f"unknown metric '{raw['metric']}' (known: {', '.join(sorted(METRICS))})")
    if raw["better"] not in ("lower", "higher"):
        raise ArenaError(family, "better", f"'lower' or 'higher', got {raw['better']!r}")
    if raw["blocks"] not in BLOCKS:
        raise ArenaError(family, "blocks", f"one of {', '.join(BLOCKS)}, got {raw['blocks']!r}")
    alpha = raw.get("alpha", 0.05)
    if not isinstance(alpha, float) or not 0.0 < alpha < 0.5:
        raise ArenaError(family, "alpha", f"a level in (0, 0.5), got {alpha!r}")
    enter = raw.get("enter") or {}
    if not isinstance(enter, dict) or not all(isinstance(v, dict) for v in enter.values()):
        raise ArenaError(family, "enter", "a mapping learner -> {hyperparameter: value}")
    notes = raw.get("notes") or []
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ArenaError(family, "notes", "a list of sentences")
    labels = raw.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) and v for v in labels.values()):
        raise ArenaError(family, "labels", "a mapping member experiment -> its column's label")
    for name in labels:
        if name not in exps:
            raise ArenaError(family, f"labels.{name}", f"not one of the family's experiments ({', '.join(exps)})")
    return Arena(family, str(raw["title"]), list(exps), raw["metric"], raw["better"], raw["blocks"], float(alpha),
                 dict(enter), list(notes), str(raw.get("description") or ""), text, dict(labels))


def entering_cells(arena: Arena, exps: dict[str, Experiment]) -> dict[str, dict[str, str]]:
    """Per learner (algorithm key, in the first experiment's order), per member experiment, the
    id of the cell that enters the comparison: the learner's only cell, or the cell of its grid
    that ``enter.<learner>`` names.  Every learner must run in every member (the comparison
    needs a complete table).  Raises :class:`ArenaError`."""
    first = exps[arena.experiments[0]]
    learners = list(dict.fromkeys(c.algorithm for c in first.cells))
    for name in arena.experiments[1:]:
        theirs = {c.algorithm for c in exps[name].cells}
        if theirs != set(learners):
            raise ArenaError(arena.family, "experiments",
                             f"'{name}' runs the learners {sorted(theirs)}, '{first.name}' {sorted(learners)}: "
                             "every member must run the same learners")
    for key in arena.enter:
        if key not in learners:
            raise ArenaError(arena.family, f"enter.{key}", f"no learner '{key}' (learners: {', '.join(learners)})")
    out: dict[str, dict[str, str]] = {}
    for alg in learners:
        out[alg] = {}
        for name in arena.experiments:
            cells = [c for c in exps[name].cells if c.algorithm == alg]
            want = arena.enter.get(alg)
            if want is not None:
                for p in want:
                    if not any(p in c.params for c in cells):
                        raise ArenaError(arena.family, f"enter.{alg}.{p}",
                                         f"learner '{alg}' of '{name}' has no hyperparameter '{p}'")
                cells = [c for c in cells if all(same_value(c.params[p], v) for p, v in want.items())]
            if len(cells) != 1:
                ids = [c.id for c in exps[name].cells if c.algorithm == alg]
                what = (f"names {len(cells)} of its cells" if want is not None else "is not set")
                raise ArenaError(arena.family, f"enter.{alg}",
                                 f"learner '{alg}' runs {len(ids)} cells in '{name}' ({', '.join(ids)}) and "
                                 f"enter.{alg} {what}: give the one setting that enters the comparison")
            out[alg][name] = cells[0].id
    return out


def _values(trials: pd.DataFrame, metric: str) -> pd.Series:
    """Per trial, the metric's value (a curve's last round)."""
    t = trials[trials["metric"] == metric]
    if METRICS[metric].curve:
        t = t[t["round"] == t["round"].max()]
    return t.set_index("trial")["value"].sort_index()


def dataset_name(exp: Experiment) -> str:
    """A short name of an experiment's data: the data set's name, and the substitute's when the
    data registry replaces it here."""
    from ..data.status import data_status

    d = exp.cfg.dataset
    used = data_status(d.source).used if d.source else None
    if used is not None and used != d.source:
        return f"{d.name} ({used}, substitute)"
    return str(d.name) if d.original else f"{d.name} (substitute)"


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
_NUMBER = r"(\d+|" + "|".join(_WORDS) + r")"


def _word(n: int) -> str:
    return _WORDS[n] if 0 <= n < len(_WORDS) else str(n)


def counted(text: str, k: int, cd: float) -> str:
    """A family file's text with the counts it states made the record's: the family's files
    count its own learners ("the ten online ordinal learners", "all six models'", "Holm-corrected
    over the 45 pairs", "critical difference for ten learners (7.8 ranks of the possible 9)"),
    and a learner added by an override (``rankrepro arena``) makes them ``k`` learners, k(k-1)/2
    pairs and another CD.  For the family as its files define it the text is unchanged.

    >>> counted("The ten online ordinal learners; Holm-corrected over the 45 pairs.", 11, 8.1)
    'The eleven online ordinal learners; Holm-corrected over the 55 pairs.'
    """
    def number(m: re.Match, value: int) -> str:
        was = m.group(2)
        now = str(value) if was.isdigit() else _word(value)
        return m.group(1) + (now[0].upper() + now[1:] if was[0].isupper() else now) + m.group(3)

    text = re.sub(r"(\b)" + _NUMBER + r"( online ordinal learners\b)", lambda m: number(m, k), text, flags=re.I)
    text = re.sub(r"(\ball )" + _NUMBER + r"( (?:learners|models|rankers)')", lambda m: number(m, k), text)
    text = re.sub(r"(\bover the )" + _NUMBER + r"( pairs\b)", lambda m: number(m, k * (k - 1) // 2), text)
    return re.sub(r"(critical difference for )" + _NUMBER + r" learners \(\d+(?:\.\d+)? ranks of the possible \d+\)",
                  lambda m: f"{m.group(1)}{_word(k)} learners ({cd:.1f} ranks of the possible {k - 1})", text)


def compare(arena: Arena, exps: dict[str, Experiment], trials: dict[str, pd.DataFrame],
            datasets: dict[str, str] | None = None) -> dict:
    """The comparison's record from each member's per-trial cell table (``trials[name]``, the
    concatenated cell files).  ``datasets``: the label of each member's data (default: the
    family's ``labels``, else the data set's name)."""
    cells = entering_cells(arena, exps)
    first = exps[arena.experiments[0]]
    # the learner's own label (a setting that differs between members, e.g. the training size
    # of each, is the column's, not the learner's)
    labels = {a: str(first.cfg.algorithms[a].label) for a in cells}
    for alg in cells:  # a learner of a grid: the label says which setting entered
        cid = cells[alg][arena.experiments[0]]
        cell = first.cell(cid)
        if arena.enter.get(alg):
            labels[alg] = cell.label
    learners = list(cells)
    per_exp: dict[str, dict[str, pd.Series]] = {}
    for name in arena.experiments:
        t = trials[name]
        per_exp[name] = {}
        for alg in learners:
            v = _values(t[t["cell"] == cells[alg][name]], arena.metric)
            if v.empty:
                raise ArenaError(arena.family, "metric",
                                 f"'{name}' has no values of {arena.metric} for cell {cells[alg][name]}")
            per_exp[name][alg] = v
    # the blocks: one per data set (the mean over its trials), or one per fold of each data set
    rows, block_names = [], []
    for name in arena.experiments:
        if arena.blocks == "dataset":
            rows.append([float(per_exp[name][a].mean()) for a in learners])
            block_names.append(name)
        else:
            folds = per_exp[name][learners[0]].index
            for f in folds:
                rows.append([float(per_exp[name][a].loc[f]) for a in learners])
                block_names.append(f"{name}#{int(f)}")
    table = np.asarray(rows)
    if table.shape[0] < 2:
        raise ArenaError(arena.family, "experiments",
                         f"{table.shape[0]} block: Friedman's test needs at least two (blocks: {arena.blocks})")
    ranks = block_ranks(table, arena.lower_is_better)
    fr = friedman(table, arena.lower_is_better)
    k, n = len(learners), table.shape[0]
    cd = critical_difference(k, n, arena.alpha)
    pairs = pairwise_rank_tests(fr.avg_ranks, n, arena.alpha)
    groups = cd_groups(fr.avg_ranks, cd)
    datasets = datasets or {name: arena.labels.get(name) or dataset_name(exps[name]) for name in arena.experiments}
    learner_rows = []
    for j, alg in enumerate(learners):
        vals = {}
        for name in arena.experiments:
            iv = t_interval(per_exp[name][alg].to_numpy())
            vals[name] = {"mean": iv.mean, "ci": None if np.isnan(iv.half_width) else iv.half_width, "n": iv.n,
                          "cell": cells[alg][name]}
        learner_rows.append({"key": alg, "label": labels[alg], "avg_rank": fr.avg_ranks[j], "values": vals})
    order = sorted(range(k), key=lambda j: fr.avg_ranks[j])
    return {
        "name": f"arena/{arena.family}", "paper": "arena", "artefact": arena.family, "kind": "comparison",
        "status": "compared", "family": arena.family, "title": arena.title,
        "description": counted(arena.description, k, cd),
        "scale": first.scale, "metric": arena.metric, "better": arena.better, "blocks": arena.blocks,
        "alpha": arena.alpha, "notes": [counted(n, k, cd) for n in arena.notes], "config": arena.text,
        "experiments": [{"name": n, "dataset": datasets[n], "n_trials": exps[n].n_trials,
                         "seed": int(exps[n].cfg.experiment.seed)} for n in arena.experiments],
        "learners": [learner_rows[j] for j in order],
        "block_names": block_names,
        "block_ranks": {learners[j]: [float(r) for r in ranks[:, j]] for j in range(k)},
        "friedman": {"k": fr.k, "n": fr.n, "chi2": fr.chi2, "p_chi2": fr.p_chi2, "F": fr.F, "p_F": fr.p_F},
        "nemenyi": {"q_alpha": nemenyi_q(k, arena.alpha), "cd": cd},
        "pairwise": [{"a": labels[learners[c.i]], "b": labels[learners[c.j]], "diff": c.diff, "z": c.z, "p": c.p,
                      "p_holm": c.p_holm, "holm": bool(c.p_holm < arena.alpha), "nemenyi": c.nemenyi}
                     for c in pairs],
        "groups": [[labels[learners[j]] for j in g] for g in groups],
        "git_commit": provenance.git_commit(), "versions": provenance.versions(),
    }


def _fmt(x, spec: str = ".3f") -> str:
    return "–" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)


def markdown(rec: dict) -> str:
    exps = [e["name"] for e in rec["experiments"]]
    lines = [f"# {md_text(rec['title'])}", "", md_text(rec["description"]), "",
             f"Metric: {rec['metric']} ({rec['better']} is better{'; at the last round' if METRICS[rec['metric']].curve else ''}), "
             f"mean ± 95% interval over each data set's trials; blocks of the ranking: {rec['blocks']} "
             f"({rec['friedman']['n']} blocks, {rec['friedman']['k']} learners).", "",
             "| learner | " + " | ".join(md_cell(e["dataset"]) for e in rec["experiments"]) + " | average rank |",
             "|---|" + "---|" * (len(exps) + 1)]
    for r in rec["learners"]:
        cells = [f"{_fmt(r['values'][n]['mean'])} ± {_fmt(r['values'][n]['ci'])}" for n in exps]
        lines.append(f"| {md_cell(r['label'])} | " + " | ".join(cells) + f" | {r['avg_rank']:.2f} |")
    f, nm = rec["friedman"], rec["nemenyi"]
    lines += ["", f"Friedman: chi2_F = {f['chi2']:.2f} (p = {f['p_chi2']:.3g}), Iman-Davenport F_F = {f['F']:.2f} "
                  f"(p = {f['p_F']:.3g}); Nemenyi q_{rec['alpha']} = {nm['q_alpha']:.3f}, critical difference "
                  f"CD = {nm['cd']:.2f}.", "",
              "| pair | rank difference | z | p | p (Holm) | Holm | Nemenyi |", "|---|---|---|---|---|---|---|"]
    for p in rec["pairwise"]:
        lines.append(f"| {md_cell(p['a'])} – {md_cell(p['b'])} | {p['diff']:+.2f} | {p['z']:+.2f} | {p['p']:.3g} | {p['p_holm']:.3g} "
                     f"| {'yes' if p['holm'] else 'no'} | {'yes' if p['nemenyi'] else 'no'} |")
    if rec["notes"]:
        lines += ["", "## Notes", ""] + [f"- {md_text(n)}" for n in rec["notes"]]
    return "\n".join(lines) + "\n"


def csv_table(rec: dict) -> pd.DataFrame:
    rows = []
    for r in rec["learners"]:
        for e in rec["experiments"]:
            v = r["values"][e["name"]]
            rows.append({"learner": r["key"], "label": r["label"], "experiment": e["name"], "dataset": e["dataset"],
                         "cell": v["cell"], "metric": rec["metric"], "n": v["n"], "mean": v["mean"], "ci": v["ci"],
                         "avg_rank": r["avg_rank"]})
    return pd.DataFrame(rows)


def draw_cd(rec: dict):
    """The critical-difference diagram (Demsar 2006, Fig. 1): the rank axis on top, each learner
    hanging from its average rank (the better half on the left), thick bars joining learners
    whose ranks differ by less than the critical difference, the CD drawn above the axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    learners = rec["learners"]  # sorted by average rank
    k = len(learners)
    cd = rec["nemenyi"]["cd"]
    half = (k + 1) // 2
    n_side = max(half, k - half)
    height = 1.6 + 0.32 * n_side + 0.18 * len(rec["groups"])
    fig, ax = plt.subplots(figsize=(8.0, height))
    lo, hi = 1, k
    ax.set_xlim(lo - 0.5 - 0.35 * k, hi + 0.5 + 0.35 * k)
    ax.set_ylim(-(0.75 + 0.45 * n_side + 0.2 * len(rec["groups"])), 1.1)
    ax.axis("off")
    ax.plot([lo, hi], [0, 0], color="black", lw=1)
    for r in range(lo, hi + 1):
        ax.plot([r, r], [0, 0.12], color="black", lw=1)
        ax.text(r, 0.2, str(r), ha="center", va="bottom", fontsize=9)
        if r < hi:
            ax.plot([r + 0.5, r + 0.5], [0, 0.06], color="black", lw=0.6)
    # the critical difference, above the axis on the left
    ax.plot([lo, lo + cd], [0.75, 0.75], color="black", lw=1.2)
    for x in (lo, lo + cd):
        ax.plot([x, x], [0.68, 0.82], color="black", lw=1.2)
    ax.text(lo + cd / 2, 0.86, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    # the groups not significantly different: thick bars just under the axis
    for g, group in enumerate(rec["groups"]):
        rs = [r["avg_rank"] for r in learners if r["label"] in group]
        y = -0.25 - 0.2 * g
        ax.plot([min(rs) - 0.03, max(rs) + 0.03], [y, y], color="black", lw=3.2, solid_capstyle="round")
    top = -0.45 - 0.2 * len(rec["groups"])
    for i, r in enumerate(learners):
        left = i < half
        row = i if left else k - 1 - i
        y = top - 0.45 * row
        x_end = lo - 0.4 if left else hi + 0.4
        ax.plot([r["avg_rank"], r["avg_rank"], x_end], [0, y, y], color="black", lw=0.8)
        ax.text(x_end + (-0.08 if left else 0.08), y, f"{r['label']} ({r['avg_rank']:.2f})",
                ha="right" if left else "left", va="center", fontsize=9)
    f = rec["friedman"]
    ax.set_title(f"{rec['title']}\naverage ranks over {f['n']} {'data sets' if rec['blocks'] == 'dataset' else 'folds'}"
                 f" by {rec['metric']}; Friedman p = {f['p_chi2']:.2g}, Iman-Davenport p = {f['p_F']:.2g}",
                 fontsize=9)
    fig.tight_layout()
    from .scale_mark import mark_scale

    mark_scale(fig, rec.get("scale", "paper"))  # a smoke comparison says so in the diagram
    return fig


def build_comparison(arena: Arena, exps: dict[str, Experiment], cell_paths: dict[str, list[str]],
                     out_json: str | os.PathLike, out_md: str | os.PathLike, out_csv: str | os.PathLike,
                     out_png: str | os.PathLike, datasets: dict[str, str] | None = None) -> dict:
    """Read each member's cell files (``cell_paths[name]``), compare, write the outputs."""
    from .artefact import load_cells

    trials = {name: load_cells(paths) for name, paths in cell_paths.items()}
    rec = compare(arena, exps, trials, datasets)
    png = Path(out_png)
    rec["figure"] = png.name
    atomic_write(out_csv, lambda tmp: csv_table(rec).to_csv(tmp, index=False, float_format="%.6g"))
    atomic_write(out_md, lambda tmp: Path(tmp).write_text(markdown(rec)))
    fig = draw_cd(rec)
    png.parent.mkdir(parents=True, exist_ok=True)
    # no dates or software versions in the files: a rebuild of the same comparison writes the same bytes
    atomic_write(png, lambda tmp: fig.savefig(tmp, format="png", dpi=130, metadata={"Software": None}))
    atomic_write(png.with_suffix(".pdf"), lambda tmp: fig.savefig(tmp, format="pdf", metadata={
        "CreationDate": None, "Creator": None, "Producer": None}))
    import matplotlib.pyplot as plt

    plt.close(fig)
    from ..pipeline.integrity import FIGURES, file_digest, write_sealed

    # the diagram's files by their hashes, drawn above (issue 58): a figure swapped later is refused
    rec[FIGURES] = {f.name: file_digest(f) for f in (png, png.with_suffix(".pdf"))}
    write_sealed(out_json, rec)
    return rec


def comparison_paths(root: str | os.PathLike, family: str) -> dict[str, Path]:
    """Where a family's comparison is written under an output root ('' for the repository)."""
    root = Path(root)
    base = root / "results" / "arena" / "comparison"
    return {"json": base / f"{family}.json", "md": base / f"{family}.md", "csv": base / f"{family}.csv",
            "png": root / "figures" / "arena" / "comparison" / f"cd_{family}.png"}
