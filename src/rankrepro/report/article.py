"""A replication article per paper, in the shape ReScience C asks for, generated from the
committed records: ``results/<paper>/article.md``, the same page as self-contained HTML
(``article.html``, rendered by markdown-it-py) and ``metadata.yaml`` (the fields of ReScience
C's template, with ``TO BE FILLED`` where only a person can fill them: authors, ORCID, DOI).

Every number of an article comes from the records (``results/<paper>/<artefact>.json``, and the
evidence records beside them, e.g. ``results/yu2006/tables/fit_cap.json``); the prose around
them is this module's and the same for every paper: nothing is written per paper by hand.  The
original reference is CITATION.cff's (its ``references``).

The title is ``[Re]`` or ``[¬Re]`` by :func:`title_mark` (the rule is stated in each article and
in docs/reproducibility.md).  ``scripts/results_doc.py`` (``make report``) writes the articles;
``tests/test_article.py`` fails when the committed ones differ from what the records give.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..files import read_json
from .artefact import _pm, diagnosis_text, multiverse_markdown, reproducibility_markdown, sensitivity_markdown
from .md import md_cell, md_text
from .results_doc import fit_cap
from .scorecard import ArtefactScore, artefact_score, is_replication, scorecard, status_table

ROOT = Path(__file__).resolve().parents[3]
#: the placeholder of every field only a person can fill
TODO = "TO BE FILLED"

RULE = ("The title's mark says whether the replication supports the paper, by one rule fixed before it "
        "was applied (it replaced a two-state rule on 2026-11-29; docs/reproducibility.md). It rests on the "
        "artefacts that ran on the paper's own data where there are any, and otherwise on those that ran on "
        "other data, and then says so (*on other data*). Over those artefacts, two parts: (a) the published "
        "cells judged on the paper's own data *support* the paper when at least half are consistent with ours, "
        "else *refute* it; (b) the substantive claims (trivial and not-evaluable ones apart) *support* it when "
        "at least half of those decided (held or not held) held, else *refute* it, and are *undecided* when "
        "the inconclusive ones outnumber the decided ones. A part with nothing to count does not decide. "
        "The title is [Re] when some part supports and none refutes or is undecided, [¬Re] when some part "
        "refutes, and [Re?] (undecided) otherwise, including when nothing could be counted.")


@dataclass
class Mark:
    """The title's mark, the counts it was decided on, and whether it rests on other data."""

    mark: str
    consistent: int
    judged: int
    held: int
    evaluable: int
    not_held: int = 0
    inconclusive: int = 0
    other_data: bool = False
    parts: tuple = ()

    @property
    def label(self) -> str:
        """The mark with its qualifier: "[Re] on other data"."""
        return self.mark + (" on other data" if self.other_data else "")


def title_mark(scores: list[ArtefactScore]) -> Mark:
    """[Re], [¬Re] or [Re?] for a paper from its artefacts' scores (:data:`RULE`)."""
    ran = [s for s in scores if s.ran]
    own = [s for s in ran if s.original]
    base = own or ran
    consistent, judged = sum(s.consistent for s in base), sum(s.compared for s in base)
    held, not_held = sum(s.held for s in base), sum(s.not_held for s in base)
    inconclusive = sum(s.inconclusive for s in base)
    evaluable = sum(s.claims - s.not_evaluable for s in base)
    parts = []
    if judged:
        parts.append("supports" if 2 * consistent >= judged else "refutes")
    if evaluable:
        decided = held + not_held
        parts.append("undecided" if inconclusive > decided else "supports" if 2 * held >= decided else "refutes")
    mark = ("[¬Re]" if "refutes" in parts else "[Re]" if parts and set(parts) == {"supports"} else "[Re?]")
    return Mark(mark, consistent, judged, held, evaluable, not_held, inconclusive, bool(ran) and not own, tuple(parts))


def references(citation: str | Path = ROOT / "CITATION.cff") -> list[dict]:
    return yaml.safe_load(Path(citation).read_text()).get("references", [])


def original_reference(paper: str, refs: list[dict]) -> dict:
    """The paper's entry of CITATION.cff's references: its first author's family name and year
    begin and end the paper's key (``crammer_singer2005``: Crammer, 2005)."""
    for r in refs:
        first = r["authors"][0]["family-names"].lower()
        if paper.startswith(first) and paper.endswith(str(r["year"])):
            return r
    raise KeyError(f"CITATION.cff has no reference for paper '{paper}'")


def cite(ref: dict, md: bool = True) -> str:
    """The reference as the article cites it; ``md``: its words from CITATION.cff escaped as
    Markdown free text (:func:`~.md.md_text`), False for metadata.yaml's plain text."""
    esc = md_text if md else str
    names = [f"{a['family-names']}, {' '.join(g[0] + '.' for g in a['given-names'].split())}" for a in ref["authors"]]
    who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " & " + names[-1]
    where = ref.get("journal") or ref.get("collection-title") or ""
    return f"{esc(who)} ({esc(ref['year'])}). {esc(ref['title'])}. *{esc(where)}*."


def short_cite(ref: dict) -> str:
    fam = [a["family-names"] for a in ref["authors"]]
    who = fam[0] if len(fam) == 1 else (" & ".join(fam) if len(fam) == 2 else f"{fam[0]} et al.")
    return md_text(f"{who} ({ref['year']})")


def _n(k: int, word: str) -> str:
    """"1 artefact", "2 artefacts"."""
    return f"{k} {word}" + ("" if k == 1 else "s")


def _num(x, spec: str = ".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else format(x, spec)


def _demote(lines: list[str], by: int = 2) -> list[str]:
    return [("#" * by + ln) if ln.startswith("#") else ln for ln in lines]


def _short(r: dict) -> str:
    """The artefact in the paper's numbering ("Table 1: ..."), from its title."""
    from .html import display_name

    return display_name(r["title"])


def _link(r: dict) -> str:
    return f"[`{r['artefact']}`]({r['artefact']}.md)"


def _data_line(r: dict) -> str:
    if r.get("status") != "ran":
        return f"not run: {md_text(r['reason'])}. {md_text(r['how_to_obtain'].rstrip('.'))}"
    d = r["dataset"]
    kind = "the paper's own data" if d["original"] else "substitute data (a replication on other data)"
    return f"{kind}: {md_text(d['label'])}"


def _table(r: dict) -> list[str]:
    """The reproduced values beside the published ones, one table per metric (only the rows the
    paper published, or all when it published none)."""
    out = []
    metrics = list(dict.fromkeys(t["metric"] for t in r["table"]))
    for metric in metrics:
        rows = [t for t in r["table"] if t["metric"] == metric]
        pub = [t for t in rows if t["published_mean"] is not None]
        rows = pub or rows
        at = f" (at round {rows[0]['round']})" if rows[0]["round"] is not None else ""
        out += [f"**{md_text(metric)}**{at}", "",
                "| algorithm | reproduced (95% interval) | published | difference [95% interval] | verdict | equivalence |",
                "|---|---|---|---|---|---|"]
        for t in rows:
            p = _pm(t["published_mean"], t["published_ci"]) if t["published_mean"] is not None else "-"
            diff = f"{t['difference']:+.3f}" if t["difference"] is not None else "-"
            if t.get("difference_low") is not None and t.get("difference_ci"):
                diff += f" [{t['difference_low']:+.3f}, {t['difference_high']:+.3f}]"
            out.append(f"| {md_cell(t['label'])} | {_pm(t['mean'], t['ci'])} | {p} | {diff} | {t['verdict'] or '-'} | "
                       f"{t.get('equivalence') or '-'} |")
        out.append("")
    return out


def _figure(r: dict, root: Path) -> list[str]:
    ff = r.get("figure_file")
    png = root.parent / "figures" / r["paper"] / f"{ff}.png" if ff else None
    if not png or not png.is_file():
        return []
    return [f"![{md_text(_short(r))}](../../figures/{r['paper']}/{ff}.png)", ""]


def _claims(r: dict) -> list[str]:
    out = []
    for c in r["claims"]:
        triv = " (trivial)" if c.get("trivial") else ""
        out.append(f"- **{c['verdict']}**{triv}: {md_text(c['text'])}. {md_text(c['evidence'])}")
    return out + ([""] if out else [])


def _methods(r: dict) -> list[str]:
    out = [f"### {md_text(_short(r))} ({_link(r)})", "", f"- Data: {_data_line(r)}."]
    if r.get("status") != "ran":
        return out + [""]
    out += [f"- Size: {md_text(r['size'])}; root seed {r['seed']}; scale {r['scale']}.",
            f"- Protocol: {md_text(r['description'])}", ""]
    sens = r.get("sensitivity") or []
    if sens:
        out += ["Open choices (what the paper leaves open, the reading taken, and what each other reading does):", ""]
        out += _demote(sensitivity_markdown(sens), 2)[2:]
        out += _demote(multiverse_markdown(r.get("multiverse")), 2)
    if r.get("notes"):
        out += ["Notes on the protocol:", ""] + [f"- {md_text(n)}" for n in r["notes"]] + [""]
    return out


def _results(r: dict, root: Path) -> list[str]:
    if r.get("status") != "ran":
        return []
    s = artefact_score(r)
    out = [f"### {md_text(_short(r))}", "", f"Agreement: **{s.agreement}** ({r['n_trials']} trials).", ""]
    out += _table(r) + _figure(r, root)
    if r["claims"]:
        out += ["Claims:", ""] + _claims(r)
    out += _demote(reproducibility_markdown(r.get("reproducibility")), 2)
    if r.get("platform"):  # `make spread`: the same code under other CPU kernels
        out += [f"Across CPU kernels: {md_text(r['platform']['text'])}.", ""]
    return out


def disagreements(r: dict) -> list[str]:
    """Each published cell that differs and each claim not held, with its diagnosis and strength."""
    out = []
    for t in r.get("table", []):
        if t["verdict"] == "differs":
            d = diagnosis_text(t.get("diagnosis")) or "undiagnosed"
            out.append(f"- {md_text(_short(r))}, {md_text(t['label'])} ({md_text(t['metric'])}): reproduced "
                       f"{_num(t['mean'])}, published {_num(t['published_mean'])}. Diagnosis: {md_text(d)}")
    for c in r.get("claims", []):
        if c["verdict"] == "not held":
            d = diagnosis_text(c.get("diagnosis")) or "undiagnosed"
            out.append(f"- {md_text(_short(r))}, claim *{md_text(c['text'])}*: not held. Diagnosis: {md_text(d)}")
    return out


def easy(recs: list[dict]) -> list[str]:
    """What the records mark as easy: data sets the paper used that could be had, artefacts
    reproduced, open choices whose every reading gives the same verdicts."""
    out = []
    for r in recs:
        if r.get("status") != "ran":
            continue
        s = artefact_score(r)
        if r["dataset"]["original"]:
            out.append(f"- {md_text(_short(r))}: the paper's own data could be had ({md_text(r['dataset']['label'])}).")
        if s.agreement == "reproduced":
            out.append(f"- {md_text(_short(r))}: every published cell consistent and every claim held.")
        for sc in r.get("sensitivity") or []:
            same = len({(v["consistent"], v["compared"]) for v in sc["values"]}) == 1
            if not sc["flips"] and same:
                out.append(f"- {md_text(_short(r))}: the open choice *{md_text(sc['choice'])}* does not matter: its "
                           f"{len(sc['values'])} readings give the same verdicts.")
    return out or ["- Nothing in the records marks a part of this replication as easy."]


def difficult(recs: list[dict], root: Path) -> list[str]:
    """What the records mark as difficult: data that could not be had, substitutes, open choices
    (and those on which verdicts turn), claims too close to decide, solver caps."""
    out = []
    for r in recs:
        name = md_text(_short(r))
        if r.get("status") != "ran":
            out.append(f"- {name}: not run, the data cannot be had ({md_text(r['reason'])}).")
            continue
        d = r["dataset"]
        if not d["original"]:
            out.append(f"- {name}: the paper's data could not be had here; it ran on a substitute "
                       f"({md_text(d['label'])}), so its published values are references, not judged.")
        sens = r.get("sensitivity") or []
        if sens:
            flips = [sc for sc in sens if sc["flips"]]
            out.append(f"- {name}: {_n(len(sens), 'open protocol choice')} had to be read "
                       f"({', '.join(md_text(sc['choice']) for sc in sens)})"
                       + (f"; claim verdicts turn on {', '.join(md_text(sc['choice']) for sc in flips)}." if flips else "."))
        need = [c for c in r["claims"] if c["verdict"] == "inconclusive" and (c.get("stats") or {}).get("n_needed")]
        for c in need:
            unit = c["stats"].get("unit") or "trials"
            now = f"{r['n_trials']} trials" if unit == "trials" else f"the {unit} of {r['n_trials']} trials"
            out.append(f"- {name}: the claim *{md_text(c['text'])}* is inconclusive with {now}; "
                       f"about {c['stats']['n_needed']:,} {unit} would decide it (80% power).")
        caveat = cap_caveat(r, root)
        if caveat:
            out.append(f"- {name}: {caveat}")
        undiag = sum(1 for t in r["table"] if t["verdict"] == "differs" and not t.get("diagnosis")) + \
            sum(1 for c in r["claims"] if c["verdict"] == "not held" and not c.get("diagnosis"))
        if undiag:
            out.append(f"- {name}: {_n(undiag, 'disagreement')} without a diagnosis.")
    return out or ["- Nothing in the records marks a part of this replication as difficult."]


def cap_caveat(r: dict, root: Path) -> str | None:
    """What the searches stopped at the solver's iteration cap mean for the record's numbers, from
    the evidence record ``fit_cap.json`` beside it and the sensitivity choice that lets every
    search converge (``likelihood_fit``): how many searches stopped at the cap, how far the
    converged reading moves the cells it changes (largest |difference| of a headline mean, and as a
    share of that cell's 95% half-width) and whether any claim verdict moves.  None where no search
    stopped at a cap."""
    cap = root / r["paper"] / r["artefact"] / "fit_cap.json"
    if not cap.is_file():
        return None
    fc = fit_cap(cap)
    if not fc["capped"]:
        return None
    text = (f"{fc['capped']} of {fc['searches']} hyperparameter searches ({fc['share']:.1%}) stopped at the "
            f"solver's iteration cap ({', '.join(str(i) for i in fc['iters'])} iterations)")
    cs = read_json(cap, "evidence record").get("converged_sample")
    if cs:
        rows = list(cs["cells"].values())
        on = [r["users_on_a_bound"] for r in rows]
        text += (f". Why: refitted with every search run to the solver's own convergence test (draw 0 of each of "
                 f"the {len(rows)} cells), {sum(r['capped'] for r in rows)} of {sum(r['searches'] for r in rows)} "
                 f"searches stop at the cap and {min(on)}-{max(on)} of {rows[0]['users']} users end with their "
                 f"noise or a threshold gap on a bound of the search: the cap is too low for one search over every "
                 f"user's parameters at once, and some users have no interior optimum")
    choice = next((c for c in r.get("sensitivity") or [] if c["choice"] == "likelihood_fit"), None)
    if choice is None:
        return text + "; no reading that lets them converge was run."
    main = next(v for v in choice["values"] if v["main"])
    other = [v for v in choice["values"] if not v["main"]]
    base = {(h["cell"], h["metric"]): h for h in main["headline"]}
    moves = [(abs(h["mean"] - base[(h["cell"], h["metric"])]["mean"]), base[(h["cell"], h["metric"])]["ci"])
             for v in other for h in v["headline"] if (h["cell"], h["metric"]) in base]
    moved = [(d, ci) for d, ci in moves if d > 0]
    if not moved:
        return text + f"; letting them converge ({', '.join(v['value'] for v in other)}) moves no headline mean."
    d, ci = max(moved)
    share = max(dd / c for dd, c in moved if c)
    flips = "moves no claim verdict" if not choice["flips"] else \
        f"moves the verdicts of {', '.join(md_text(f) for f in choice['flips'])}"
    return (text + f"; letting every search converge (the reading *{', '.join(v['value'] for v in other)}* of "
            f"the open choice likelihood_fit) moves the headline means by at most {d:.4f} (at most "
            f"{share:.0%} of a cell's 95% half-width) and {flips}.")


def paper_records(paper: str, root: Path) -> list[dict]:
    return [read_json(p, "record") for p in sorted((root / paper).glob("*.json"))]


def papers(root: Path) -> list[str]:
    """The replicated papers (every folder of records but the arena's and the report's)."""
    return sorted({p.parent.name for p in root.glob("*/*.json")
                   if is_replication(read_json(p, "record"))})


def mark_over_readings(recs: list[dict]) -> dict | None:
    """Does the title's mark survive the multiverse?  For each artefact with a multiverse and each
    of its readings (of its confidence set where it has one, as its verdicts' robustness is
    judged), the mark with that artefact's verdicts taken under the reading, the others as run:
    {"readings": n, "marks": {mark: count}, "robust": bool, "flipped_by": [artefact: reading]}."""
    scores = {r["name"]: artefact_score(r) for r in recs}
    out, flips, n = {}, [], 0
    for r in recs:
        mv = r.get("multiverse") if r.get("status") == "ran" else None
        if not mv:
            continue
        trivial = {c["id"] for c in r["claims"] if c.get("trivial")}
        rows = [x for x in mv["list"] if x["key"] in mv["confidence_set"]] if mv["confidence_set"] else mv["list"]
        for x in rows:
            s = artefact_score(r)
            cells = list(x["cells"].values())
            subst = [v for k, v in x["claims"].items() if k not in trivial]
            s.consistent, s.compared = cells.count("consistent"), len(cells)
            s.table_agrees = x["table_agrees"]
            s.claims, s.held, s.not_held = len(subst), subst.count("held"), subst.count("not held")
            s.inconclusive, s.not_evaluable = subst.count("inconclusive"), subst.count("not evaluable")
            mark = title_mark([s if k == r["name"] else v for k, v in scores.items()]).label
            out[mark] = out.get(mark, 0) + 1
            n += 1
            if mark != title_mark(list(scores.values())).label:
                flips.append(f"{r['artefact']}: {x['key']}")
    if not n:
        return None
    return {"readings": n, "marks": out, "robust": len(out) == 1, "flipped_by": flips}


def _abstract_counts(sc, m: Mark, recs: list[dict], root: Path) -> str:
    """The abstract's counts: the tables judged as a whole, the cells, the claims by verdict, and
    any caveat a reader of the title must see (searches stopped at a cap)."""
    own = sc.by_data(True)
    tables = [a for a in own if a.table_agrees is not None]
    out = ""
    if tables:
        agree = sum(a.table_agrees for a in tables)
        out += (f"{agree} of {_n(len(tables), 'published table')} judged on the paper's own data "
                f"{'agrees' if agree == 1 else 'agree'} with it as a whole (one joint test per table); ")
    out += (f"{m.consistent} of {m.judged} published cells judged there are consistent with ours. " if m.judged
            else "No published cell could be judged on the paper's own data. ")
    if m.evaluable:
        where = " (on other data)" if m.other_data else (" on the paper's own data" if len(own) < len(sc.ran) else "")
        out += (f"Of {m.evaluable} evaluable claims{where}, {m.held} held, {m.not_held} did not and "
                f"{m.inconclusive} {'was' if m.inconclusive == 1 else 'were'} inconclusive. ")
    else:
        out += "No claim could be evaluated. "
    mo = mark_over_readings(recs)
    if mo:
        out += (f"The mark survives the multiverse: the same under each of the {mo['readings']} readings of the "
                "artefacts' open choices (one artefact at a time, its confidence set where it has one). "
                if mo["robust"] else
                f"The mark depends on the reading: over the {mo['readings']} readings of the artefacts' open choices "
                f"(one artefact at a time) it is " + ", ".join(f"{k} in {v}" for k, v in mo["marks"].items())
                + f" (moved by {'; '.join(mo['flipped_by'][:4])}{'; ...' if len(mo['flipped_by']) > 4 else ''}). ")
    for r in recs:
        if r.get("status") == "ran" and (c := cap_caveat(r, root)):
            out += f"Caveat ({_short(r)}): {c} "
    return out


def render_article(paper: str, root: str | Path = ROOT / "results", citation: str | Path = ROOT / "CITATION.cff") -> str:
    root = Path(root)
    recs = paper_records(paper, root)
    ref = original_reference(paper, references(citation))
    sc = scorecard(recs)
    m = title_mark(sc.artefacts)
    ran = sc.ran
    orig = sum(1 for a in ran if a.original)
    on = ("on the paper's own data" if orig == len(ran) else
          "on other data (substitutes for the paper's data)" if orig == 0 else
          "partly on the paper's own data, partly on other data")
    lines = [f"# {m.mark} {md_text(ref['title'])}" + (" (on other data)" if m.other_data else ""), "",
             f"*A replication of {short_cite(ref)}, {on}, generated from the records of "
             f"[rankrepro](../../README.md).*", "",
             f"**Original article**: {cite(ref)}", "",
             f"**Authors**: {TODO}: names, affiliations, ORCID. **Code**: {TODO}: repository URL and archive "
             f"DOI / Software Heritage id (see [metadata.yaml](metadata.yaml)).", "",
             "## Abstract", "",
             f"We reimplemented the methods of {short_cite(ref)} and ran its {_n(len(recs), 'artefact')} "
             f"({len(ran)} ran, {len(recs) - len(ran)} not run for want of data; {orig} on the paper's own data). "
             + _abstract_counts(sc, m, recs, root)
             + f"Hence the title's mark {m.label}.", "",
             "## Introduction", "",
             "This is a *replication* in the ACM's terms (version 1.1): an independent implementation, by another "
             "team, run on the paper's own data where it can be had; on a substitute data set it is a replication "
             "on other data, and the published values there are shown as references, not judged.", "",
             f"**The title's rule.** {RULE} Here, over the artefacts on "
             f"{'other data' if m.other_data else 'the paper' + chr(39) + 's own data'}: (a) "
             + (f"{m.consistent} / {m.judged} cells consistent" if m.judged else "no published cell judged")
             + f", (b) {m.held} held, {m.not_held} not held, {m.inconclusive} inconclusive of {m.evaluable} "
             f"claims; parts: {', '.join(m.parts) or 'none'}.", "",
             "What agrees with the paper, per artefact (the rules: docs/reproducibility.md):", "",
             status_table(sc, lambda n: f"[`{n.split('/', 1)[1]}`]({n.split('/', 1)[1]}.md)"),
             "## Methods", "",
             "Each artefact's protocol as run (data, size, seeds) and every choice the paper leaves open, with "
             "the reading taken and why, and what the other readings give.", ""]
    for r in recs:
        lines += _methods(r)
    lines += ["## Results", "",
              "Reproduced values are means over trials with 95% Student-t intervals; the difference reproduced - "
              "published has its 95% interval; *consistent* when it contains 0, else *differs*; *equivalence* "
              "by two one-sided tests within the artefact's margin; on substitute data a published value is a "
              "*reference*. Every artefact's full table is in its record (linked above).", ""]
    for r in recs:
        lines += _results(r, root)
    if sc.papers:
        lines += ["### Reproducibility measures over the paper (Breuer et al., SIGIR 2020)", ""]
        for pm in sc.papers:
            kind = "own data" if pm.original else "substitute data"
            parts = [f"RMSE {md_text(x['metric'])} {_num(x['rmse'], '.4f')} over {x['cells']} cells" for x in pm.rmse]
            if pm.kendall_tau_mean is not None:
                parts.append(f"mean Kendall's tau {_num(pm.kendall_tau_mean)}")
            if pm.effect_ratio_median is not None:
                parts.append(f"median effect ratio {_num(pm.effect_ratio_median)}")
            if pm.delta_ri_median is not None:
                parts.append(f"median delta relative improvement {_num(pm.delta_ri_median)}")
            lines.append(f"- {kind}: " + "; ".join(parts) + ".")
        lines.append("")
    dis = [x for r in recs for x in disagreements(r)]
    lines += ["## Discussion", "", "### Each disagreement, with its diagnosis and strength", ""]
    lines += (dis or ["- None: no published cell differs and no claim failed."]) + [""]
    lines += ["### What was easy", ""] + easy(recs) + [""]
    lines += ["### What was difficult", ""] + difficult(recs, root) + [""]
    lines += ["### Communication with the original authors", "", f"{TODO}.", ""]
    lines += ["## References", "", f"- {cite(ref)}",
              "- ACM (2020). Artifact Review and Badging, version 1.1.",
              "- Breuer, T. et al. (2020). How to measure the reproducibility of system-oriented IR experiments. "
              "*SIGIR 2020*.", ""]
    return "\n".join(lines)


def metadata(paper: str, root: str | Path = ROOT / "results", citation: str | Path = ROOT / "CITATION.cff") -> dict:
    """ReScience C's metadata.yaml fields, filled from the records and CITATION.cff."""
    root = Path(root)
    recs = paper_records(paper, root)
    ref = original_reference(paper, references(citation))
    m = title_mark(scorecard(recs).artefacts)
    cff = yaml.safe_load(Path(citation).read_text())
    data = sorted({r["dataset"]["label"] for r in recs if r.get("status") == "ran"})
    return {
        "title": f"{m.mark} {ref['title']}" + (" (on other data)" if m.other_data else ""),
        "authors": [{"name": f"{TODO}: name", "orcid": f"{TODO}: ORCID", "email": f"{TODO}: email",
                     "affiliations": "1,*"}],
        "affiliations": [{"code": 1, "name": f"{TODO}: affiliation", "address": f"{TODO}: address"}],
        "contact": [{"name": f"{TODO}: contact author", "email": f"{TODO}: email"}],
        "keywords": ", ".join([*cff.get("keywords", []), "python"]),
        "code": [{"url": f"{TODO}: repository URL"}, {"doi": f"{TODO}: code DOI (e.g. Zenodo)"},
                 {"swh": f"{TODO}: Software Heritage id"}],
        "data": [{"url": f"{TODO}: URL of an archive of the data (docs/data.md says where each set comes from)"},
                 {"doi": f"{TODO}: data DOI, if any"}],
        "datasets": data,
        "replication": [{"cite": cite(ref, md=False).replace("*", "")}, {"bib": paper},
                        {"url": f"{TODO}: URL of the original article"}, {"doi": f"{TODO}: DOI of the original article"}],
        "abstract": f"A replication of {short_cite(ref)} (results/{paper}/article.md).",
        "type": "Replication",
        "domain": "Machine learning",
        "language": "Python",
        "software": {"name": cff["title"], "version": str(cff["version"])},
        "review": [{"url": f"{TODO}: after acceptance"}],
        "article": [{"number": f"{TODO}: by the editor"}, {"doi": f"{TODO}: by the editor"},
                    {"url": f"{TODO}: by the editor"}],
        "journal": [{"name": "ReScience C"}],
    }


STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;line-height:1.45}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.2em .5em}"
         "img{max-width:100%}code{background:#f4f4f4}")


def to_html(md: str, title: str, base: Path | None = None) -> str:
    """The article as one self-contained page: markdown-it-py (CommonMark with tables; raw HTML
    off).  The only images it keeps are the pipeline's figures: with ``base`` (the article's
    folder, ``results/<paper>``), a relative ``.png`` under the checkout's ``figures/``
    (``base/../../figures``, links followed) is inlined as a data URI; any other image (an
    absolute path, ``../../..`` out of figures/, a URL such as ``http://127.0.0.1:9/...``, or any
    image without ``base``) is dropped, its alt text kept as text: nothing outside figures/ is
    read, and the page fetches nothing."""
    import re

    from markdown_it import MarkdownIt

    from .embed import png_data_uri

    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    body = parser.render(md)
    figures = (base.parent.parent / "figures").resolve() if base is not None else None

    def image(tag: str) -> str:
        src = re.search(r'\ssrc="([^"]*)"', tag)
        alt = re.search(r'\salt="([^"]*)"', tag)
        path = html.unescape(src.group(1)) if src else ""
        if figures is not None and path and not re.match(r"[A-Za-z][A-Za-z0-9+.-]*:|/|\\", path):
            p = (base / path).resolve()
            if p.suffix == ".png" and p.is_relative_to(figures) and p.is_file():
                return tag.replace(src.group(0), f' src="{png_data_uri(p)}"')
        return alt.group(1) if alt else ""
    body = re.sub(r"<img\s[^>]*>", lambda mm: image(mm.group(0)), body)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{STYLE}</style></head><body>\n{body}</body></html>\n")


def outputs(root: str | Path = ROOT / "results", citation: str | Path = ROOT / "CITATION.cff") -> dict[Path, str]:
    """Every article file under ``root`` and its text, from the records."""
    root = Path(root)
    out = {}
    for paper in papers(root):
        md = render_article(paper, root, citation)
        meta = metadata(paper, root, citation)
        folder = root / paper
        out[folder / "article.md"] = md
        out[folder / "article.html"] = to_html(md, meta["title"], folder)
        out[folder / "metadata.yaml"] = ("# ReScience C metadata (https://github.com/ReScience/template), generated "
                                         "from the records by rankrepro.report.article;\n# fill every "
                                         f"'{TODO}' before submitting.\n"
                                         + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100))
    return out
