"""The arena (config/experiment/arena/, config/arena/<family>.yaml, rankrepro.report.arena):
each experiment is its paper's protocol with every learner of the family; the comparison's
numbers are the statistics of its members' cells; a family file's mistakes are refused naming
the key; a learner of one's own joins an experiment by a command-line override."""
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

from rankrepro.config_files import list_experiments
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.report.arena import ArenaError, compare, entering_cells, list_arenas, load_arena

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
ONLINE = {"prank", "si_prank", "no_prank", "mu_prank", "voted_prank", "mcp", "widrow_hoff", "oap_bpm", "oap_bagg",
          "oap_vp"}
LETOR = {"pocket", "average", "com_a", "com_b", "ranksvm", "rankboost", "lambdamart"}
#: the arena's own LETOR learner beside the paper's: the coactive preference perceptron
COACTIVE = "rankrepro.algorithms.coactive_ranker.CoactiveRanker"
# each arena experiment and the paper's experiment whose protocol it reuses
SOURCES = {"arena/online_synthetic": "harrington2003/table1",
           "arena/online_cystic_fibrosis": "harrington2003/table2_cystic_fibrosis",
           "arena/online_eachmovie": "harrington2003/table2_eachmovie",
           "arena/online_min100": "crammer_singer2005/fig7_min100",
           "arena/online_min200": "crammer_singer2005/fig7_min200",
           "arena/letor_ohsumed": "elsas2008/table4_ohsumed",
           "arena/letor_mq2008": "elsas2008/table4_td2003"}
#: the collaborative family's experiments: yu2006/tables at one training size each (tests/test_per_user.py)
COLLAB = [f"arena/collab_gp_n{n}" for n in (100, 200, 300, 400)]


def test_families_name_their_experiments():
    assert list_arenas(CONFIG) == ["collab_gp", "collab_gp_amae", "collab_gp_qwk", "collab_gp_zero_one", "letor",
                                   "online", "online_amae", "online_qwk", "online_test", "online_test_amae",
                                   "online_test_qwk"]
    # the ordinal metrics' families rank the same experiments and entering settings as their own
    for base, metric in (("online", "online"), ("online_test", "test"), ("collab_gp", "")):
        b = load_arena(base, CONFIG)
        for m in ("amae", "qwk"):
            a = load_arena(f"{base}_{m}", CONFIG)
            assert a.metric == (f"{metric}_{m}" if metric else m) and a.better == ("higher" if m == "qwk" else "lower")
            assert (a.experiments, a.enter, a.blocks, a.labels) == (b.experiments, b.enter, b.blocks, b.labels)
    assert sorted(load_arena("online", CONFIG).experiments + load_arena("letor", CONFIG).experiments) == sorted(SOURCES)
    assert set(load_arena("online_test", CONFIG).experiments) < set(load_arena("online", CONFIG).experiments)
    assert load_arena("collab_gp", CONFIG).experiments == load_arena("collab_gp_zero_one", CONFIG).experiments == COLLAB
    assert sorted(n for n in list_experiments(CONFIG) if n.startswith("arena/")) == sorted([*SOURCES, *COLLAB])


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_arena_experiment_is_its_papers_protocol_with_the_familys_learners(name):
    arena, paper = load_experiment(name, "paper", config_dir=CONFIG), load_experiment(SOURCES[name], "paper",
                                                                                      config_dir=CONFIG)
    a, p = arena.cfg.experiment, paper.cfg.experiment
    letor = name.startswith("arena/letor")
    for key in ("features", "seed", "curve_points") if letor else ("protocol", "features", "seed", "curve_points"):
        assert a[key] == p[key], key
    if letor:
        # Elsas et al.'s artefacts replicate over the learners' seeds, each trial the five folds
        # (letor_seeds); the arena compares the rankers over data sets fold by fold (letor)
        assert (a.protocol, p.protocol, arena.n_trials) == ("letor", "letor_seeds", 5)
    else:
        assert (arena.n_trials, arena.n_train, arena.n_test) == (paper.n_trials, paper.n_train, paper.n_test)
    assert arena.cfg.dataset == paper.cfg.dataset
    assert set(a.metrics) <= set(p.metrics)
    assert a.paper == "arena" and not a.claims and not a.published and not a.sensitivity
    algs = {c.algorithm for c in arena.cells}
    assert algs == (ONLINE if name.startswith("arena/online") else LETOR | {"coactive"})
    # the paper's own learners run at the paper's fixed settings (the arena may widen a grid)
    for c in paper.cells:
        ours = [x for x in arena.cells if x.algorithm == c.algorithm]
        fixed = {k: v for k, v in c.params.items() if k not in c.swept}
        assert ours and all({k: x.params[k] for k in fixed} == fixed for x in ours), c.id


def test_entering_cells_are_one_per_learner_and_data_set():
    arena = load_arena("online", CONFIG)
    exps = {n: load_experiment(n, "smoke", config_dir=CONFIG) for n in arena.experiments}
    cells = entering_cells(arena, exps)
    assert set(cells) == ONLINE
    assert {cells["oap_bpm"][n] for n in arena.experiments} == {"oap_bpm-tau0.3"}
    assert {cells["widrow_hoff"][n] for n in arena.experiments} == {"widrow_hoff-eta0.05"}
    assert {cells["prank"][n] for n in arena.experiments} == {"prank"}


@pytest.mark.parametrize("name", ["arena/letor_ohsumed", "arena/letor_mq2008"])
def test_the_coactive_perceptron_runs_beside_the_letor_rankers_not_in_the_paper(name):
    arena, paper = load_experiment(name, "paper", config_dir=CONFIG), load_experiment(SOURCES[name], "paper",
                                                                                      config_dir=CONFIG)
    ours = {c.id: c for c in arena.cells if c.algorithm == "coactive"}
    assert set(ours) == {"coactive-feedbackstrict", "coactive-feedbacknoisy"}
    assert {c.estimator for c in ours.values()} == {COACTIVE}
    # Elsas et al.'s experiment has no new cell: the arena adds the learner, the paper does not
    assert not [c for c in paper.cells if c.algorithm == "coactive" or c.estimator == COACTIVE]
    family = load_arena("letor", CONFIG)
    assert entering_cells(family, {n: load_experiment(n, "smoke", config_dir=CONFIG)
                                   for n in family.experiments})["coactive"] == {
        n: "coactive-feedbackstrict" for n in family.experiments}


def test_the_committed_letor_comparison_includes_the_coactive_perceptron():
    rec = json.loads((ROOT / "results" / "arena" / "comparison" / "letor.json").read_text())
    keys = {r["key"] for r in rec["learners"]}
    assert keys == LETOR | {"coactive"}
    row = next(r for r in rec["learners"] if r["key"] == "coactive")
    assert {v["cell"] for v in row["values"].values()} == {"coactive-feedbackstrict"}
    assert all(v["n"] == 5 for v in row["values"].values())  # every fold of both data sets
    assert len(rec["pairwise"]) == 28


def _family(tmp_path, text: str) -> Path:
    conf = tmp_path / "config"
    (conf / "arena").mkdir(parents=True)
    (conf / "arena" / "fam.yaml").write_text(text)
    return conf


BASE = "title: t\nexperiments: [arena/online_min100, arena/online_min200]\nmetric: online_rank_loss\n" \
       "better: lower\nblocks: dataset\n"


@pytest.mark.parametrize("extra,key", [("colour: red\n", "colour"), ("alpha: 0.7\n", "alpha"),
                                       ("enter: [1]\n", "enter")])
def test_a_family_file_mistake_names_its_key(tmp_path, extra, key):
    with pytest.raises(ArenaError) as err:
        load_arena("fam", _family(tmp_path, BASE + extra))
    assert err.value.key == key and "config/arena/fam.yaml" in str(err.value)
    with pytest.raises(ArenaError) as err:
        load_arena("fam", _family(tmp_path / "b", BASE.replace("online_rank_loss", "online_rank_los")))
    assert err.value.key == "metric"
    with pytest.raises(ArenaError) as err:
        load_arena("fam", _family(tmp_path / "c", BASE), experiments=["arena/online_min100"])
    assert err.value.key == "experiments[1]"


def test_a_grid_learner_without_its_entering_setting_is_refused(tmp_path):
    arena = load_arena("fam", _family(tmp_path, BASE + "enter: {oap_bpm: {tau: 0.3}}\n"))
    exps = {n: load_experiment(n, "smoke", config_dir=CONFIG) for n in arena.experiments}
    with pytest.raises(ArenaError) as err:
        entering_cells(arena, exps)
    # the first grid learner without a setting: its key, and the cells it could be
    assert err.value.key == "enter.widrow_hoff" and "widrow_hoff-eta0.05" in str(err.value)
    arena.enter = dict(load_arena("online", CONFIG).enter, oap_bpm={"tau": 0.25})
    with pytest.raises(ArenaError, match="names 0 of its cells") as err:
        entering_cells(arena, exps)
    assert err.value.key == "enter.oap_bpm"


def _trials(exp, values: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for c in exp.cells:
        for t, v in enumerate(values.get(c.algorithm, [9.0, 9.0])):
            rows.append({"cell": c.id, "algorithm": c.algorithm, "trial": t, "metric": "test_ndcg@10", "round": None,
                         "value": v})
    return pd.DataFrame(rows)


def test_the_comparison_is_the_statistics_of_the_cells():
    arena = load_arena("letor", CONFIG)
    exps = {n: load_experiment(n, "smoke", config_dir=CONFIG) for n in arena.experiments}
    rng = np.random.default_rng(7)
    algs = list(dict.fromkeys(c.algorithm for c in exps[arena.experiments[0]].cells))  # one per learner
    vals = {n: {a: list(rng.uniform(0.2, 0.6, size=2) + 0.03 * i) for i, a in enumerate(algs)} for n in exps}
    rec = compare(arena, exps, {n: _trials(exps[n], vals[n]) for n in exps})
    # blocks: each fold of each data set; higher NDCG is better
    table = np.array([[vals[n][a][f] for a in algs] for n in arena.experiments for f in range(2)])
    ref = sst.friedmanchisquare(*table.T)
    assert rec["friedman"]["n"] == 4 and rec["friedman"]["k"] == len(algs)
    assert rec["friedman"]["chi2"] == pytest.approx(ref.statistic) and rec["friedman"]["p_chi2"] == pytest.approx(ref.pvalue)
    ranks = np.mean([sst.rankdata(-row) for row in table], axis=0)
    got = {r["key"]: r["avg_rank"] for r in rec["learners"]}
    assert [got[a] for a in algs] == pytest.approx(list(ranks))
    assert [r["avg_rank"] for r in rec["learners"]] == sorted(got.values())  # listed best first
    n0 = arena.experiments[0]
    assert rec["learners"][0]["values"][n0]["mean"] == pytest.approx(np.mean(vals[n0][rec["learners"][0]["key"]]))
    assert len(rec["pairwise"]) == len(algs) * (len(algs) - 1) // 2


COMMITTED = sorted((ROOT / "results" / "arena" / "comparison").glob("*.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.stem for p in COMMITTED])
def test_committed_comparisons_are_their_committed_cells(path):
    rec = json.loads(path.read_text())
    arena = load_arena(rec["family"], CONFIG)
    exps = {n: load_experiment(n, "paper", config_dir=CONFIG) for n in arena.experiments}
    trials = {}
    for n, e in exps.items():
        files = [ROOT / "results" / e.paper / e.artefact / "cells" / f"{c.id}.parquet" for c in e.cells]
        trials[n] = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
    again = compare(arena, exps, trials, {e["name"]: e["dataset"] for e in rec["experiments"]})
    again = json.loads(json.dumps(again))  # as written: tuples become lists
    for key in ("friedman", "nemenyi"):
        assert again[key] == pytest.approx(rec[key]), key
    for key in ("learners", "pairwise", "groups", "block_names", "description", "notes"):
        assert again[key] == rec[key], key
    assert (ROOT / "figures" / "arena" / "comparison" / f"cd_{rec['family']}.png").is_file()


def test_a_learner_joins_an_experiment_by_an_override(tmp_path):
    exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=CONFIG,
                          overrides=['+algorithms.mine={estimator: prank, label: "PRank again", params: {}}'])
    assert [c.id for c in exp.cells if c.algorithm == "mine"] == ["mine"]
    assert exp.cfg.algorithms.mine.label == "PRank again"
    with pytest.raises(ConfigError) as err:  # an entry that exists is changed key by key instead
        load_experiment("crammer_singer2005/fig6", "smoke", config_dir=CONFIG,
                        overrides=["+algorithms.prank={estimator: prank, label: P}"])
    assert err.value.key == "algorithms.prank"
    with pytest.raises(ConfigError) as err:  # a broken target, refused at load naming the key and the method
        shutil.copy(ROOT / "examples" / "own_learner" / "margin_prank.py", tmp_path / "arena_broken_mod.py")
        (tmp_path / "arena_broken_mod.py").write_text((tmp_path / "arena_broken_mod.py").read_text()
                                                      + "\n\nclass Broken:\n    pass\n")
        import sys

        sys.path.insert(0, str(tmp_path))
        try:
            load_experiment("arena/online_min100", "smoke", config_dir=CONFIG,
                            overrides=["+algorithms.mine={_target_: arena_broken_mod.Broken, label: B}"])
        finally:
            sys.path.remove(str(tmp_path))
    assert err.value.key == "algorithms.mine._target_" and "lacks method" in str(err.value)


def test_the_comparisons_text_counts_the_learners_it_compares():
    """A learner added to the online family (`rankrepro arena online +algorithms...`) makes 11
    learners and 55 pairs: the record's description and notes say so, not the family file's
    "ten online ordinal learners" and "45 pairs" (the committed records keep their text:
    test_committed_comparisons_are_their_committed_cells)."""
    arena = load_arena("online", CONFIG)
    mine = ['+algorithms.mine={estimator: prank, label: "mine", params: {}}']
    exps = {n: load_experiment(n, "smoke", config_dir=CONFIG, overrides=mine) for n in arena.experiments}
    rng = np.random.default_rng(3)
    trials = {n: pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "trial": tr, "metric": "online_rank_loss",
                                "round": 400, "value": float(rng.uniform(0.5, 1.5))}
                               for c in e.cells for tr in range(2)]) for n, e in exps.items()}
    rec = compare(arena, exps, trials)
    k = len(rec["learners"])
    assert k == 11 and len(rec["pairwise"]) == 55
    text = " ".join([rec["description"], *rec["notes"]])
    assert "The eleven online ordinal learners" in text and "Holm-corrected over the 55 pairs" in text
    assert "ten online" not in text and "45 pairs" not in text


def test_an_arena_report_shows_the_cd_diagram_and_no_replication_scorecard(tmp_path):
    """What `rankrepro arena` writes as its report (the family's comparison and the arena's
    experiments, no paper's artefact): the critical-difference diagram embedded in the
    comparison's section, and no scorecard of replications ("0 of 0 artefacts reproduced")."""
    from rankrepro.cli.run import arena_report_figures
    from rankrepro.report.arena import comparison_paths
    from rankrepro.report.html import build_report

    paths = comparison_paths(ROOT, "online")
    pngs = arena_report_figures(ROOT, [], paths)
    assert pngs == {"comparison/cd_online": str(paths["png"])}
    out = tmp_path / "results" / "report" / "index.html"
    build_report([str(paths["json"])], pngs, out, "paper", roots=[ROOT, tmp_path])
    page = out.read_text()
    section = page[page.index('id="arena-comparison-online"'):]
    section = section[:section.index("</section>")]
    assert '<img alt="critical-difference diagram" src="data:image/png;base64,' in section
    assert 'id="scorecard"' not in page and "artefacts on the papers' own data reproduced" not in page
    assert 'id="no-scorecard"' in page
