"""Where the command line may write (issue "Reliability IV", item 2), and what a scale may be
called (item 3).

The checkout's ``results/`` and ``figures/`` are the workflow's outputs, committed: ``rankrepro
run``, ``arena``, ``export`` and ``runfiles`` never write into them, nor into the checkout's root
(a run's lock, report and results/ tree would land among the committed ones).  An ``--out``
that resolves there (``.``, ``results/``, ``figures/x``, a link leading into them) or is empty is
refused in one line saying why and what to give instead.  Reading the committed results (cells
reused at paper scale, the records exported) is not affected.  A ``--scale`` names a folder
``runs/<scale>/``: a plain name (letters, digits, ``_`` and ``-``), never a path such as
``../../x`` that would read or write a tree outside the checkout."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import CliError

#: the checkout's folders only the workflow writes (committed)
COMMITTED = ("results", "figures")


def checkout_root() -> Path:
    """The checkout: the folder holding the config folder the command line reads (else the
    working folder)."""
    from ..config_files import find_config_dir

    try:
        return find_config_dir().parent
    except FileNotFoundError:
        return Path.cwd()


def writable_out(out: str | os.PathLike | None, default: str | os.PathLike, command: str) -> Path:
    """``out`` (``default`` when None) as the folder ``rankrepro <command>`` writes into, or a
    :class:`CliError` when it is empty, the checkout's root or inside its results/ or figures/."""
    if out is not None and str(out).strip() == "":
        raise CliError(f"{command} --out '': names no folder (it would write into the working folder); "
                       f"give one, e.g. the default {default}")
    path = Path(out) if out is not None else Path(default)
    real, root = os.path.realpath(path), os.path.realpath(checkout_root())
    instead = (f"refused: `rankrepro {command}` never writes into the checkout's root, results/ or figures/ "
               f"(the workflow's committed outputs, `make reproduce`); give a folder of its own, e.g. the "
               f"default {default}")
    if real == root:
        raise CliError(f"{command} --out {path}: is the checkout itself ({root}); {instead}")
    for sub in COMMITTED:
        top = os.path.join(root, sub)
        if real == top or real.startswith(top + os.sep):
            raise CliError(f"{command} --out {path}: is inside the committed {sub}/ ({real}); {instead}")
    return path


def plain_scale(scale: str, command: str) -> str:
    """``scale``, or a :class:`CliError` when it is not a plain name."""
    if not re.fullmatch(r"[A-Za-z0-9_-]+", scale):
        raise CliError(f"{command} --scale {scale!r}: a scale is a plain name (letters, digits, _ and -: paper, "
                       "smoke, ...), read from runs/<scale>/ (paper: results/), never a path")
    return scale
