"""The papers' claims: one kind per module, registered in :data:`KINDS`.

The config schema's ``experiment.claims[i].kind`` must name a key of :data:`KINDS`; each
kind checks its own keys when the config loads (:meth:`ClaimKind.check`,
:meth:`ClaimKind.check_cells`) and decides the verdict with its evidence
(:meth:`ClaimKind.evaluate`).  Adding a kind: a module here with a :class:`ClaimKind`
subclass, and its name in :data:`MODULES` (see docs/configs.md, "Adding a claim kind").
"""

from __future__ import annotations

from importlib import import_module
from typing import Callable

import pandas as pd

from .base import OPTIONAL_DEFAULTS, Checks, Claim, ClaimKind, ClaimResult, Context

#: the modules of this package that define a kind (each as ``KIND``), in the order error
#: messages list them: registering a kind is one name here
MODULES = ("less", "monotone", "argmin", "spread", "falls", "levels")

#: every claim kind, by the name a config gives as ``kind``
KINDS: dict[str, ClaimKind] = {k.name: k for k in (import_module(f"{__name__}.{m}").KIND for m in MODULES)}


def kind_names() -> str:
    """The known kinds for an error message: 'a', 'b' or 'c'."""
    names = [repr(k) for k in KINDS]
    return ", ".join(names[:-1]) + " or " + names[-1]


def evaluate(claim: Claim, summary: pd.DataFrame, cells: Callable[[dict], list],
             trials: pd.DataFrame | None = None, unit: str = "trials") -> ClaimResult:
    """The claim's verdict and evidence on a summary; ``cells(selector)`` the cells a selector
    picks (``best`` resolved on the claim's metric); ``trials`` the per-trial rows the claim
    is tested on; ``unit`` what a claim on a LETOR test metric is tested over
    (:mod:`rankrepro.claims.units`).  The verdict is the claim's alone; :func:`rankrepro.claims.testing.adjust`
    decides a family of claims together (Holm)."""
    if trials is None:
        raise TypeError(f"claim {claim.id}: a claim is tested on the per-trial values: pass the trials")
    r = KINDS[claim.kind].evaluate(claim, Context(summary, cells, trials, unit))
    r.diagnosis = claim.diagnosis
    return r


__all__ = ["Checks", "Claim", "ClaimKind", "ClaimResult", "Context", "KINDS", "OPTIONAL_DEFAULTS", "evaluate",
           "kind_names"]
