"""Configs that load but mean nothing (issue 30, item 6): a grid listing one value twice, a
sensitivity value that sets the seed, two values or two choices that set the same.  Each is a
ConfigError naming the key."""
from __future__ import annotations

import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError

from test_config_names import _add, config_copy, experiment_text  # noqa: F401 - fixture

WH = "algorithms:\n  wh: {estimator: widrow_hoff, label: WH, grid: {eta: %s}}\n"


def _sens(*choices: str) -> str:
    return "  sensitivity:\n" + "".join(f"    - {{{c}}}\n" for c in choices)


# (top-level text, text under experiment:, the key named)
CASES = [
    (WH % "[1, 1.0]", "", "algorithms.wh.grid.eta[1]"),
    (WH % "[0.5, 0.1, 0.50]", "", "algorithms.wh.grid.eta[2]"),
    ("", _sens("choice: s, main: a, why: w, values: {a: {}, b: {experiment.seed: 7}}"),
     "experiment.sensitivity[0].values.b.experiment.seed"),
    ("", _sens("choice: s, main: a, why: w, values: {a: {}, b: {experiment.n_train: 50}, "
               "c: {experiment.n_train: 50.0}}"), "experiment.sensitivity[0].values.c"),
    ("", _sens("choice: s, main: a, why: w, values: {a: {}, b: {}}"), "experiment.sensitivity[0].values.b"),
    ("", _sens("choice: s, main: a, why: w, values: {a: {}, b: {experiment.n_train: 50}}",
               "choice: t, main: x, why: w, values: {x: {}, y: {experiment.n_train: 50}}"),
     "experiment.sensitivity[1].values"),
]


@pytest.mark.parametrize("extra,experiment_extra,key", CASES, ids=[k for _, _, k in CASES])
def test_a_meaningless_config_is_refused(config_copy, extra, experiment_extra, key):
    f = _add(config_copy, "harrington2003/meaningless.yaml",
             experiment_text("harrington2003", "meaningless", extra, experiment_extra))
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/meaningless", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == key, str(err.value)


def test_distinct_settings_still_load(config_copy):
    f = _add(config_copy, "harrington2003/meaningful.yaml", experiment_text(
        "harrington2003", "meaningful", WH % "[1, 0.5, 0.1]",
        _sens("choice: s, main: a, why: w, values: {a: {}, b: {experiment.n_train: 50}}",
              "choice: t, main: x, why: w, values: {x: {}, y: {experiment.n_train: 40}}")))
    try:
        exp = load_experiment("harrington2003/meaningful", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert [c.id for c in exp.cells] == ["prank", "wh-eta1", "wh-eta0.5", "wh-eta0.1"]
    assert {c.value for c in exp.sensitivity_cells} == {"b", "y"}
