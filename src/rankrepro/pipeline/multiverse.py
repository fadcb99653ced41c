"""The multiverse of an experiment's readings (issue "The multiverse of readings").

A *reading* of a paper is one value for each of its open protocol choices (the experiment's
``sensitivity`` block); each value is a set of config overrides, so a reading is the union of its
values' overrides.  The main reading takes every choice's main value; the one-at-a-time readings
(one choice off its main value) are the sensitivity choices' own values.  ``experiment.multiverse:
{cross: [choice, ...]}`` asks for every reading of the product of the named choices: the readings
with two or more choices off their main value are added, when the config is composed, as one more
sensitivity choice named :data:`CHOICE`, whose value labels join the crossed choices' values in
the order of ``cross`` (``rank.harrington.5000``).  Everything else -- variant experiments, cells
re-run only where a reading changes what they compute (a reading that changes nothing a cell
computes reuses the cell of the same fingerprint: pipeline.cells.twin_cells), fingerprints,
records -- is the sensitivity machinery's.  The config's ``multiverse.design`` says which
readings are run: ``full`` (the whole product), declared before any result.
"""

from __future__ import annotations

import itertools
from typing import Any

from .config_errors import ConfigError, require

#: the name of the sensitivity choice that holds the crossed readings (reserved)
CHOICE = "multiverse"
#: the designs a config may declare
DESIGNS = ("full",)


def readings(choices: list[dict], cross: list[str]) -> list[tuple[str, dict, dict]]:
    """Every reading of the product of the ``cross`` choices (each a sensitivity block entry as
    plain data) with two or more of them off their main value: (label, {choice: value}, the
    union of the values' overrides).  Raises ValueError (key, message) when two values set one
    key differently."""
    by_name = {str(c["choice"]): c for c in choices}
    axes = [[(name, str(v)) for v in by_name[name]["values"]] for name in cross]
    out = []
    for combo in itertools.product(*axes):
        off = [(n, v) for n, v in combo if v != str(by_name[n]["main"])]
        if len(off) < 2:
            continue  # the main reading, or a one-at-a-time reading: the choice's own value
        sets: dict[str, Any] = {}
        for n, v in combo:
            for k, x in (by_name[n]["values"][v] or {}).items():
                if k in sets and sets[k] != x:
                    raise ValueError("experiment.multiverse.cross",
                                     f"choices cross on key {k}: one value sets {sets[k]!r}, value '{v}' of '{n}' "
                                     f"sets {x!r} (a reading must be one set of overrides)")
                sets[k] = x
        out.append((".".join(v for _, v in combo), dict(combo), sets))
    return out


def expand(name: str, plain: dict) -> ConfigError | None:
    """Add the crossed readings of ``plain["experiment"]["multiverse"]`` (plain config data,
    before the schema merge) to its sensitivity block as the choice :data:`CHOICE`.  A config
    already expanded (a resolved config read back) is left as it is when its readings are these.
    Two crossed values that set one key differently are returned, not raised (nothing added):
    the caller raises it once the choices' own values are checked, so that a bad value is named
    at its own key first."""
    e = plain.get("experiment") or {}
    mv = e.get("multiverse")
    sens = list(e.get("sensitivity") or [])
    names = [str(c.get("choice")) for c in sens if isinstance(c, dict)]
    if not mv:
        require(name, "experiment.sensitivity", CHOICE not in names,
                f"the choice name '{CHOICE}' is reserved for the crossed readings of experiment.multiverse")
        return
    require(name, "experiment.multiverse", isinstance(mv, dict), "a mapping {cross: [choice, ...], design: full, why: ...}")
    cross = mv.get("cross")
    require(name, "experiment.multiverse.cross", isinstance(cross, list) and len(cross) >= 1,
            "list the experiment's sensitivity choices to cross (one alone: its readings are its values)")
    for i, c in enumerate(cross):
        require(name, f"experiment.multiverse.cross[{i}]", isinstance(c, str) and c in names and c != CHOICE,
                f"{c!r} is not a sensitivity choice of this experiment ({', '.join(n for n in names if n != CHOICE)})")
        require(name, f"experiment.multiverse.cross[{i}]", c not in cross[:i], f"{c!r} is crossed twice")
    design = mv.get("design", "full")
    require(name, "experiment.multiverse.design", design in DESIGNS,
            f"{design!r}: the designs are {', '.join(DESIGNS)}")
    base = [c for c in sens if str(c.get("choice")) != CHOICE]
    try:
        rows = readings(base, cross)
    except ValueError as err:
        return ConfigError(name, err.args[0], err.args[1])
    if not rows:  # one choice (or choices that give no combination): its values are the readings
        require(name, "experiment.sensitivity", CHOICE not in names,
                f"the choice name '{CHOICE}' is reserved for the crossed readings of experiment.multiverse")
        return
    block = {"choice": CHOICE,
             "text": ("Every reading of the product of the choices " + ", ".join(cross) + " with two or more of them "
                      "off their main value (value labels: their values in that order)."),
             "main": "main", "why": "the main reading takes every choice's main value.",
             "values": {"main": {}, **{label: sets for label, _, sets in rows}}}
    if CHOICE in names:
        require(name, "experiment.sensitivity", next(c for c in sens if str(c.get("choice")) == CHOICE) == block,
                f"the choice name '{CHOICE}' is reserved for the crossed readings of experiment.multiverse")
        return
    e["sensitivity"] = base + [block]


def labelled(sensitivity: list, multiverse: dict | None) -> dict[str, dict[str, str]]:
    """The crossed readings' labels -> {choice: value} (plain data of a composed config)."""
    if not multiverse:
        return {}
    base = [c for c in sensitivity if str(c["choice"]) != CHOICE]
    return {label: combo for label, combo, _ in readings(base, list(multiverse["cross"]))}
