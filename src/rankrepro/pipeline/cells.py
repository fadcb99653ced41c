"""What an experiment runs: its :class:`Cell` s (one algorithm with one hyperparameter
setting, or a main cell re-run under a sensitivity value), the loaded :class:`Experiment`, the
selectors that name cells, and the fingerprints that decide when a cell reruns."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf


# how settings compare and print (in cell ids, labels, selectors and grids)
def fmt_value(v: Any) -> str:
    return repr(v) if isinstance(v, float) else str(v)


def equal_values(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)
    return a == b


def same_value(a: Any, b: Any) -> bool:
    """Equal as settings: numbers by value (1 == 1.0; True is not 1), lists and mappings
    element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if is_number(a) and is_number(b):
        return equal_values(a, b)
    if isinstance(a, (list, tuple, ListConfig)) and isinstance(b, (list, tuple, ListConfig)):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, DictConfig)) and isinstance(b, (dict, DictConfig)):
        return set(map(str, a)) == set(map(str, b)) and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Cell:
    """One sweep cell: one algorithm with one hyperparameter setting on one artefact."""

    id: str
    algorithm: str  # key in ``algorithms``
    estimator: str  # registry name
    label: str
    params: dict[str, Any] = field(hash=False)  # fixed + swept hyperparameters
    swept: dict[str, Any] = field(hash=False)  # the swept ones only
    #: a sensitivity cell: the main cell it re-runs (same seeds: common random numbers) and
    #: the choice and value it runs under; empty for a main cell
    base: str = ""
    choice: str = ""
    value: str = ""

    def matches(self, selector: dict[str, Any]) -> bool:
        for key, want in selector.items():
            wants = list(want) if isinstance(want, (list, tuple, ListConfig)) else [want]
            if key in ("algorithm", "cell", "estimator"):
                if getattr(self, "id" if key == "cell" else key) not in wants:
                    return False
            elif key != "best" and key in self.params:
                # a hyperparameter filters only the cells that have it: {tau: 0.3} keeps
                # PRank (no tau) and drops OAP-BPM with tau = 0.6
                if not any(equal_values(self.params[key], w) for w in wants):
                    return False
        return True


SELECTOR_KEYS = ("algorithm", "cell", "estimator", "best")


def select(cells: list[Cell], selector: dict[str, Any]) -> list[Cell]:
    """The cells a selector names.  ``best: true`` is resolved later, on results
    (:func:`rankrepro.report.aggregate.resolve`): it keeps, per algorithm, the cell with the
    lowest final value of the metric in question."""
    return [c for c in cells if c.matches(selector)]


@dataclass
class Experiment:
    name: str  # <paper>/<artefact>
    scale: str
    cfg: DictConfig  # the resolved, validated config
    cells: list[Cell]
    n_trials: int
    n_train: int
    n_test: int
    curve_points: int
    max_steps: int | None = None
    max_users: int | None = None
    #: (choice, value) -> the experiment with that value of an open protocol choice
    variants: dict[tuple[str, str], "Experiment"] = field(default_factory=dict)
    #: the extra cells the sensitivity choices add (only those whose computation differs from the main cell's)
    sensitivity_cells: list[Cell] = field(default_factory=list)
    #: what the user's overrides took away (pipeline.user_drops), one line, or ""
    override_note: str = ""
    #: the entries dropped, (section, index) as :func:`rankrepro.pipeline.user_drops.pruned` takes them
    override_drops: tuple = ()
    #: the config as YAML, kept once made while the config is read-only (as a validated one is)
    _yaml: str | None = field(default=None, init=False, repr=False, compare=False)
    #: cell id -> cell_fingerprint, kept while the config is read-only (the workflow's catalog:
    #: its start computes every fingerprint for freshness.sync and again for twin_cells)
    _fingerprints: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def paper(self) -> str:
        return self.cfg.experiment.paper

    @property
    def artefact(self) -> str:
        return self.cfg.experiment.artefact

    @property
    def figure_file(self) -> str | None:
        """The figure's file name (no suffix) under figures/<paper>/: the paper's numbering
        when the config gives it, else the artefact's name; None without a figure."""
        f = self.cfg.experiment.figure
        return None if f is None else (f.file or self.artefact)

    @property
    def all_cells(self) -> list[Cell]:
        """The main cells, then the sensitivity cells."""
        return [*self.cells, *self.sensitivity_cells]

    def cell(self, cell_id: str) -> Cell:
        for c in self.all_cells:
            if c.id == cell_id:
                return c
        raise KeyError(f"experiment {self.name} has no cell '{cell_id}' (cells: {[c.id for c in self.all_cells]})")

    def variant_of(self, cell: Cell) -> tuple["Experiment", Cell]:
        """The experiment and main cell a cell computes: itself for a main cell; for a
        sensitivity cell, the variant experiment and its cell with the main cell's id."""
        if not cell.base:
            return self, cell
        var = self.variants[(cell.choice, cell.value)]
        return var, var.cell(cell.base)

    def cell_trials(self, cell: Cell) -> int:
        """The number of trials ``cell`` runs: the experiment's, unless its protocol gives a
        cell fewer (``Protocol.trials_of``: the LETOR seeds protocol runs a learner that is
        deterministic given the data once)."""
        from ..protocols import PROTOCOLS

        trials_of = getattr(PROTOCOLS[self.cfg.experiment.protocol], "trials_of", None)
        return self.n_trials if trials_of is None else int(trials_of(self, cell))

    def to_yaml(self) -> str:
        """The config as YAML (what the resolved file holds and the config fingerprint hashes:
        ~30 ms to write, made once per experiment while its config cannot change)."""
        frozen = OmegaConf.is_readonly(self.cfg)
        if self._yaml is not None and frozen:
            return self._yaml
        text = OmegaConf.to_yaml(self.cfg)
        self._yaml = text if frozen else None
        return text


def cell_fingerprint(exp: Experiment, cell: Cell) -> str:
    """Hash of everything that determines a cell's numbers -- its config values and the code
    that computes it (:mod:`.codeprint`): editing any of it reruns the cell, editing
    anything else does not.  Kept per experiment while its config is read-only (the code's
    digests are read once per process anyway: :func:`.codeprint.module_digest`)."""
    frozen = OmegaConf.is_readonly(exp.cfg)
    if frozen and cell.id in exp._fingerprints:
        return exp._fingerprints[cell.id]
    fp = hashlib.sha256(json.dumps(_fingerprint_payload(exp, cell), sort_keys=True, default=str).encode()
                        ).hexdigest()[:16]
    if frozen:
        exp._fingerprints[cell.id] = fp
    return fp


def reused_trials(exp: Experiment, cell: Cell) -> tuple[str, int] | None:
    """(main cell id, n) when sensitivity cell ``cell`` differs from its main cell in the
    number of trials only, and runs more of them: its first n trials are then the main
    cell's, bit for bit (same seeds, same settings; the protocol's trials must not depend on
    how many there are, ``Protocol.trials_extend``), and only the others are computed.
    None otherwise."""
    if not cell.base:
        return None
    from ..protocols import PROTOCOLS

    if not PROTOCOLS[exp.cfg.experiment.protocol].trials_extend:
        return None
    var, vc = exp.variant_of(cell)
    if var.cfg.experiment.protocol != exp.cfg.experiment.protocol or var.n_trials <= exp.n_trials:
        return None
    a, b = _fingerprint_payload(var, vc), _fingerprint_payload(exp, exp.cell(cell.base))
    a["n_trials"] = b["n_trials"]
    return (cell.base, exp.n_trials) if a == b else None


def reread_of(exp: Experiment, cell: Cell) -> str | None:
    """The cell whose fits sensitivity cell ``cell`` reads under other settings, when the two
    differ only in parameters the learner declares prediction-only (``PREDICT_ONLY``, e.g.
    GPOR's ``ordinal_predict``, Harrington's ``output``: the fit does not depend on them) and
    the protocol can read one fit under several (``run_rereads``): the workflow computes such
    a cell's trials in that cell's job, from the same fits (bit for bit what it would compute
    on its own; :mod:`.handoff`).  That cell is its main cell, or else an earlier sensitivity
    cell of the same main cell (Harrington's ``multiverse=centred.rank.freund_schapire.held_out``
    reads the fits of ``instance_encoding=centred``) that computes its own fits: it reads no other cell's,
    takes over no trials and is not the main cell's computation again.  All of them run on the
    main cell's seeds.  None otherwise."""
    if not cell.base:
        return None
    from ..protocols import PROTOCOLS

    protocol = PROTOCOLS[exp.cfg.experiment.protocol]
    if getattr(protocol, "run_rereads", None) is None:
        return None
    main = exp.cell(cell.base)
    only = getattr(protocol.estimators.get(main.estimator), "PREDICT_ONLY", ())
    if not only:
        return None
    found = exp.__dict__.setdefault("_reread_of", {})
    if cell.id not in found:
        found[cell.id] = _reread_base(exp, cell, main, tuple(only))
    return found[cell.id]


def _reread_base(exp: Experiment, cell: Cell, main: Cell, only: tuple[str, ...]) -> str | None:
    mine = _payload_of(exp, cell)
    if mine is None:
        return None
    main_payload = _payload_of(exp, main)
    candidates = [main] + [c for c in exp.sensitivity_cells if c.base == cell.base and c.id != cell.id]
    for c in candidates:
        if c.id == cell.id:
            continue
        if c is not main:
            if exp.sensitivity_cells.index(c) > exp.sensitivity_cells.index(cell):
                break  # only earlier cells: no two cells read each other's
            if reread_of(exp, c) is not None or reused_trials(exp, c) is not None:
                continue
        theirs = _payload_of(exp, c)
        if theirs is None or (c is not main and theirs == main_payload):
            continue
        if theirs == mine:
            return None  # the same computation: a twin (twin_cells), not a re-reading
        if theirs["params"] == mine["params"]:
            continue
        a, b = dict(mine), dict(theirs)
        for p in (a, b):
            p["params"] = {k: v for k, v in p["params"].items() if k not in only}
        if a == b:
            return c.id
    return None


def _payload_of(exp: Experiment, cell: Cell) -> dict | None:
    """The fingerprint payload of the computation ``cell`` runs (a sensitivity cell's: its
    variant's), kept per experiment; None when it runs another protocol or learner than its
    main cell."""
    kept = exp.__dict__.setdefault("_payloads", {})
    if cell.id not in kept:
        var, vc = exp.variant_of(cell)
        main = exp.cell(cell.base) if cell.base else cell
        same = (var.cfg.experiment.protocol == exp.cfg.experiment.protocol and vc.estimator == main.estimator)
        kept[cell.id] = _fingerprint_payload(var, vc) if same else None
    return kept[cell.id]


def rereads_of(exp: Experiment, cell_id: str) -> list[str]:
    """The sensitivity cells that read cell ``cell_id``'s fits (:func:`reread_of`)."""
    found = exp.__dict__.get("_rereads")
    if found is None:
        found = {}
        for c in exp.sensitivity_cells:
            base = reread_of(exp, c)
            if base is not None:
                found.setdefault(base, []).append(c.id)
        exp.__dict__["_rereads"] = found
    return list(found.get(cell_id, []))


def twin_cells(catalog: dict[str, "Experiment"], data: dict[str, str | None]) -> dict[tuple[str, str], tuple[str, str]]:
    """(experiment, cell) -> the (experiment, cell) of another experiment that computes exactly
    the same thing: the same fingerprint (config values, seeds, sizes, protocol and code:
    :func:`cell_fingerprint`) on the same processed data (``data``: experiment -> its data
    set, None for generated data; experiments missing from it do not run).  Such a cell's
    results are its twin's, bit for bit (timing metrics apart, measured once), so the workflow
    copies them instead of computing them again (the arena's experiments repeat many cells of
    the papers' own).  The twin is a paper's experiment rather than the arena's, then the first
    by name; a cell is never its own or another copy's twin."""
    first: dict[tuple[str, str | None], tuple[str, str]] = {}
    twins = {}
    for name in sorted((n for n in catalog if n in data), key=lambda n: (catalog[n].paper == "arena", n)):
        exp = catalog[name]
        for c in exp.all_cells:
            key = (cell_fingerprint(*exp.variant_of(c)), data[name])
            if key in first:
                twins[(name, c.id)] = first[key]
            else:
                first[key] = (name, c.id)
    return twins


def _fingerprint_payload(exp: Experiment, cell: Cell) -> dict:
    e = exp.cfg.experiment
    payload = {
        "cell": cell.id, "estimator": cell.estimator, "params": cell.params, "protocol": e.protocol,
        "features": e.features, "seed": int(e.seed), "n_trials": exp.cell_trials(cell), "n_train": exp.n_train,
        "n_test": exp.n_test, "curve_points": exp.curve_points, "metrics": list(e.metrics),
        "dataset": OmegaConf.to_container(exp.cfg.dataset),
    }
    for cap in ("max_steps", "max_users"):  # only when a scale sets them (keeps older fingerprints valid)
        if getattr(exp, cap) is not None:
            payload[cap] = getattr(exp, cap)
    from ..protocols import PROTOCOLS

    # fields the protocol does not read hash as the constants it declares (the values their
    # former placeholders had): leaving them unset changes no fingerprint
    for key, value in PROTOCOLS[e.protocol].fingerprint_constants.items():
        group, _, fld = key.partition(".")
        if group == "experiment":
            payload[fld] = value
        else:
            payload[group][fld] = value
    # the code the numbers come from: the modules of the cell's import closure (by their code,
    # not their comments or docstrings) and the numeric libraries' major.minor versions
    from .codeprint import cell_identity, fingerprint as code_fingerprint

    payload["code"] = code_fingerprint(cell_identity(exp, cell))
    # through JSON, as hashed: a comparison of two payloads sees what the hash sees
    return json.loads(json.dumps(payload, sort_keys=True, default=str))


def claim_family(exp: Experiment) -> str:
    """The family the experiment's claims are adjusted with: ``experiment.claim_family``, or
    the experiment's own name."""
    fam = exp.cfg.experiment.get("claim_family")
    return str(fam) if fam is not None else exp.name


def config_fingerprint(exp: Experiment) -> str:
    return hashlib.sha256(exp.to_yaml().encode()).hexdigest()[:16]
