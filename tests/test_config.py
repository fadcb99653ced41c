"""Every bad config stops at load, naming the key, before any compute."""
import json
import shutil
from pathlib import Path

import pytest

from rankrepro.config_files import list_experiments
from rankrepro.pipeline.catalog import catalog_key, load_catalog, load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from conftest import committed_catalog

EXPERIMENTS = list_experiments(Path(__file__).resolve().parents[1] / "config")


@pytest.mark.parametrize("name", EXPERIMENTS)
@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_every_experiment_composes(name, scale):
    # composed and checked in full once per scale and kept, as the workflow keeps them (the
    # cache is keyed on every config file, the code and the library versions; the suite's own
    # `snakemake data` keeps both scales' catalogs): each experiment is not composed again here
    exp = committed_catalog(scale)[name]
    assert exp.cells and exp.n_trials >= 1
    if scale == "smoke":
        assert exp.n_trials <= 2 and exp.n_train <= 400


def test_paper_scale_is_the_papers():
    cat = committed_catalog("paper")
    h = cat["harrington2003/table1"]
    assert (h.n_trials, h.n_train, h.n_test) == (20, 50_000, 1_000)
    assert {c.id for c in h.cells} >= {"oap_bpm-tau0.3", "oap_bpm-tau0.6", "oap_bpm-tau0.9", "voted_prank"}
    assert all(c.params["N"] == 100 for c in h.cells if c.algorithm.startswith("oap"))
    cs = cat["crammer_singer2005/fig6"]
    assert (cs.n_trials, cs.n_train) == (100, 8_000)


BAD = [
    # (override, key named in the error)
    ("algorithms.oap_bpm.grid.tau=[0.0,0.5]", "algorithms.oap_bpm.grid.tau[0]"),
    ("algorithms.oap_bpm.grid.tau=[0.5,1.5]", "algorithms.oap_bpm.grid.tau[1]"),
    ("algorithms.oap_bpm.params.N=0", "algorithms.oap_bpm.params.N"),
    ("algorithms.widrow_hoff.grid.eta=[-0.1]", "algorithms.widrow_hoff.grid.eta[0]"),
    ("+algorithms.oap_bpm.params.taux=0.3", "algorithms.oap_bpm.params.taux"),
    ("+algorithms.oap_bpm.colour=red", "algorithms.oap_bpm.colour"),
    ("+experiment.n_trails=3", "experiment.n_trails"),
    ("experiment.n_trials=0", "experiment.n_trials"),
    ("experiment.n_train=-5", "experiment.n_train"),
    ("experiment.n_trials=many", "experiment.n_trials"),
    ("experiment.metrics=[test_rank_los]", "experiment.metrics[0]"),
    ("experiment.protocol=batch", "experiment.protocol"),
    ("experiment.features=poly3", "experiment.features"),
    ("algorithms.prank.estimator=prankk", "algorithms.prank.estimator"),
    ("+dataset.params.noise=0.1", "dataset.params.noise"),
    ("experiment.n_test=0", "experiment.n_test"),
]


@pytest.mark.parametrize("override,key", BAD)
def test_bad_value_names_key(config_dir, override, key):
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "smoke", overrides=[override], config_dir=config_dir)
    assert err.value.key == key, str(err.value)
    assert key.split(".")[-1].split("[")[0] in str(err.value)


def test_bad_selector_names_key(config_dir):
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "smoke", config_dir=config_dir,
                        overrides=["experiment.published.0.select={algorithm: oap_bpm, tau: 0.4}"])
    assert err.value.key == "experiment.published[0].select"


def test_unknown_experiment_and_scale(config_dir):
    with pytest.raises(ConfigError, match="no file"):
        load_experiment("harrington2003/table9", config_dir=config_dir)
    with pytest.raises(ConfigError, match="unknown scale"):
        load_experiment("harrington2003/table1", "huge", config_dir=config_dir)


def _copy_config(tmp_path, config_dir):
    dst = tmp_path / "config"
    shutil.copytree(config_dir, dst)
    return dst


def test_edited_yaml_with_typo_fails_at_load(tmp_path, config_dir):
    """What a researcher sees after a typo in an experiment file."""
    cfg = _copy_config(tmp_path, config_dir)
    f = cfg / "experiment" / "harrington2003" / "table1.yaml"
    f.write_text(f.read_text().replace("n_trials: 20", "n_trails: 20"))
    with pytest.raises(ConfigError) as err:
        load_catalog("paper", config_dir=cfg)
    assert "n_trails" in str(err.value) and "harrington2003/table1" in str(err.value)


def _few_experiments(tmp_path, config_dir, keep):
    """A copy of the configs with the experiments ``keep`` only (and their diagnoses)."""
    cfg = _copy_config(tmp_path, config_dir)
    for sub in ("experiment", "diagnoses"):
        for f in (cfg / sub).glob("*/*.yaml"):
            if f"{f.parent.name}/{f.stem}" not in keep:
                f.unlink()
    return cfg


def test_catalog_composed_in_processes_is_the_one_composed_in_one(tmp_path, config_dir):
    """jobs=2 (the workflow passes its cores): the same experiments, variants, cells and
    fingerprints as in one process; the first bad config in the catalog's order raises, its
    key and message whole across the process boundary."""
    from rankrepro.pipeline.catalog import _same_catalogs

    keep = ["crammer_singer2005/fig6", "harrington2003/table1", "shivaswamy2012/fig3"]
    cfg = _few_experiments(tmp_path, config_dir, keep)
    one, two = load_catalog("smoke", config_dir=cfg, jobs=1), load_catalog("smoke", config_dir=cfg, jobs=2)
    assert list(two) == keep and _same_catalogs(one, two)
    assert all(one[n].sensitivity_cells == two[n].sensitivity_cells for n in keep)
    # kept: each experiment read back in its worker, the file written once and read back later
    from rankrepro.pipeline import catalog as catalog_module

    kept = tmp_path / "cache"
    assert _same_catalogs(load_catalog("smoke", config_dir=cfg, cache_dir=kept, jobs=2), one)
    assert len(list(kept.glob("catalog-smoke-*.json"))) == 1

    def composed(*args, **kwargs):
        raise AssertionError("composed again although kept")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(catalog_module, "_composed", composed)
        assert _same_catalogs(load_catalog("smoke", config_dir=cfg, cache_dir=kept, jobs=2), one)
    # an experiment that would not read back the same (here: every one) keeps no file
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(catalog_module, "_same_catalogs", lambda a, b: False)
        load_catalog("smoke", config_dir=cfg, cache_dir=tmp_path / "other", jobs=2)
    assert not list((tmp_path / "other").glob("catalog-*.json"))
    for name, good, bad in [("shivaswamy2012/fig3", "n_trials: 20", "n_trials: many"),
                            ("harrington2003/table1", "n_trials: 20", "n_trails: 20")]:
        f = cfg / "experiment" / f"{name}.yaml"
        f.write_text(f.read_text().replace(good, bad, 1))
    errors = []
    for jobs in (1, 2):
        with pytest.raises(ConfigError) as err:
            load_catalog("smoke", config_dir=cfg, jobs=jobs)
        errors.append((type(err.value), err.value.experiment, err.value.key, str(err.value)))
    assert errors[0] == errors[1] and errors[0][1] == "harrington2003/table1" and "n_trails" in errors[0][3]


def test_new_experiment_needs_no_code(tmp_path, config_dir):
    """docs/configs.md's example: OAP-BPM with tau = 0.05 as a new artefact."""
    cfg = _copy_config(tmp_path, config_dir)
    (cfg / "experiment" / "harrington2003" / "bpm_tau005.yaml").write_text(NEW_EXPERIMENT)
    # composed and checked alone (the whole catalog with it, and its cells planned by the
    # workflow: tests/test_fresh_clone.py)
    exp = load_experiment("harrington2003/bpm_tau005", "smoke", config_dir=cfg)
    assert [c.id for c in exp.cells] == ["prank", "oap_bpm-tau0.05"]


NEW_EXPERIMENT = """\
# @package _global_
defaults:
  - /algorithm@algorithms.prank: prank
  - /algorithm@algorithms.oap_bpm: oap_bpm
  - override /dataset: synthetic_hgo

experiment:
  paper: harrington2003
  artefact: bpm_tau005
  title: "OAP-BPM with tau = 0.05 on the synthetic data"
  kind: table
  features: poly2
  n_trials: 20
  n_train: 50000
  n_test: 1000
  seed: 2003
  metrics: [test_rank_loss]
  claims:
    - id: bpm_beats_prank
      text: "OAP-BPM with tau = 0.05 beats PRank"
      kind: less
      metric: test_rank_loss
      lhs: {algorithm: oap_bpm}
      rhs: {algorithm: prank}

algorithms:
  oap_bpm:
    params: {N: 100}
    grid: {tau: [0.05]}
"""


def test_unknown_key_in_algorithm_file_names_key_and_file(tmp_path, config_dir):
    cfg = _copy_config(tmp_path, config_dir)
    f = cfg / "algorithm" / "oap_bpm.yaml"
    f.write_text(f.read_text() + "colour: red\n")
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "paper", config_dir=cfg)
    assert err.value.key == "algorithms.oap_bpm.colour"
    assert "algorithm/oap_bpm" in str(err.value)


# bad values across every group of the catalog: (experiment, override, key named in the error)
BAD_ACROSS = [
    ("harrington2003/table2_cystic_fibrosis", "algorithms.oap_bpm.grid.tau=[0.1,2.0]", "algorithms.oap_bpm.grid.tau[1]"),
    ("harrington2003/table2_eachmovie", "+dataset.params.min_rating=3", "dataset.params.min_rating"),
    ("crammer_singer2005/fig6", "algorithms.widrow_hoff.grid.eta=[0.1,-1]", "algorithms.widrow_hoff.grid.eta[1]"),
    ("crammer_singer2005/fig7_min100", "experiment.seed=-1", "experiment.seed"),
    ("arena/letor_ohsumed", "experiment.n_trials=6", "experiment.n_trials"),  # five folds a trial each
    ("elsas2008/table4_ohsumed", "experiment.n_trials=0", "experiment.n_trials"),
    ("elsas2008/table4_ohsumed", "algorithms.com_a.params.committee=0", "algorithms.com_a.params.committee"),
    ("elsas2008/fig1", "+algorithms.average.params.n_iters=5", "algorithms.average.params.n_iters"),
    ("shivaswamy2012/fig2", "algorithms.perceptron.grid.alpha=[0.1,0.0]", "algorithms.perceptron.grid.alpha[1]"),
    ("shivaswamy2012/fig3", "algorithms.ranksvm.params.feedback=loud", "algorithms.ranksvm.params.feedback"),
    ("shivaswamy2012/fig4", "algorithms.perceptron.params.max_users=0", "algorithms.perceptron.params.max_users"),
    ("yu2006/tables", "algorithms.gpr.grid.n_items=[100,0]", "algorithms.gpr.grid.n_items[1]"),
    ("yu2006/tables", "algorithms.cgpor.params.likelihood=logistic", "algorithms.cgpor.params.likelihood"),
    ("yu2006/tables", "algorithms.gpor.params.sigma0=0", "algorithms.gpor.params.sigma0"),
    ("yu2006/tables", "+dataset.params.n_task=50", "dataset.params.n_task"),
    ("yu2006/tables", "experiment.metrics=[mae,zero_on]", "experiment.metrics[1]"),
    ("yu2006/tables", "scale.max_trials=0", "scale.max_trials"),
]


@pytest.mark.parametrize("experiment,override,key", BAD_ACROSS)
def test_bad_value_in_every_group_names_key(config_dir, experiment, override, key):
    with pytest.raises(ConfigError) as err:
        load_experiment(experiment, "smoke", overrides=[override], config_dir=config_dir)
    assert err.value.key == key, str(err.value)


def _same_catalog(a, b):
    from rankrepro.pipeline.cells import cell_fingerprint

    assert list(a) == list(b)
    for n in a:
        assert a[n].to_yaml() == b[n].to_yaml()
        assert a[n].all_cells == b[n].all_cells
        assert sorted(a[n].variants) == sorted(b[n].variants)
        assert all(a[n].variants[k].to_yaml() == b[n].variants[k].to_yaml() for k in a[n].variants)
        assert [cell_fingerprint(*a[n].variant_of(c)) for c in a[n].all_cells] == \
            [cell_fingerprint(*b[n].variant_of(c)) for c in b[n].all_cells]
        assert (a[n].n_trials, a[n].n_train, a[n].n_test, a[n].curve_points) == \
            (b[n].n_trials, b[n].n_train, b[n].n_test, b[n].curve_points)


def _two_experiments(tmp_path, config_dir):
    """A config folder with two of the experiments (one with sensitivity variants)."""
    cfg = _copy_config(tmp_path, config_dir)
    for f in (cfg / "experiment").rglob("*.yaml"):
        rel = f.relative_to(cfg / "experiment").as_posix()
        if not f.name.startswith("_") and rel not in ("harrington2003/table1.yaml", "shivaswamy2012/fig4.yaml"):
            f.unlink()
            (cfg / "diagnoses" / rel).unlink(missing_ok=True)  # and its diagnoses (config/diagnoses/)
    assert list_experiments(cfg) == ["harrington2003/table1", "shivaswamy2012/fig4"]
    return cfg


def test_catalog_cache_reads_back_the_same_and_follows_edits(tmp_path, config_dir, monkeypatch):
    """The workflow keeps the validated catalog: read back while nothing it depends on changed,
    composed again after any edit of a config file, and never kept for a config that fails."""
    from rankrepro.pipeline import catalog as catalog_mod

    cfg = _two_experiments(tmp_path, config_dir)
    cache = tmp_path / "cache"
    plain = load_catalog("smoke", config_dir=cfg)
    first = load_catalog("smoke", config_dir=cfg, cache_dir=cache)
    _same_catalog(plain, first)
    assert len(list(cache.glob("catalog-smoke-*.json"))) == 1
    # read back: nothing is composed
    calls = []
    real = catalog_mod.load_experiment
    monkeypatch.setattr(catalog_mod, "load_experiment", lambda *a, **k: calls.append(a) or real(*a, **k))
    _same_catalog(plain, load_catalog("smoke", config_dir=cfg, cache_dir=cache))
    assert calls == []
    # an edit of any config file is seen
    f = cfg / "experiment" / "harrington2003" / "table1.yaml"
    f.write_text(f.read_text().replace("n_trials: 20", "n_trials: 7"))
    edited = load_catalog("paper", config_dir=cfg, cache_dir=cache)
    assert edited["harrington2003/table1"].n_trials == 7 and calls
    assert load_catalog("paper", config_dir=cfg, cache_dir=cache)["harrington2003/table1"].n_trials == 7
    # and an edit of a diagnoses file (config/diagnoses/, merged into the experiment when it loads)
    d = cfg / "diagnoses" / "harrington2003" / "table1.yaml"
    d.write_text(d.read_text().replace("kind: open protocol choice", "kind: paper", 1))
    kinds = {p.diagnosis.kind for p in load_catalog("paper", config_dir=cfg, cache_dir=cache)[
        "harrington2003/table1"].cfg.experiment.published if p.diagnosis is not None}
    assert kinds == {"paper"}, kinds
    # a bad config raises every time and leaves no file behind
    f.write_text(f.read_text().replace("n_trials: 7", "n_trails: 7"))
    before = sorted(cache.iterdir())
    for _ in range(2):
        with pytest.raises(ConfigError, match="n_trails"):
            load_catalog("paper", config_dir=cfg, cache_dir=cache)
    assert sorted(cache.iterdir()) == before


def test_catalog_cache_replaces_a_damaged_file(tmp_path, config_dir):
    cfg = _two_experiments(tmp_path, config_dir)
    cache = tmp_path / "cache"
    good = load_catalog("smoke", config_dir=cfg, cache_dir=cache)
    (f,) = cache.glob("catalog-smoke-*.json")
    whole = f.read_bytes()
    f.write_bytes(whole[:1000])  # an interrupted write from some other tool
    _same_catalog(good, load_catalog("smoke", config_dir=cfg, cache_dir=cache))
    assert f.read_bytes() == whole  # replaced


class _Planted:
    """Unpickling this runs code: it creates the file ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_catalog_cache_runs_no_code(tmp_path, config_dir):
    """A file planted in the cache folder under the right key is never unpickled: the cache
    holds data (JSON) only, and a file that is not a valid kept catalog is ignored and
    replaced."""
    import pickle

    cfg = _two_experiments(tmp_path, config_dir)
    cache = tmp_path / "cache"
    cache.mkdir()
    marker = tmp_path / "code_ran"
    key = catalog_key(cfg, "smoke")
    planted = pickle.dumps(_Planted(marker))
    for name in (f"catalog-smoke-{key}.pkl", f"catalog-smoke-{key}.json"):
        (cache / name).write_bytes(planted)
    plain = load_catalog("smoke", config_dir=cfg)
    _same_catalog(plain, load_catalog("smoke", config_dir=cfg, cache_dir=cache))
    assert not marker.exists()
    json.loads((cache / f"catalog-smoke-{key}.json").read_text())  # replaced by data


def _tamper(data, how):
    exps = data["experiments"]
    t1 = exps["harrington2003/table1"]
    if how == "cells":
        t1["cells"] = t1["cells"][:-1]
    elif how == "path":
        t1["config"]["algorithms"]["../../x"] = t1["config"]["algorithms"].pop("prank")
    elif how == "figure":
        t1["config"]["experiment"]["figure"] = {**(t1["config"]["experiment"]["figure"] or {}), "file": "../../x"}
    elif how == "interpolation":
        t1["config"]["experiment"]["title"] = "${oc.env:HOME}"
    elif how == "type":
        t1["config"]["experiment"]["n_trials"] = {"__reduce__": "os.system"}
    elif how == "missing":
        del exps["shivaswamy2012/fig4"]
    elif how == "key":
        data["key"] = "0" * 20
    elif how == "format":
        data["format"] = "pickle"
    elif how == "not_a_config":
        t1["config"] = []
    return data


@pytest.fixture(scope="module")
def kept_two(tmp_path_factory):
    """The two-experiment config folder, its catalog and the file the cache kept of it
    (composed once for the tampering tests)."""
    tmp = tmp_path_factory.mktemp("kept_two")
    cfg = _two_experiments(tmp, Path(__file__).resolve().parents[1] / "config")
    good = load_catalog("smoke", config_dir=cfg, cache_dir=tmp / "cache")
    (f,) = (tmp / "cache").glob("catalog-smoke-*.json")
    return cfg, good, f


@pytest.mark.parametrize("how", ["cells", "path", "figure", "interpolation", "type", "missing", "key", "format",
                                 "not_a_config"])
def test_catalog_cache_that_does_not_validate_is_rebuilt(tmp_path, kept_two, how):
    """Behind the MAC (tests/test_cache_mac.py), the content is still checked: a file sealed
    under this user's own secret but not a valid catalog is ignored, rebuilt and replaced."""
    from rankrepro.pipeline import cache

    cfg, good, kept = kept_two
    f = tmp_path / "cache" / kept.name
    whole = json.loads(kept.read_text())
    del whole["mac"]  # the fixture's folder's; this folder's secret seals it below
    tampered = json.dumps(_tamper(json.loads(json.dumps(whole)), how), separators=(",", ":")).encode()
    cat_key = kept.name[len("catalog-smoke-"):-len(".json")]
    f.write_bytes(cache.seal(tampered, cache.secret(f.parent), "smoke", cat_key))
    _same_catalog(good, load_catalog("smoke", config_dir=cfg, cache_dir=f.parent))
    back = json.loads(f.read_text())
    del back["mac"]
    assert back == whole  # rebuilt and replaced


def test_catalog_cache_folder(monkeypatch, tmp_path):
    from rankrepro.pipeline.catalog import default_cache_dir

    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("RANKREPRO_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert default_cache_dir() == tmp_path / "x" / "rankrepro"


def test_catalog_cache_where_nothing_can_be_written_still_loads(tmp_path, config_dir):
    """A cache folder that cannot be made (here under a file, which stops root too): the
    catalog is composed, checked and returned all the same, only not kept."""
    cfg = _two_experiments(tmp_path, config_dir)
    (tmp_path / "a_file").write_text("")
    cat = load_catalog("smoke", config_dir=cfg, cache_dir=tmp_path / "a_file" / "cache")
    assert sorted(cat) == ["harrington2003/table1", "shivaswamy2012/fig4"]


def test_make_data_keeps_the_smoke_catalog(tmp_path, config_dir, monkeypatch):
    """`make data`'s keep_smoke_catalog step (rankrepro.jobs.job_keep_catalog) leaves the smoke
    scale's catalog in the cache, under the key a smoke run's start computes: that start reads
    it back instead of composing the configs (which it would do, the cache being empty)."""
    from rankrepro.jobs import job_keep_catalog
    from rankrepro.pipeline import catalog as catalog_mod

    cfg = _two_experiments(tmp_path, config_dir)
    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "smoke_catalog.json"
    job_keep_catalog("smoke", str(cfg), str(out), log=str(tmp_path / "log"))
    rec = json.loads(out.read_text())
    assert rec["scale"] == "smoke" and rec["key"] == catalog_key(cfg.resolve(), "smoke")
    assert (tmp_path / "cache" / f"catalog-smoke-{rec['key']}.json").is_file()
    composed = []
    monkeypatch.setattr(catalog_mod, "load_experiment", lambda *a, **k: composed.append(a) or None)
    cat = load_catalog("smoke", config_dir=cfg, cache_dir=catalog_mod.default_cache_dir())
    assert list(cat) == ["harrington2003/table1", "shivaswamy2012/fig4"] and composed == []
