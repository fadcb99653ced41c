"""Two experiments, one output (issue 30, item 3): two configs that would write the same figure
or the same artefact files are a config error naming both, not one job fewer."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rankrepro.pipeline.catalog import load_catalog
from rankrepro.pipeline.config_errors import ConfigError

from test_config_names import CONFIG, _add, dry_run, experiment_text, scratch_workflow
from conftest import committed_catalog


@pytest.fixture
def two(tmp_path):
    """A config folder without experiments; the tests add theirs."""
    cfg = tmp_path / "config"
    shutil.copytree(CONFIG, cfg, ignore=shutil.ignore_patterns("experiment", "diagnoses"))
    return cfg


# (figure file of a, figure file of b (None: the artefact's name), the key named)
CASES = [
    ("fig3", "fig3", "experiment.figure.file"),
    ("fig3", "FIG3", "experiment.figure.file"),
    ("b", None, "experiment.figure"),  # a draws figures/p/b.png, which is b's own figure
]


@pytest.mark.parametrize("fa,fb,key", CASES)
def test_two_experiments_one_figure_is_a_config_error(two, fa, fb, key):
    _add(two, "harrington2003/a.yaml", experiment_text("harrington2003", "a", figure_file=fa))
    _add(two, "harrington2003/b.yaml", experiment_text("harrington2003", "b", figure_file=fb))
    for cache in (None, two.parent / "cache"):
        with pytest.raises(ConfigError) as err:
            load_catalog("smoke", config_dir=two, cache_dir=cache)
        assert err.value.key == key
        assert "'harrington2003/a'" in str(err.value) and "'harrington2003/b'" in str(err.value)
    assert not list((two.parent / "cache").glob("*.json"))  # nothing kept


def test_different_figures_and_papers_do_not_collide(two):
    _add(two, "harrington2003/a.yaml", experiment_text("harrington2003", "a", figure_file="fig3a"))
    _add(two, "harrington2003/b.yaml", experiment_text("harrington2003", "b", figure_file="fig3b"))
    _add(two, "crammer_singer2005/c.yaml", experiment_text("crammer_singer2005", "c", figure_file="fig3a"))
    cat = load_catalog("smoke", config_dir=two)
    assert sorted(e.figure_file for e in cat.values()) == ["fig3a", "fig3a", "fig3b"]


def test_the_committed_catalog_has_no_collision():
    cat = committed_catalog("paper")
    figures = [(e.paper, e.figure_file.casefold()) for e in cat.values() if e.figure_file]
    assert len(figures) == len(set(figures))


def test_the_workflow_refuses_two_experiments_with_one_figure(tmp_path):
    """Today the workflow plans one figure job fewer and says nothing."""
    w = scratch_workflow(tmp_path)
    _add(w / "config", "harrington2003/a.yaml", experiment_text("harrington2003", "a", figure_file="fig3"))
    _add(w / "config", "harrington2003/b.yaml", experiment_text("harrington2003", "b", figure_file="fig3"))
    r = dry_run(w, tmp_path)
    text = r.stdout + r.stderr
    assert r.returncode != 0, text[-2000:]
    assert "config error in experiment 'harrington2003/b' at key 'experiment.figure.file'" in text
    assert "'harrington2003/a'" in text
