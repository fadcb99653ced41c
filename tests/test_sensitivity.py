"""Open protocol choices (sensitivity blocks), diagnoses, reference-only verdicts on
substitute data and inconclusive claims."""
import copy
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from omegaconf import OmegaConf

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.cells import Cell
from rankrepro.pipeline.validate import sensitivity_cell_id
from rankrepro.pipeline.runner import run_cell
from rankrepro.report.aggregate import compare_published, evaluate_claim, evaluate_claims, sensitivity, summarize

from test_claims import base_means, claim, fake_trials

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table1():
    return load_experiment("harrington2003/table1", "smoke")


def test_table1_declares_its_choices(table1):
    """vote_output re-runs only the three vote ensembles (7 cells), voted_count only voted
    PRank (1 cell, its main value setting nothing); at smoke scale both training lengths are
    capped to the same 400 rounds, so training_rounds re-runs nothing."""
    sc = {s.choice: s for s in table1.cfg.experiment.sensitivity}
    # the three open choices, and their crossed readings (experiment.multiverse, test_multiverse.py)
    assert set(sc) == {"vote_output", "voted_count", "training_rounds", "multiverse"}
    ids = [c.id for c in table1.sensitivity_cells if c.choice == "vote_output"]
    assert len(ids) == 7 and all(i.endswith("~vote_output=rank") for i in ids)
    assert {c.algorithm for c in table1.sensitivity_cells if c.choice == "vote_output"} == {"oap_vp", "oap_bagg",
                                                                                             "voted_prank"}
    assert [c.id for c in table1.sensitivity_cells if c.choice == "voted_count"] == ["voted_prank~voted_count=harrington"]
    assert len([c for c in table1.sensitivity_cells if c.choice != "multiverse"]) == 8
    c = table1.cell("voted_prank~voted_count=harrington")
    var, base = table1.variant_of(c)
    assert base.params["count"] == "harrington" and "count" not in table1.cell("voted_prank").params
    c = table1.cell("oap_vp-tau0.3~vote_output=rank")
    var, base = table1.variant_of(c)
    assert base.id == "oap_vp-tau0.3" and base.params["output"] == "rank"
    assert table1.cell("oap_vp-tau0.3").params["output"] == "mean"
    paper = load_experiment("harrington2003/table1", "paper")
    assert paper.variants[("training_rounds", "5000")].n_train == 5000 and paper.n_train == 50000
    assert sum(c.choice == "training_rounds" for c in paper.sensitivity_cells) == len(paper.cells)


def test_sensitivity_cell_runs_on_the_main_cells_random_numbers(table1):
    """A sensitivity cell whose value equals the main one gives the main cell's numbers bit
    for bit: it draws the data and the algorithm's randomness from the main cell's seeds."""
    exp = copy.copy(table1)
    exp.variants = dict(table1.variants)
    exp.variants[("same", "as_main")] = table1  # a value that changes nothing
    base = table1.cell("oap_bagg-tau0.6")  # seeded: Bernoulli masks from the algorithm seed
    sid = sensitivity_cell_id(base.id, "same", "as_main")
    exp.sensitivity_cells = [Cell(sid, base.algorithm, base.estimator, base.label, base.params, base.swept,
                                  base=base.id, choice="same", value="as_main")]
    a = run_cell(exp, base.id)
    b = run_cell(exp, sid)
    assert (b["cell"] == sid).all()
    pd.testing.assert_series_equal(a["value"], b["value"], check_exact=True)
    # and a value that changes the output does change the test loss, on the same training runs
    c = run_cell(table1, base.id + "~vote_output=rank")
    online = lambda df: df[df["metric"] == "online_rank_loss"]["value"].to_numpy()  # noqa: E731
    np.testing.assert_array_equal(online(a), online(c))
    test = lambda df: df[df["metric"] == "test_rank_loss"]["value"].to_numpy()  # noqa: E731
    assert not np.array_equal(test(a), test(c))


def _with_sens_trials(exp, means, sens_means, sd=0.01):
    main = fake_trials(exp, means, sd=sd)
    rows = []
    rng = np.random.default_rng(5)
    for c in exp.sensitivity_cells:
        for t in range(20):
            rows.append((exp.paper, exp.artefact, c.id, c.algorithm, "{}", t, "test_rank_loss", None,
                         sens_means.get(c.id, means[c.base]) + sd * rng.standard_normal()))
    sens = pd.DataFrame(rows, columns=main.columns)
    sens["round"] = sens["round"].astype("Int64")
    return pd.concat([main, sens], ignore_index=True)


def test_sensitivity_section_reports_each_value_and_the_flips(table1):
    means = base_means(table1)
    # under vote_output=rank, OAP-VP (tau = 0.3) beats OAP-BPM: the claim flips
    trials = _with_sens_trials(table1, means, {"oap_vp-tau0.3~vote_output=rank": 0.05})
    main_trials = trials[trials["cell"].isin([c.id for c in table1.cells])]
    summary = summarize(table1, main_trials)
    comp = compare_published(table1, summary)
    claims = evaluate_claims(table1, summary, main_trials)
    sens = sensitivity(table1, trials, summary, comp, claims)
    vo = next(s for s in sens if s["choice"] == "vote_output")
    assert [v["value"] for v in vo["values"]] == ["mean", "rank"] and vo["main"] == "mean"
    assert vo["values"][0]["main"] and vo["values"][1]["extra_cells"] == 7
    assert vo["flips"] == ["bpm_lowest_each_tau"]
    main_v = {c["id"]: c["verdict"] for c in vo["values"][0]["claims"]}
    alt_v = {c["id"]: c["verdict"] for c in vo["values"][1]["claims"]}
    assert main_v["bpm_lowest_each_tau"] == "held" and alt_v["bpm_lowest_each_tau"] == "not held"
    c = next(r for r in claims if r.id == "bpm_lowest_each_tau")
    assert c.depends_on == [{"choice": "vote_output", "verdicts": {"mean": "held", "rank": "not held"}}]
    # headline: the published cells, with the alternative's value where it re-ran
    h = {x["cell"]: x["mean"] for x in vo["values"][1]["headline"]}
    assert h["oap_vp-tau0.3"] == pytest.approx(0.05, abs=0.02) and h["oap_bpm-tau0.3"] == pytest.approx(0.20, abs=0.02)
    assert vo["values"][0]["mean_abs_difference"] is not None
    # training_rounds re-ran nothing at smoke scale: the same numbers under both values
    tr = next(s for s in sens if s["choice"] == "training_rounds")
    assert tr["values"][0]["headline"] == tr["values"][1]["headline"] and tr["flips"] == []


def test_a_value_may_narrow_a_grid():
    """Crammer & Singer's Fig. 6: WH's eta is open; each constant alone is a value, and the
    claims that pick 'the best WH' are re-evaluated on that constant, without re-running."""
    exp = load_experiment("crammer_singer2005/fig6", "smoke")
    assert [c for c in exp.sensitivity_cells if c.choice == "wh_eta"] == []
    var = exp.variants[("wh_eta", "0.05")]
    assert [c.id for c in var.cells if c.algorithm == "widrow_hoff"] == ["widrow_hoff-eta0.05"]


def test_substitute_data_gets_references_not_verdicts(table1):
    s = summarize(table1, fake_trials(table1, base_means(table1)))
    assert set(compare_published(table1, s)["verdict"]) <= {"consistent", "differs"}
    assert set(compare_published(table1, s, reference_only=True)["verdict"]) == {"reference"}


def test_a_reversal_within_the_noise_is_inconclusive(table1):
    means = base_means(table1)
    means["oap_vp-tau0.6"] = 0.205  # beats OAP-BPM tau = 0.6 (0.21) by less than the noise
    t = fake_trials(table1, means, sd=0.05)
    r = evaluate_claim(table1, claim(table1, "bpm_lowest_each_tau"), summarize(table1, t), t)
    assert r.verdict == "inconclusive" and "p(reversed)" in r.evidence
    t = fake_trials(table1, means, sd=0.0005)  # the same order, far beyond the noise
    assert evaluate_claim(table1, claim(table1, "bpm_lowest_each_tau"), summarize(table1, t), t).verdict == "not held"


# -------------------------------------------------------------------------------------
# bad sensitivity blocks and diagnoses stop at load, naming the key
# -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch_config(tmp_path_factory):
    d = tmp_path_factory.mktemp("cfg") / "config"
    shutil.copytree(ROOT / "config", d)
    return d


def _load_with(config_dir, edit):
    p = config_dir / "experiment" / "harrington2003" / "table1.yaml"
    orig = p.read_text()
    doc = yaml.safe_load(orig)
    edit(doc["experiment"])
    p.write_text("# @package _global_\n" + yaml.safe_dump(doc, sort_keys=False))
    try:
        return load_experiment("harrington2003/table1", "smoke", config_dir=config_dir)
    finally:
        p.write_text(orig)


def _sens(doc):
    return doc["sensitivity"][0]


@pytest.mark.parametrize("edit, key, words", [
    (lambda e: _sens(e).update(main="nope"), "experiment.sensitivity[0].main", "not one of the values"),
    (lambda e: _sens(e)["values"].update(mean={"algorithms.oap_vp.params.output": "rank"}),
     "experiment.sensitivity[0].values.mean", "leave the main config unchanged"),
    # a value whose config is the main one (compared as written: validate.same_as_written)
    (lambda e: _sens(e)["values"].update(rank={"algorithms.oap_vp.params.output": "mean"}),
     "experiment.sensitivity[0].values.rank", "sets what the main config already has"),
    (lambda e: _sens(e)["values"].update(rank={"experiment.n_trainz": 5}),
     "experiment.sensitivity[0].values.rank.experiment.n_trainz", "n_trainz"),
    (lambda e: _sens(e)["values"].update(rank={"algorithms.oap_vp.params.output": "nearest"}),
     "experiment.sensitivity[0].values.rank -> algorithms.oap_vp.params.output", "must be one of"),
    # a key the schema does not know, and a set value left MISSING: caught by merging the set keys
    # into the schema (validate._check_against_schema), as a merge of the whole config did
    (lambda e: _sens(e)["values"].update(rank={"zzz": 1}), "experiment.sensitivity[0].values.rank.zzz",
     "Key 'zzz' not in 'RootCfg'"),
    (lambda e: _sens(e)["values"].update(rank={"experiment.n_train": "???"}),
     "experiment.sensitivity[0].values.rank.experiment.n_train", "Missing mandatory value: experiment.n_train"),
    (lambda e: _sens(e)["values"].update({"bad label": {}}), "experiment.sensitivity[0].values.bad label", "letters"),
    (lambda e: _sens(e).update(values={"mean": {}}), "experiment.sensitivity[0].values", "at least two"),
    (lambda e: e["sensitivity"][1]["values"].update(harrington={"algorithms.voted_prank.params.count": "zero"}),
     "experiment.sensitivity[1].values.harrington -> algorithms.voted_prank.params.count", "must be one of"),
    (lambda e: e["sensitivity"].append(dict(_sens(e))), "experiment.sensitivity[3].choice", "duplicate"),
    (lambda e: e["claims"][0].update(diagnosis={"kind": "bug", "text": "x"}),
     "experiment.claims[0].diagnosis.kind", "must be one of"),
    (lambda e: e["claims"][0].update(diagnosis={"kind": "open protocol choice", "text": "x", "choice": "ghost"}),
     "experiment.claims[0].diagnosis.choice", "sensitivity choices"),
    # (an inline diagnosis: table1's published values have theirs in config/diagnoses/, whose
    # errors tests/test_diagnoses_files.py checks)
    (lambda e: e["claims"][1].update(diagnosis={"kind": "paper", "text": " "}),
     "experiment.claims[1].diagnosis.text", "say what"),
])
def test_bad_blocks_are_refused_naming_the_key(scratch_config, edit, key, words):
    with pytest.raises(ConfigError) as ei:
        _load_with(scratch_config, edit)
    assert ei.value.key == key and words in str(ei.value)


# -------------------------------------------------------------------------------------
# the committed paper-scale records
# -------------------------------------------------------------------------------------
RECORDS = sorted((ROOT / "results").glob("*/*.json"))


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_disagreements_are_diagnosed(path):
    """Every claim not held, and every published cell on original data that differs, carries a
    diagnosis; a record on substitute data judges no published cell."""
    rec = json.loads(path.read_text())
    if rec.get("status") != "ran":
        return
    undiagnosed = [c["id"] for c in rec["claims"] if c["verdict"] == "not held" and not c.get("diagnosis")]
    undiagnosed += [f"{t['label']} {t['metric']}" for t in rec["table"]
                    if t["verdict"] == "differs" and not t.get("diagnosis")]
    assert not undiagnosed, f"{rec['name']}: undiagnosed disagreements {undiagnosed}"
    if not rec["dataset"]["original"]:
        assert {t["verdict"] for t in rec["table"]} <= {None, "reference", "no result"}


def test_a_cell_that_only_adds_trials_reuses_the_main_cells_bit_for_bit(table1):
    """A sensitivity value that only raises the number of trials (Yu et al.'s draws=10) takes
    the main cell's trials as they are and runs the others: the result equals running every
    trial, bit for bit.  Any other difference, or a frame that is not the main cell's trials,
    is refused; protocols whose trials depend on their number never reuse."""
    from rankrepro.pipeline.cells import reused_trials

    base = table1.cell("oap_bagg-tau0.6")  # seeded by the algorithm seed too
    main, more = copy.copy(table1), copy.copy(table1)
    main.n_trials, more.n_trials = 2, 3
    main.variants = {**table1.variants, ("draws", "3"): more}
    sid = sensitivity_cell_id(base.id, "draws", "3")
    main.sensitivity_cells = [Cell(sid, base.algorithm, base.estimator, base.label, base.params, base.swept,
                                   base=base.id, choice="draws", value="3")]
    assert reused_trials(main, main.cell(sid)) == (base.id, 2)
    assert reused_trials(main, base) is None
    first = run_cell(main, base.id)
    whole = run_cell(main, sid)
    extended = run_cell(main, sid, reuse=first)
    assert sorted(set(extended["trial"])) == [0, 1, 2] and (extended["cell"] == sid).all()
    pd.testing.assert_frame_equal(extended, whole, check_exact=True)
    with pytest.raises(ValueError, match="not main cell"):
        run_cell(main, sid, reuse=first[first["trial"] == 0])
    other = "oap_vp-tau0.3~vote_output=rank"  # another setting: nothing to take over
    assert reused_trials(table1, table1.cell(other)) is None
    with pytest.raises(ValueError, match="more than the number of trials"):
        run_cell(table1, other, reuse=first)


def test_which_paper_cells_reuse_trials():
    """At paper scale Yu et al.'s draws=10 cells extend their main cells (5 draws); the
    other choices change the computation and reuse nothing."""
    from rankrepro.pipeline.cells import reused_trials

    exp = load_experiment("yu2006/tables", "paper")
    hits = {c.id: reused_trials(exp, c) for c in exp.sensitivity_cells}
    assert {k for k, v in hits.items() if v} == {c.id for c in exp.sensitivity_cells if c.choice == "draws"}
    assert hits["cgpor-n_items400~draws=10"] == ("cgpor-n_items400", 5)


@pytest.mark.parametrize("name", ["harrington2003/table1", "yu2006/tables", "elsas2008/table4_ohsumed"])
def test_a_job_rebuilds_the_variants_the_workflow_checked(tmp_path, name):
    """The workflow builds and checks each variant; a job rebuilds it from the resolved
    config file without the checks: the same config, cells and fingerprints."""
    from rankrepro.pipeline.catalog import load_resolved, write_resolved
    from rankrepro.pipeline.cells import cell_fingerprint

    exp = load_experiment(name, "smoke")
    assert exp.variants
    path = tmp_path / "resolved.yaml"
    write_resolved(exp, path)
    job = load_resolved(path, name, "smoke")
    assert sorted(job.variants) == sorted(exp.variants)
    assert [c.id for c in job.sensitivity_cells] == [c.id for c in exp.sensitivity_cells]
    for key, var in exp.variants.items():
        for got in (job.variants[key], load_resolved(path, name, "smoke", sensitivity=key).variants[key]):
            assert got.to_yaml() == var.to_yaml()
            assert [(c.id, cell_fingerprint(got, c)) for c in got.cells] == \
                   [(c.id, cell_fingerprint(var, c)) for c in var.cells]


@pytest.mark.parametrize("a, b", [
    ({"a": 1}, {"a": 1.0}), ({"a": 1}, {"a": True}), ({"a": "1"}, {"a": 1}), ({"a": float("nan")}, {"a": float("nan")}),
    ({"a": 0.0}, {"a": -0.0}), ({"a": 1, "b": 2}, {"b": 2, "a": 1}), ({"a": [1, 2]}, {"a": [1, 2]}),
    ({"a": [1, 2]}, {"a": [2, 1]}), ({"a": None}, {"a": "null"}), ({"a": "${x}"}, {"a": "${x}"}),
    ({"a": {"b": 1}}, {"a": {"b": 1}}), ({"a": {"b": 1}}, {"a": {"b": 1, "c": None}}),
])
def test_configs_compared_as_written_agree_with_their_yaml(a, b):
    """A sensitivity value's config is compared with the main one as trees (validate.same_as_written),
    not as YAML texts: the two comparisons agree, types and key order included."""
    from rankrepro.pipeline.validate import same_as_written, as_written

    ca, cb = OmegaConf.create(a), OmegaConf.create(b)
    assert same_as_written(as_written(ca), as_written(cb)) == (OmegaConf.to_yaml(ca) == OmegaConf.to_yaml(cb))
