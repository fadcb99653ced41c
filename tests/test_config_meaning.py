"""Configs that load but mean nothing (issue 58, item 8): each is refused at its key in one
line (a ConfigError), before any compute."""
from __future__ import annotations

import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError

from test_config_names import _add, config_copy, experiment_text  # noqa: F401 - fixture

WH = "algorithms:\n  wh: {estimator: widrow_hoff, label: %s, grid: {eta: %s}}\n"
CLAIM = "  claims:\n    - {id: %s, text: %s, kind: less, metric: online_rank_loss, lhs: %s, rhs: %s}\n"
PUBLISHED = "  published:\n    - {select: {algorithm: prank}, metric: online_rank_loss, mean: \"0.32\"}\n"


def _claim(id_="c1", text="x", lhs="{algorithm: prank}", rhs="{algorithm: wh}") -> str:
    return CLAIM % (id_, text, lhs, rhs)


# (top-level text, text under experiment:, replacements in the text, the key named)
CASES = [
    ("", "", {"n_train: 60": 'n_train: "60"'}, "experiment.n_train"),
    (WH % ("WH", "[0.1]"), PUBLISHED, {}, "experiment.published[0].mean"),
    ("", "", {"metrics: [online_rank_loss]": "metrics: [online_rank_loss, online_rank_loss]"},
     "experiment.metrics[1]"),
    (WH % ("WH", "[0.1]"), _claim(rhs="{algorithm: prank}"), {}, "experiment.claims[0]"),
    (WH % ("WH", "[0.1, 0.2]"), _claim(lhs="{algorithm: wh}", rhs="{algorithm: wh}"), {}, "experiment.claims[0].rhs"),
    (WH % ("WH", "[0.1]"), _claim(rhs="{}"), {}, "experiment.claims[0].rhs"),
    (WH % ("WH", "[0.1]"), _claim(text='"  "'), {}, "experiment.claims[0].text"),
    (WH % ("WH", "[0.1]"), _claim(id_='"a b/../c"'), {}, "experiment.claims[0].id"),
    ("", "", {"kind: figure": "kind: table"}, "experiment.figure.file"),
    ("", "", {"n_trials: 2": "n_trials: ${experiment.seed}"}, "experiment.n_trials"),
    (WH % ("WH", "[4.9e-324]"), "", {}, "algorithms.wh.grid.eta[0]"),
    (WH % ("L" * 10_000, "[0.1]"), "", {}, "algorithms.wh.label"),
]


@pytest.mark.parametrize("extra,experiment_extra,replace,key", CASES, ids=[f"{i}-{c[3]}" for i, c in enumerate(CASES)])
def test_a_config_that_means_nothing_is_refused_at_its_key(config_copy, extra, experiment_extra, replace, key):
    text = experiment_text("harrington2003", "nothing", extra, experiment_extra)
    for old, new in replace.items():
        assert old in text
        text = text.replace(old, new)
    f = _add(config_copy, "harrington2003/nothing.yaml", text)
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/nothing", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == key, str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("text,key", [
    ("name: tiny\nmax_train: 1000000000000000000000000000000\n", "scale.max_train"),
    ("name: smoke\nmax_train: 100\n", "scale.name"),
    ("name: tiny\nmax_trials: \"20\"\n", "scale.max_trials"),
])
def test_a_scale_that_means_nothing_is_refused(config_copy, text, key):
    f = _add(config_copy, "harrington2003/scaled.yaml", experiment_text("harrington2003", "scaled"))
    s = config_copy / "scale" / "tiny.yaml"
    s.write_text(text)
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/scaled", "tiny", config_dir=config_copy)
    finally:
        f.unlink()
        s.unlink()
    assert err.value.key == key, str(err.value)


def test_the_same_experiment_with_meaningful_values_loads(config_copy):
    f = _add(config_copy, "harrington2003/meaning.yaml", experiment_text(
        "harrington2003", "meaning", WH % ("WH", "[0.1, 1e-300]"), _claim()))
    try:
        exp = load_experiment("harrington2003/meaning", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert [c.id for c in exp.cells] == ["prank", "wh-eta0.1", "wh-eta1e-300"]


def test_a_block_set_on_a_null_key_from_the_command_line_is_named_at_its_key():
    """Harness rerun of item 8 (a table given a figure block, by an override): OmegaConf cannot
    merge a mapping into a null block and failed with "'NoneType' object has no attribute 'get'",
    reported at key 'defaults'; it is named at its key and says what to do instead."""
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "smoke", overrides=["experiment.figure={file: fig9}"])
    assert err.value.key == "experiment.figure" and "write the block in the experiment's file" in str(err.value)
    assert "NoneType" not in str(err.value)
