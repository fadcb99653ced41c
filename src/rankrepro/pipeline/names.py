"""The names that become parts of output paths, defined once.

A paper, an artefact, an algorithm key, a cell id, a figure file, a sensitivity choice and
value, a scale: each is one component of a file or folder name under ``results/``,
``figures/``, ``logs/`` or ``runs/<scale>/``.  :data:`NAME_PATTERNS` says what each may be;
the catalog refuses any other name when a config loads (a :class:`ConfigError` naming the
key), and the Snakefile's ``wildcard_constraints`` (``rules/common.smk``) use the same
patterns, so a name the catalog accepts is one Snakemake matches.

A name that matches its pattern holds no ``/``, is not ``.`` or ``..`` and is ASCII; with the
lengths of :data:`MAX_LENGTH` every file name the workflow writes (including the hidden
temporaries of atomic writes, ``.<name>.<random>.tmp``) stays within the 255 bytes of a file
system's name limit.  :func:`output_path` joins the parts of an output path and refuses any
path that would leave its root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: what each name may be (Python regular expressions, matched in full; ASCII only)
NAME_PATTERNS: dict[str, str] = {
    "paper": r"[A-Za-z0-9_]+",
    "artefact": r"[A-Za-z0-9_]+",
    # an algorithm key begins its cells' ids: no '-', which separates the swept values
    "algorithm": r"[A-Za-z0-9_]+",
    # <algorithm>[-<param><value>...][~<choice>=<value>]
    "cell": r"[A-Za-z0-9_.\-~=]+",
    "figure": r"[A-Za-z0-9_]+",
    # a sensitivity choice or value label (part of a cell id)
    "label": r"[A-Za-z0-9_][A-Za-z0-9_.\-]*",
    "scale": r"[A-Za-z0-9_]+",
    # a data set of the registry (data/raw/<dataset>/, data/processed/<dataset>/)
    "dataset": r"[A-Za-z0-9_.\-]+",
}

#: the longest name of each kind (characters = bytes: the names are ASCII).  The longest file
#: names written are ``.<cell>.fingerprint.<8 random>.tmp`` (cell id + 26) and
#: ``.<artefact>.config.yaml.tmp`` (artefact + 17), far below 255.
MAX_LENGTH: dict[str, int] = {"paper": 64, "artefact": 64, "algorithm": 64, "cell": 160, "figure": 64,
                              "label": 64, "scale": 64, "dataset": 64}

#: names a kind may not take, with the reason: a paper named ``report`` would write
#: ``results/report/<artefact>.*`` beside the report, ``results/report/index.html``
RESERVED: dict[str, dict[str, str]] = {
    "paper": {"report": "results/report/ holds the report (results/report/index.html)"},
}

_COMPILED = {kind: re.compile(p, re.ASCII) for kind, p in NAME_PATTERNS.items()}

_WHAT = {
    "paper": "letters, digits and '_'",
    "artefact": "letters, digits and '_'",
    "algorithm": "letters, digits and '_'",
    "cell": "letters, digits, '_', '.', '-', '~' and '='",
    "figure": "letters, digits and '_'",
    "label": "letters, digits, '_', '.' and '-' (not starting with '.' or '-')",
    "scale": "letters, digits and '_'",
    "dataset": "letters, digits, '_', '.' and '-'",
}


def name_problem(kind: str, name: object) -> str | None:
    """Why ``name`` cannot be a ``kind`` name, or None when it can."""
    if not isinstance(name, str):
        return f"must be a string, got {type(name).__name__} {name!r}"
    if not _COMPILED[kind].fullmatch(name):
        return f"{name!r} is not a valid {kind} name: it becomes part of file names, use only {_WHAT[kind]}"
    if len(name) > MAX_LENGTH[kind]:
        return (f"{name[:40]!r}... is {len(name)} characters long: a {kind} name becomes part of file names "
                f"and may have at most {MAX_LENGTH[kind]}")
    why = RESERVED.get(kind, {}).get(name)
    if why is not None:
        return f"{name!r} is reserved: {why}"
    return None


class OutsideRoot(ValueError):
    """An output path that would leave the folder it is written under."""


def output_path(root: str | os.PathLike, *parts: str) -> Path:
    """``root/part/...``, refused (:class:`OutsideRoot`) unless it stays under ``root``: no
    part may be absolute, empty, or climb out with ``..`` (symbolic links are followed for
    the parts that exist)."""
    base = Path(root)
    p = base.joinpath(*parts)
    for part in parts:
        if not isinstance(part, str) or os.path.isabs(part) or any(seg in ("", ".", "..") for seg in part.split("/")):
            raise OutsideRoot(f"output path {p} does not stay under {base}: part {part!r}")
    real_base = Path(os.path.realpath(base))
    real = Path(os.path.realpath(p))
    if real != real_base and real_base not in real.parents:
        raise OutsideRoot(f"output path {p} resolves to {real}, outside {real_base}")
    return p
