"""What a user's override takes away from a paper's experiment: a learner removed
(``~algorithms.oap_bpm``), swept (``-m algorithms.oap_bpm.params.N=50,100``, its grid) or set
otherwise leaves the published values, claims, significance tests and figure panels that select
it without the cell they compare.  Those entries are dropped, and said so in one line, instead of
stopping with an error at a config entry the user never wrote.

Only entries that name a learner the overrides touch are dropped, and only when the experiment
loads without the overrides (its committed config is checked as strictly as ever: a typo there
still fails)."""

from __future__ import annotations

import copy
import re
from typing import Any

#: the parts of ``experiment`` whose entries select cells, and how the note names them
SECTIONS = {"published": "published row", "claims": "claim", "significance": "significance test",
            "sensitivity": "sensitivity choice"}
_KEY = re.compile(r"^experiment\.(published|claims|significance|sensitivity)\[(\d+)\]")
_SETS = re.compile(r"^algorithms\.([A-Za-z0-9_]+)\.")
_PANEL = re.compile(r"^experiment\.figure\.panels\[(\d+)\]")
_TOUCH = re.compile(r"^(~|\+{0,2})algorithms\.([A-Za-z0-9_]+)(\.([A-Za-z_]\w*)\.?)?")


def touched(overrides: list[str]) -> dict[str, str]:
    """The learners (algorithm keys) the overrides remove, sweep or change, each with how
    ("removed by your override '~algorithms.oap_bpm'")."""
    out: dict[str, str] = {}
    for o in overrides:
        m = _TOUCH.match(o)
        if m is None or (m.group(1) != "~" and "=" not in o):
            continue
        key = m.group(2)
        if m.group(1) == "~" and m.group(3) is None:
            how = "removed"
        elif m.group(4) == "grid":
            how = "swept"
        else:
            how = "changed"
        if key not in out or how == "removed":
            out[key] = f"{how} by your override '{o}'"
    return out


def _algorithms_named(node: Any) -> set[str]:
    """Every algorithm key a config entry's selectors name (``algorithm: x`` or ``[x, y]``)."""
    found: set[str] = set()
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "algorithm":
                found |= {str(x) for x in (v if isinstance(v, list) else [v])}
            elif m := _SETS.match(str(k)):  # a sensitivity value that sets a learner's key
                found.add(m.group(1))
            else:
                found |= _algorithms_named(v)
    elif isinstance(node, list):
        for v in node:
            found |= _algorithms_named(v)
    return found


def entry_of(plain: dict, key: str) -> tuple[str, int] | None:
    """The (section, index) of the entry a ConfigError's key points into, in ``plain``."""
    m = _KEY.match(key)
    if m:
        return m.group(1), int(m.group(2))
    m = _PANEL.match(key)
    return ("panels", int(m.group(1))) if m else None


def _section(plain: dict, section: str) -> list:
    e = plain.get("experiment") or {}
    if section == "panels":
        return ((e.get("figure") or {}).get("panels")) or []
    return e.get(section) or []


def pruned(plain: dict, drops: list[tuple[str, int]], why: dict[str, str] | None = None) -> dict:
    """A copy of ``plain`` without the entries ``drops`` names (indices into the original lists),
    and without the figure's lines of the learners ``why`` says are removed."""
    out = copy.deepcopy(plain)
    removed = {a for a, w in (why or {}).items() if w.startswith("removed")}
    for panel in _section(out, "panels") if removed else []:
        if isinstance(panel, dict) and isinstance(panel.get("select"), list):
            panel["select"] = [s for s in panel["select"] if not _algorithms_named(s) or _algorithms_named(s) - removed]
    # a choice that also sets a removed learner's keys keeps its values for the other learners
    for choice in _section(out, "sensitivity") if removed else []:
        values = choice.get("values") if isinstance(choice, dict) else None
        for v in (values or {}).values() if isinstance(values, dict) else []:
            if isinstance(v, dict) and any((m := _SETS.match(str(k))) and m.group(1) not in removed for k in v):
                for k in [k for k in v if (m := _SETS.match(str(k))) and m.group(1) in removed]:
                    del v[k]
    for section in {s for s, _ in drops}:
        gone = {i for s, i in drops if s == section}
        kept = [x for i, x in enumerate(_section(out, section)) if i not in gone]
        if section == "panels":
            out["experiment"]["figure"]["panels"] = kept
        else:
            out["experiment"][section] = kept
    gone = {_describe("sensitivity", _section(plain, "sensitivity")[i]) for s, i in drops if s == "sensitivity"}
    for section in ("published", "claims") if gone else ():  # a diagnosis whose evidence was that choice
        for entry in _section(out, section):
            d = entry.get("diagnosis") if isinstance(entry, dict) else None
            if isinstance(d, dict) and d.get("choice") in gone:
                entry["diagnosis"] = None
    mv = out["experiment"].get("multiverse")
    if gone and isinstance(mv, dict) and isinstance(mv.get("cross"), list):  # the choices crossed no more
        mv["cross"] = [c for c in mv["cross"] if c not in gone]
        if not mv["cross"]:
            out["experiment"]["multiverse"] = None
    return out


def original_index(plain: dict, drops: list[tuple[str, int]], section: str, i: int) -> int:
    """The index in the original list of the ``i``-th entry left after ``drops``."""
    left = [j for j in range(len(_section(plain, section))) if (section, j) not in drops]
    return left[i]


def droppable(plain: dict, entry: tuple[str, int], why: dict[str, str]) -> set[str]:
    """The touched learners an entry selects (empty: the entry is not the user's to lose)."""
    section, i = entry
    items = _section(plain, section)
    if i >= len(items):
        return set()
    return _algorithms_named(items[i]) & set(why)


def _describe(section: str, entry: Any) -> str:
    if section == "claims" and isinstance(entry, dict) and entry.get("id"):
        return str(entry["id"])
    if section == "sensitivity" and isinstance(entry, dict):
        return str(entry.get("choice"))
    if section == "panels" and isinstance(entry, dict):
        return str(entry.get("title") or entry.get("metric") or "panel")
    sel = (entry or {}).get("select") or (entry or {}).get("against") or {}
    return " ".join(f"{v}" if k == "algorithm" else f"{k}={v}" for k, v in sel.items()) or "?"


def note(plain: dict, drops: list[tuple[str, int]], needs: dict[tuple[str, int], set[str]],
         why: dict[str, str]) -> str:
    """One line: what was dropped, which learner it needs, and the override that took it."""
    names = {"panels": "figure panel", **SECTIONS}
    parts = []
    for section in ("published", "claims", "significance", "sensitivity", "panels"):
        entries = [_section(plain, section)[i] for s, i in drops if s == section]
        ids = [_describe(section, e) for e in entries]
        if len(set(ids)) < len(ids):  # one selector under several metrics: name the metric too
            ids = [f"{d} {e.get('metric')}" if isinstance(e, dict) and e.get("metric") else d
                   for d, e in zip(ids, entries)]
        if ids:
            word = names[section] + ("s" if len(ids) > 1 else "")
            parts.append(f"{word} {', '.join(ids)}")
    learners = sorted({a for d in drops for a in needs[d]})
    they = "they need" if len(drops) > 1 else "it needs"
    return (f"dropped {' and '.join(parts)}: {they} "
            + "; ".join(f"{a}, {why[a]}" for a in learners))
