"""Defaults are stated once: a config restates no default of the schema, of an estimator or
data-set builder, or of a file it is composed on, unless KEEP says why (the paper prints it)."""
import shutil
from pathlib import Path

import pytest
import yaml

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.redundancy import KEEP, find, unjustified


def test_no_config_restates_a_default(config_dir):
    bad = unjustified(find(config_dir))
    assert not bad, ("these values restate a default stated elsewhere; delete them (a 'schema' or 'layer' one "
                     "leaves the resolved config unchanged), or add '<file>:<key>' to "
                     "rankrepro.pipeline.redundancy.KEEP with the reason it is stated:\n"
                     + "\n".join(map(str, bad)))


def test_keep_lists_only_current_restatements_each_with_a_reason(config_dir):
    found = {f"{f.file}:{f.key}" for f in find(config_dir)}
    stale = sorted(k for k in KEEP if k not in found)
    assert not stale, f"KEEP entries that no longer restate a default (remove them): {stale}"
    assert all(len(why.strip()) > 20 for why in KEEP.values())


@pytest.fixture
def config_copy(config_dir, tmp_path):
    dst = tmp_path / "config"
    shutil.copytree(config_dir, dst)
    return dst


def _edit(path: Path, fn) -> None:
    text = path.read_text()
    head = "".join(line + "\n" for line in text.splitlines() if line.startswith("#"))  # keep '# @package'
    data = yaml.safe_load(text)
    fn(data)
    path.write_text(head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


def _found(cfg: Path) -> dict[str, str]:
    return {f"{f.file}:{f.key}": f.kind for f in find(cfg)}


def test_each_kind_of_restatement_is_found_and_a_different_value_is_not(config_copy):
    before = _found(config_copy)
    t4 = config_copy / "experiment/elsas2008/table4_td2003.yaml"
    h2 = config_copy / "experiment/harrington2003/table2_ohsumed.yaml"
    _edit(t4, lambda d: d["experiment"].update(features="identity", n_trials=10, curve_points=7))
    _edit(h2, lambda d: d.setdefault("algorithms", {}).update(
        oap_vp={"params": {"output": "mean", "N": 50}}, prank={"linestyle": "-", "label": "PRank"}))
    _edit(config_copy / "algorithm/rankboost.yaml", lambda d: d.update(params={"n_rounds": 300}))
    new = {k: v for k, v in _found(config_copy).items() if k not in before}
    rel4, relh = "experiment/elsas2008/table4_td2003.yaml", "experiment/harrington2003/table2_ohsumed.yaml"
    assert new == {
        f"{rel4}:experiment.features": "schema",  # the schema's default
        f"{rel4}:experiment.n_trials": "layer",  # what _table4_common.yaml gives
        f"{relh}:algorithms.oap_vp.params.output": "layer",  # what algorithm/oap_vp.yaml gives
        f"{relh}:algorithms.prank.linestyle": "schema",
        f"{relh}:algorithms.prank.label": "layer",  # algorithm/prank.yaml
        "algorithm/rankboost.yaml:algorithms.rankboost.params.n_rounds": "code",  # RankBoost.__init__
    }  # curve_points 7 and N 50 differ from every default: not found
    # the common file's value overrides the schema default below it: n_trials 10 is 'layer', not 'schema'


def test_deleting_a_schema_or_layer_restatement_leaves_the_resolved_config_unchanged(config_copy):
    name = "elsas2008/table4_td2003"
    ref = load_experiment(name, "smoke", config_dir=config_copy).to_yaml()
    _edit(config_copy / f"experiment/{name}.yaml",
          lambda d: (d["experiment"].update(protocol="letor_seeds", compare="draw", features="identity"),
                     d.setdefault("algorithms", {}).update(com_a={"label": "Com 30 A", "params": {"output": "committee_A"}})))
    restated = {k for k, kind in _found(config_copy).items() if k.startswith(f"experiment/{name}.yaml:")}
    assert len(restated) == 5 and all(_found(config_copy)[k] in ("schema", "layer") for k in restated)
    assert load_experiment(name, "smoke", config_dir=config_copy).to_yaml() == ref


def test_shared_files_are_not_experiments(config_dir):
    from rankrepro.config_files import list_experiments

    names = list_experiments(config_dir)
    assert "crammer_singer2005/fig7_min100" in names and "elsas2008/table4_td2004" in names
    assert not any(n.rsplit("/", 1)[1].startswith("_") for n in names)
    # the shared file is composed in: both partitions get its rows, claims differ per partition
    a = load_experiment("crammer_singer2005/fig7_min100", "smoke", config_dir=config_dir)
    b = load_experiment("crammer_singer2005/fig7_min200", "smoke", config_dir=config_dir)
    assert list(a.cfg.algorithms) == list(b.cfg.algorithms) == ["prank", "si_prank", "mcp", "widrow_hoff", "mu_prank"]
    assert a.cfg.experiment.figure == b.cfg.experiment.figure
    assert {c.id for c in a.cfg.experiment.claims} - {c.id for c in b.cfg.experiment.claims} == {"si_best_after_60"}
