"""Settings that load but mean nothing (issue 58, item 8): a scale's absurd caps or a scale
file named as another scale, a number written as text, a metric listed twice, a trial count
taken from another key, a hyperparameter below the smallest normal float, a label longer
than a line, a claim without words, with an id that is no name, or compared with itself, and
a table carrying a figure block that does not say which figure it draws.  Each check raises
:class:`.ConfigError` naming the key.

Not imported by any learner, protocol or data builder: editing it moves no cell's fingerprint."""

from __future__ import annotations

import contextlib
import contextvars
import re
import sys
from typing import Any, Iterator

from .config_errors import ConfigError, require
from .config_limits import MAX_HYPERPARAMETER_INT, MAX_SIZES

#: the largest cap each key of a scale may give (a cap above what any experiment may ask for
#: caps nothing, and one of 10**30 is a typo)
MAX_SCALE = {
    "max_trials": MAX_SIZES["experiment.n_trials"][0],
    "max_train": MAX_SIZES["experiment.n_train"][0],
    "max_test": MAX_SIZES["experiment.n_test"][0],
    "curve_points": MAX_SIZES["experiment.curve_points"][0],
    "max_steps": MAX_HYPERPARAMETER_INT,
    "max_users": MAX_SIZES["experiment.n_train"][0],
}

#: the longest label of an algorithm (a legend entry, a table row and a line of the report);
#: the project's longest is under 60 characters
MAX_LABEL = 200

#: a claim's id: a name (it is an anchor of the report and a key of the records)
CLAIM_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,119}", re.ASCII)


def check_scale(name: str, scale: str, cfg: Any) -> None:
    """A scale file says the name it is chosen by, and caps within :data:`MAX_SCALE`."""
    s = cfg.scale
    require(name, "scale.name", str(s.name) == scale,
            f"the file config/scale/{scale}.yaml says its name is '{s.name}': a scale's name is its file's name "
            f"(else its outputs and records would be filed as scale '{s.name}')")
    for key, bound in MAX_SCALE.items():
        v = s.get(key)
        if v is None:
            continue
        require(name, f"scale.{key}", v <= bound,
                f"{v:,} caps nothing (no experiment may ask for more than {bound:,}): set a real cap or null")


def check_meaning(name: str, cfg: Any, cells: list) -> None:
    """The experiment's own keys (checked once, when a config is composed)."""
    from omegaconf import OmegaConf

    from .cells import select

    e = cfg.experiment
    metrics = [str(m) for m in e.metrics]
    for j, m in enumerate(metrics):
        require(name, f"experiment.metrics[{j}]", m not in metrics[:j],
                f"'{m}' is listed twice (first at metrics[{metrics.index(m)}])")
    if e.kind == "table" and e.figure is not None:
        require(name, "experiment.figure.file", e.figure.file is not None and e.figure.file != e.artefact,
                "a table that carries a figure block draws one of the paper's figures beside it: say which "
                "(figure: {file: fig3b}), else the figure is filed under the table's name")
    for key, a in cfg.algorithms.items():
        require(name, f"algorithms.{key}.label", 0 < len(str(a.label)) <= MAX_LABEL,
                f"a label of {len(str(a.label)):,} characters (a legend entry and a table row): at most {MAX_LABEL}"
                if a.label else "say what the algorithm is called")
        for where in ("params", "grid"):
            for pk, v in OmegaConf.to_container(a[where]).items():
                for j, x in enumerate(v if isinstance(v, list) else [v]):
                    idx = f"[{j}]" if isinstance(v, list) else ""
                    require(name, f"algorithms.{key}.{where}.{pk}{idx}",
                            not (isinstance(x, float) and x != 0 and abs(x) < sys.float_info.min),
                            f"{x!r} is below the smallest normal float ({sys.float_info.min:.3g}): no step, "
                            "rate or scale means anything there")
    for i, c in enumerate(e.claims):
        key = f"experiment.claims[{i}]"
        require(name, f"{key}.id", CLAIM_ID.fullmatch(str(c.id)) is not None,
                f"'{c.id}' is not a claim id: letters, digits, '_', '.' and '-' (not first), at most 120 characters")
        require(name, f"{key}.text", bool(str(c.text).strip()), "say the paper's claim in words")
        if c.kind == "less":
            rhs_sel = OmegaConf.to_container(c.rhs)
            require(name, f"{key}.rhs", bool(rhs_sel),
                    "an empty selector compares with every cell, the claim's own included: name the cells compared with")
            lhs = {x.id for x in select(cells, OmegaConf.to_container(c.lhs))}
            rhs = {x.id for x in select(cells, rhs_sel)}
            require(name, f"{key}.rhs", not (lhs & rhs),
                    f"selects {', '.join(sorted(lhs & rhs))} which lhs selects too: a cell compared with itself")


def check_unresolved(name: str, container: Any) -> None:
    """Keys that must be written as they are, not interpolated: a trial count taken from
    another key (``n_trials: ${experiment.seed}``) runs a number of trials nobody chose."""
    e = container.get("experiment") if isinstance(container, dict) else None
    v = e.get("n_trials") if isinstance(e, dict) else None
    require(name, "experiment.n_trials", not (isinstance(v, str) and "${" in v),
            f"'{v}': the number of trials is written as a number, not taken from another key")


_STRICT = contextvars.ContextVar("rankrepro_strict_numbers", default=False)


@contextlib.contextmanager
def strict_numbers() -> Iterator[None]:
    """Within: a number written as text ("20", "0.32") where the schema wants an int or a float
    is an error at its key (OmegaConf would convert it silently).  Outside, OmegaConf is as it
    was (the wrapper asks a context variable)."""
    _install()
    token = _STRICT.set(True)
    try:
        yield
    finally:
        _STRICT.reset(token)


_installed = False


def _install() -> None:
    global _installed
    if _installed:
        return
    from omegaconf.errors import ValidationError
    from omegaconf.nodes import FloatNode, IntegerNode

    for cls in (IntegerNode, FloatNode):
        original = cls._validate_and_convert_impl

        def checked(self, value, _original=original):
            if _STRICT.get() and isinstance(value, str):
                raise ValidationError("the number '$VALUE' is written as text (quoted): write it without quotes")
            return _original(self, value)

        cls._validate_and_convert_impl = checked
    _installed = True


__all__ = ["ConfigError", "check_meaning", "check_scale", "check_unresolved", "strict_numbers"]
