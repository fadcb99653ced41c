"""Findings apart from the experiment (issue 42, item 6): an experiment file holds the protocol,
grid, published values and claims; the diagnoses (prose quoting the run's numbers as Jinja
expressions) live in ``config/diagnoses/<paper>/<artefact>.yaml`` and are merged where the
experiment is loaded (:mod:`rankrepro.pipeline.diagnoses`), so that the resolved config, the
cells' fingerprints and every record are what they were with the diagnoses inline.

The witnesses are independent of the new loader: the committed resolved configs
(``results/<paper>/<artefact>.config.yaml``, written by the workflow from the inline
diagnoses) and the committed records, made again from their cells by ``rankrepro verify
--records``'s own check and compared with the committed files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from conftest import committed_catalog

from rankrepro.config_files import list_experiments
from rankrepro.pipeline.catalog import load_catalog, load_experiment
from rankrepro.pipeline.config_errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
NAMES = list_experiments(CONFIG)


def _committed_resolved(name: str) -> dict:
    return yaml.safe_load((ROOT / "results" / f"{name}.config.yaml").read_text())


def _diagnoses(experiment: dict) -> dict[str, object]:
    """Every diagnosis of a resolved experiment: 'published[i]' / 'claim <id>' -> diagnosis."""
    out = {}
    for i, p in enumerate(experiment.get("published") or []):
        out[f"published[{i}]"] = p.get("diagnosis")
    for c in experiment.get("claims") or []:
        out[f"claim {c['id']}"] = c.get("diagnosis")
    return out


@pytest.mark.parametrize("name", [n for n in NAMES if (ROOT / "results" / f"{n}.config.yaml").is_file()])
def test_every_diagnosis_is_loaded_as_the_committed_resolved_config_has_it(name):
    """The catalog's diagnoses (from the diagnoses files) are, entry by entry, those of the
    resolved config the workflow wrote from the inline diagnoses: none lost, none moved."""
    from omegaconf import OmegaConf

    exp = committed_catalog("paper")[name]
    loaded = _diagnoses(OmegaConf.to_container(exp.cfg.experiment))
    committed = _diagnoses(_committed_resolved(name)["experiment"])
    assert loaded == committed


def test_the_diagnoses_files_hold_every_diagnosis_and_no_experiment_file_does():
    """Every diagnosis of the committed configs comes from a diagnoses file: no experiment
    file (or shared file) writes one inline, and each diagnoses file attaches at least one."""
    with_diagnoses = 0
    for f in sorted((CONFIG / "experiment").rglob("*.yaml")):
        assert "diagnosis:" not in f.read_text(), f"{f.relative_to(ROOT)} writes a diagnosis inline"
    for f in sorted((CONFIG / "diagnoses").rglob("*.yaml")):
        name = f.relative_to(CONFIG / "diagnoses").with_suffix("").as_posix()
        assert name in NAMES
        resolved = _committed_resolved(name)["experiment"]
        assert any(d for d in _diagnoses(resolved).values()), name
        with_diagnoses += 1
    assert with_diagnoses == sum(any(d for d in _diagnoses(_committed_resolved(n)["experiment"]).values())
                                 for n in NAMES if (ROOT / "results" / f"{n}.config.yaml").is_file())


#: artefacts with many diagnoses, several rendering numbers of the run (Jinja)
REAGGREGATED = ["harrington2003/table2_cystic_fibrosis", "yu2006/tables", "elsas2008/table5"]


@pytest.fixture(scope="module")
def remade(tmp_path_factory):
    """The committed records of :data:`REAGGREGATED` made again from their committed cells,
    with the diagnoses from their files (the records check of `rankrepro verify --records`)."""
    from rankrepro.records_check import check

    scratch = tmp_path_factory.mktemp("remade")
    problems = check(committed_catalog("paper"), root=ROOT, scratch=scratch, names=REAGGREGATED, echo=lambda s: None)
    return scratch, problems


@pytest.mark.long  # minutes of end-to-end work: `make test-long`
@pytest.mark.parametrize("name", REAGGREGATED)
def test_a_reaggregated_record_renders_its_diagnoses_exactly_as_committed(remade, name):
    scratch, problems = remade
    made = json.loads((scratch / "results" / f"{name}.json").read_text())
    committed = json.loads((ROOT / "results" / f"{name}.json").read_text())
    assert [t.get("diagnosis") for t in made["table"]] == [t.get("diagnosis") for t in committed["table"]]
    assert [c.get("diagnosis") for c in made["claims"]] == [c.get("diagnosis") for c in committed["claims"]]
    assert sum(bool(t.get("diagnosis")) for t in made["table"]) + sum(bool(c.get("diagnosis")) for c in made["claims"])
    assert (scratch / "results" / f"{name}.md").read_text() == (ROOT / "results" / f"{name}.md").read_text()
    # and the whole record, byte for byte (git_commit and versions apart), as `verify --records` checks it
    assert [p for p in problems if name in str(p)] == []


# -------------------------------------------------------------------------------------
# the experiment files fit on two screens
# -------------------------------------------------------------------------------------
MAX_LINES = 120
#: the experiment files still longer, each with the reason (the test fails when one is no longer
#: over, so that the list cannot go stale)
OVER = {
    "experiment/yu2006/tables.yaml": "no diagnosis left: the paper's two tables are 32 published values (one line "
                                     "each), its 8 open protocol choices, their multiverse and 5 claims",
}


def test_the_largest_experiment_file_fits_on_two_screens():
    """With the diagnoses apart, every experiment file is at most 120 lines (two screens),
    but the ones :data:`OVER` names, with the reason."""
    sizes = {f.relative_to(CONFIG).as_posix(): len(f.read_text().splitlines())
             for f in (CONFIG / "experiment").rglob("*.yaml")}
    big = {k: n for k, n in sizes.items() if n > MAX_LINES}
    assert set(big) == set(OVER), f"experiment files over {MAX_LINES} lines: {big}"
    assert max(n for k, n in sizes.items() if k not in OVER) <= MAX_LINES
    # the largest before the diagnoses moved out: harrington2003/table2_cystic_fibrosis.yaml, 37 KB
    assert (CONFIG / "experiment/harrington2003/table2_cystic_fibrosis.yaml").stat().st_size < 12_000


# -------------------------------------------------------------------------------------
# errors name the diagnoses file and its key
# -------------------------------------------------------------------------------------
@pytest.fixture
def cfg(tmp_path):
    d = tmp_path / "config"
    shutil.copytree(CONFIG, d)
    return d


def _edit(cfg: Path, name: str, edit) -> None:
    f = cfg / "diagnoses" / f"{name}.yaml"
    doc = yaml.safe_load(f.read_text())
    edit(doc)
    f.write_text(yaml.safe_dump(doc, sort_keys=False))


def _error(cfg: Path, name: str) -> ConfigError:
    with pytest.raises(ConfigError) as ei:
        load_experiment(name, "smoke", config_dir=cfg)
    return ei.value


FIG2 = "harrington2003/fig2"  # two claim diagnoses, a small experiment
TABLE1 = "harrington2003/table1"  # twelve published-value diagnoses


@pytest.mark.parametrize("edit, key, words", [
    (lambda d: d["claims"]["wh_beats_prank_after_5000"].update(kind="bug"), "claims.wh_beats_prank_after_5000.kind", "must be one of"),
    (lambda d: d["claims"]["wh_beats_prank_after_5000"].update(text=" "), "claims.wh_beats_prank_after_5000.text", "say what"),
    (lambda d: d["claims"]["wh_beats_prank_after_5000"].update(text="{{ v('x' }}"), "claims.wh_beats_prank_after_5000.text",
     "do not parse as a template"),
    (lambda d: d["claims"]["wh_beats_prank_after_5000"].update(choice="ghost"), "claims.wh_beats_prank_after_5000.choice",
     "not a sensitivity choice"),
    (lambda d: d["claims"]["wh_beats_prank_after_5000"].update(txt="x"), "claims.wh_beats_prank_after_5000.txt",
     "unknown key 'txt'"),
    (lambda d: d["claims"].update(ghost_claim={"kind": "paper", "text": "x"}), "claims.ghost_claim",
     "no claim 'ghost_claim'"),
    (lambda d: d.update(notes=["x"]), "notes", "unknown key 'notes'"),
])
def test_a_bad_claim_diagnosis_names_the_file_and_its_key(cfg, edit, key, words):
    first = next(iter(yaml.safe_load((cfg / "diagnoses" / f"{FIG2}.yaml").read_text())["claims"]))
    assert first == "wh_beats_prank_after_5000"
    _edit(cfg, FIG2, edit)
    err = _error(cfg, FIG2)
    assert err.key == key and words in str(err) and f"config/diagnoses/{FIG2}.yaml" in str(err), str(err)


def test_a_bad_published_diagnosis_names_the_file_and_its_key(cfg):
    # (its rows share one diagnosis, a YAML anchor: the edited row gets a copy)
    _edit(cfg, TABLE1, lambda d: d["published"][3].update(diagnosis={**d["published"][3]["diagnosis"], "kind": "bug"}))
    err = _error(cfg, TABLE1)
    assert err.key == "published[3].diagnosis.kind" and f"config/diagnoses/{TABLE1}.yaml" in str(err), str(err)


def test_a_diagnosis_of_a_published_value_the_experiment_lacks_is_refused(cfg):
    _edit(cfg, TABLE1, lambda d: d["published"][0].update(metric="ghost_metric"))
    err = _error(cfg, TABLE1)
    assert err.key == "published[0]" and "no published value ghost_metric" in str(err), str(err)


def test_a_diagnosis_given_in_both_places_is_refused(cfg):
    f = cfg / "experiment" / f"{FIG2}.yaml"
    doc = yaml.safe_load(f.read_text())
    doc["experiment"]["claims"][[c["id"] for c in doc["experiment"]["claims"]].index("wh_beats_prank_after_5000")]["diagnosis"] = {
        "kind": "paper", "text": "inline"}
    f.write_text("# @package _global_\n" + yaml.safe_dump(doc, sort_keys=False))
    err = _error(cfg, FIG2)
    assert err.key == "claims.wh_beats_prank_after_5000" and "keep one" in str(err), str(err)


def test_a_yaml_error_in_a_diagnoses_file_names_the_file_and_line(cfg):
    f = cfg / "diagnoses" / f"{FIG2}.yaml"
    f.write_text(f.read_text() + "claims: {}\n")  # a duplicate key
    err = _error(cfg, FIG2)
    assert f"diagnoses/{FIG2}.yaml:" in str(err) and "duplicate" in str(err), str(err)


def test_a_diagnoses_file_without_its_experiment_is_refused(cfg):
    (cfg / "diagnoses" / "harrington2003" / "table9.yaml").write_text("claims: {}\n")
    with pytest.raises(ConfigError) as ei:
        load_catalog("smoke", config_dir=cfg)
    assert ei.value.experiment == "harrington2003/table9" and "config/diagnoses/harrington2003/table9.yaml" in str(
        ei.value), str(ei.value)


def test_an_experiment_of_ones_own_may_write_its_diagnosis_inline(cfg):
    """Moving a diagnosis back inline (and out of its file) gives the same experiment."""
    from omegaconf import OmegaConf

    before = OmegaConf.to_container(load_experiment(FIG2, "smoke", config_dir=cfg).cfg)
    dfile = cfg / "diagnoses" / f"{FIG2}.yaml"
    moved = yaml.safe_load(dfile.read_text())["claims"]
    dfile.unlink()
    f = cfg / "experiment" / f"{FIG2}.yaml"
    doc = yaml.safe_load(f.read_text())
    for c in doc["experiment"]["claims"]:
        if c["id"] in moved:
            c["diagnosis"] = moved[c["id"]]
    f.write_text("# @package _global_\n" + yaml.safe_dump(doc, sort_keys=False))
    assert OmegaConf.to_container(load_experiment(FIG2, "smoke", config_dir=cfg).cfg) == before
