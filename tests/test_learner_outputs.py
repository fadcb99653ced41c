"""A learner's outputs are checked where the protocols use them (issue 42, item 1;
rankrepro.pipeline.learner_checks): a broken learner fails its cell with one line naming the
learner, the method, the cell, the trial and what was wrong, through ``rankrepro run`` (exit
code 1, no traceback) and ``rankrepro check-learner`` (its first failing line); a correct
learner's numbers are bit for bit the same with the checks as without them."""
import shutil
import uuid
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from rankrepro.cli import main
from rankrepro.pipeline import learner_checks
from rankrepro.pipeline.learner_checks import LearnerOutputError, check_ranks, check_scores, checking_class

ROOT = Path(__file__).resolve().parents[1]

#: the broken learners, each a one-method edit of the example learner (its file is prepended)
BROKEN = '''

class NaNRanks(MarginPRank):
    """fit_online and predict return NaN (what `int()` made a large negative rank of)."""

    def _online(self, X, y):
        super()._online(X, y)
        return np.full(X.shape[0], np.nan)

    def _predict(self, X):
        return np.full(X.shape[0], np.nan)


class WrongShape(MarginPRank):
    """predict returns (n + 1, 1)."""

    def _predict(self, X):
        return np.ones((X.shape[0] + 1, 1), dtype=np.int64)


class NoPredict(OnlineRanker):
    """Forgets _predict: OnlineRanker only declares it."""

    _constraints = {}

    def __init__(self, *, n_ranks: int = 5):
        self.n_ranks = n_ranks

    def _init_state(self, n_features):
        self.coef_ = np.zeros(n_features)

    def _online(self, X, y):
        return np.ones(X.shape[0], dtype=np.int64)


class OneShort(MarginPRank):
    """fit_online returns one prediction fewer than the rows it was given."""

    def fit_online(self, X, y):
        return super().fit_online(X, y)[:-1]


class Raising(MarginPRank):
    """Raises in its update."""

    def _online(self, X, y):
        raise ValueError("my learner gave up")
'''

#: a tiny experiment of the online protocol with a learner of one's own alone (a training
#: curve and a test rank loss, so that both fit_online and predict are used)
EXPERIMENT = '''# @package _global_
defaults:
  - override /dataset: synthetic_hgo

experiment:
  paper: mine
  artefact: outputs
  title: "A learner of one's own on the synthetic data of Crammer & Singer (2005) Fig. 6"
  kind: figure
  description: "Time-averaged and test rank loss."
  features: identity
  n_trials: 2
  n_train: 60
  n_test: 30
  seed: 2005
  metrics: [online_rank_loss, test_rank_loss]
  figure:
    panels:
      - title: "synthetic data"

algorithms:
  mine:
    _target_: {target}
    label: "mine"
'''


@pytest.fixture
def broken(tmp_path, monkeypatch):
    """(module name, config dir): the broken learners in a module of their own on sys.path, and
    a config folder with the tiny experiment mine/outputs."""
    mod = f"broken_{uuid.uuid4().hex[:10]}"
    src = tmp_path / "learners"
    src.mkdir()
    example = (ROOT / "examples" / "own_learner" / "margin_prank.py").read_text()
    (src / f"{mod}.py").write_text(example + BROKEN)
    monkeypatch.syspath_prepend(str(src))
    conf = tmp_path / "config"
    shutil.copytree(ROOT / "config", conf)
    (conf / "experiment" / "mine").mkdir()
    monkeypatch.setenv("RANKREPRO_CONFIG_DIR", str(conf))
    return mod, conf, src / f"{mod}.py"


def _run(broken, cls: str, tmp_path, capsys) -> tuple[int, list[str]]:
    mod, conf, _ = broken
    (conf / "experiment" / "mine" / "outputs.yaml").write_text(EXPERIMENT.format(target=f"{mod}.{cls}"))
    rc = main(["run", "mine/outputs", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    return rc, [ln for ln in err.splitlines() if ln.startswith("rankrepro: error")]


def _first_failure(broken, cls: str, capsys) -> str:
    mod, _, _ = broken
    assert main(["check-learner", f"{mod}.{cls}"]) == 1
    out = capsys.readouterr().out
    return next(ln for ln in out.splitlines() if ln.startswith("FAIL"))


# -- through rankrepro run: exit code 1 and one line naming the cell, trial, learner and method --
@pytest.mark.parametrize("cls,says", [
    ("NaNRanks", "fit_online returned NaN at 60 of 60 values (first at index 0); expected integer ranks 1..5"),
    ("WrongShape", "predict returned an array of shape (31, 1), expected (30,): one rank per row"),
    ("OneShort", "fit_online returned an array of shape (59,), expected (60,)"),
])
def test_a_bad_output_fails_the_run_in_one_line(broken, cls, says, tmp_path, capsys):
    mod = broken[0]
    rc, errors = _run(broken, cls, tmp_path, capsys)
    assert rc == 1 and len(errors) == 1, errors
    line = errors[0]
    assert f"mine/outputs [smoke] cell mine, trial 0: learner {mod}.{cls}: {says}" in line, line
    assert "\n" not in line and "Traceback" not in line


def test_a_raising_learner_fails_the_run_in_one_line_at_its_own_line(broken, tmp_path, capsys):
    mod, _, path = broken
    rc, errors = _run(broken, "Raising", tmp_path, capsys)
    lineno = path.read_text().splitlines().index('        raise ValueError("my learner gave up")') + 1
    assert rc == 1 and errors == [f"rankrepro: error: mine/outputs [smoke] cell mine, trial 0: learner {mod}.Raising "
                                  f"failed: ValueError: my learner gave up (at {path}:{lineno})"], errors


def test_a_bad_output_fails_the_arena_in_one_line(broken, tmp_path, capsys):
    mod = broken[0]
    rc = main(["arena", "online", f"+algorithms.mine={{_target_: {mod}.NaNRanks, label: mine}}",
               "--out", str(tmp_path / "arena")])
    errors = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("rankrepro: error")]
    assert rc == 1 and len(errors) == 1, errors
    assert errors[0].startswith("rankrepro: error: arena/online_")
    assert f"cell mine, trial 0: learner {mod}.NaNRanks: fit_online returned NaN at 400 of 400 values" in errors[0]


def test_a_missing_method_is_refused_before_any_trial(broken, tmp_path, capsys):
    mod = broken[0]
    rc, errors = _run(broken, "NoPredict", tmp_path, capsys)
    assert rc == 2 and len(errors) == 1, errors
    assert "at key 'algorithms.mine._target_'" in errors[0]
    assert f"{mod}.NoPredict: missing method _predict (OnlineRanker requires it)" in errors[0]
    assert not (tmp_path / "out" / "results" / "mine" / "outputs" / "cells").exists() or not any(
        (tmp_path / "out" / "results" / "mine" / "outputs" / "cells").iterdir())


def test_the_checking_class_refuses_to_construct_a_class_missing_a_method(broken):
    import importlib

    cls = importlib.import_module(broken[0]).NoPredict
    with pytest.raises(TypeError, match=r"missing method _predict \(OnlineRanker requires it\)"):
        checking_class(cls, "online")(n_ranks=3)


# -- through rankrepro check-learner: the first failing line names the method or the output -----
@pytest.mark.parametrize("cls,check,what", [
    ("NaNRanks", "protocol calls", "returned NaN at"),
    ("WrongShape", "protocol calls", "predict returned an array of shape (51, 1), expected (50,)"),
    ("NoPredict", "interface", "missing method _predict (OnlineRanker requires it)"),
    ("OneShort", "protocol calls", "fit_online returned an array of shape (299,), expected (300,)"),
    ("Raising", "protocol calls", "ValueError: my learner gave up at "),
])
def test_check_learner_names_the_fault_in_its_first_failing_line(broken, cls, check, what, capsys):
    first = _first_failure(broken, cls, capsys)
    assert first.startswith(f"FAIL  {check}") and what in first, first


def test_a_nan_predictor_is_not_blamed_on_seeding_or_pickling(broken, capsys):
    mod = broken[0]
    assert main(["check-learner", f"{mod}.NaNRanks"]) == 1
    failed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("FAIL")]
    assert len(failed) == 1 and "protocol calls" in failed[0], failed


# -- the checks themselves, against a hand computation ----------------------------------------------
def test_check_ranks_by_hand():
    assert check_ranks(np.array([1, 2, 5]), 3, 5) is None
    assert check_ranks(np.array([1.0, 2.0, 5.0]), 3, 5) is None
    assert check_ranks([1, 2, 3], 3, 5) is None
    assert "shape (4,), expected (3,)" in check_ranks(np.array([1, 2, 3, 4]), 3, 5)
    assert "NaN at 2 of 3 values (first at index 1)" in check_ranks(np.array([1.0, np.nan, np.nan]), 3, 5)
    assert "infinity at 1 of 3" in check_ranks(np.array([1.0, np.inf, 2.0]), 3, 5)
    assert "non-integer ranks (2.5 at index 2)" in check_ranks(np.array([1.0, 2.0, 2.5]), 3, 5)
    assert "ranks outside 1..5 (0 at index 1)" in check_ranks(np.array([1, 0, 3]), 3, 5)
    assert "ranks outside 1..5 (6 at index 2)" in check_ranks(np.array([1, 5, 6]), 3, 5)
    assert "dtype <U1" in check_ranks(np.array(["a", "b", "c"]), 3, 5)
    # predict of the online family: the real-valued mean rank of OAP-Bagg is a prediction in [1, k]
    assert check_ranks(np.array([1.0, 2.25, 5.0]), 3, 5, integer=False) is None
    assert "ranks outside 1..5 (0.5 at index 1)" in check_ranks(np.array([1.0, 0.5]), 2, 5, integer=False)
    assert "NaN at 1 of 2 values (first at index 0); expected ranks in [1, 5]" in check_ranks(
        np.array([np.nan, 1.0]), 2, 5, integer=False)
    # a sum that overflows is no NaN: the values are looked at one by one
    assert check_scores(np.array([1e308, 1e308]), (2,)) is None
    assert "NaN at 1 of 4 values (first at index (1, 0))" in check_scores(np.array([[1.0, 2.0], [np.nan, 0.0]]),
                                                                          (2, 2))


def _ranker_class(bad: str):
    from rankrepro.algorithms.rankers import RANKERS

    base = RANKERS["perceptron"]

    class Ranker(base):
        def iterate(self, X, y, qid, evals):
            for step, scores in super().iterate(X, y, qid, evals):
                if bad == "nan":
                    scores = [np.full_like(s, np.nan) for s in scores]
                elif bad == "short":
                    scores = [s[:-1] for s in scores]
                yield step, scores

    return Ranker


@pytest.mark.parametrize("bad,says", [("nan", "for evaluation set 0 (80 documents), scores with NaN at 80 of 80"),
                                      ("short", "scores of shape (79,), expected (80,)"), ("none", None)])
def test_letor_scores_are_checked_step_by_step(bad, says):
    from rankrepro.conformance import small, toy

    rng = np.random.default_rng(0)
    (X, y, qid), _ = toy("ranker", rng)
    est = small(checking_class(_ranker_class(bad), "letor"), n_iter=2, committee=1)
    steps = est.iterate(X, y, qid, [(X, y, qid), (X[:40], y[:40], qid[:40])])
    if says is None:
        assert len(list(steps)) == 2
        return
    with pytest.raises(LearnerOutputError, match="iterate returned at step 1") as err:
        list(steps)
    assert says in str(err.value)


def test_gp_predictions_are_checked_per_user():
    from rankrepro.algorithms.gp import GP, FitResult
    from rankrepro.conformance import small

    class Bad(GP["gp_model"]):
        def fit_predict_kernel(self, K, Y, train, predict, progress=None):
            res = super().fit_predict_kernel(K, Y, train, predict, progress)
            return FitResult([p + 0.5 if u == 2 else p for u, p in enumerate(res.pred)], res.objective)

    rng = np.random.default_rng(7)
    X = rng.normal(size=(12, 6))
    K = (X / np.linalg.norm(X, axis=1, keepdims=True)) @ (X / np.linalg.norm(X, axis=1, keepdims=True)).T
    Y = rng.integers(1, 5, size=(3, 12)) * (rng.random((3, 12)) < 0.8)
    train, test = np.arange(6), np.arange(6, 12)
    good = small(checking_class(GP["gp_model"], "collab_gp"), n_items=6, n_ranks=4)
    assert len(good.fit_predict_kernel(K, Y, train, test).pred) == 3
    with pytest.raises(LearnerOutputError, match=r"fit_predict_kernel returned for user 2, non-integer ranks"):
        small(checking_class(Bad, "collab_gp"), n_items=6, n_ranks=4).fit_predict_kernel(K, Y, train, test)


def test_coactive_scores_and_weights_are_checked():
    from rankrepro.algorithms.coactive import COACTIVE

    cls = checking_class(COACTIVE["preference_perceptron"], "coactive_movies")
    learner = cls().make(3, 2)
    assert isinstance(learner, type(COACTIVE["preference_perceptron"]().make(3, 2)))
    M = np.eye(3)
    assert learner.scores(M).shape == (2, 3)
    with pytest.raises(LearnerOutputError, match="update left the weights W with NaN"):
        learner.update(np.full((2, 3), np.nan))


def test_the_checking_class_is_the_learners_to_its_users():
    import copy
    import pickle

    from rankrepro.algorithms import ONLINE

    base = ONLINE["prank"]
    sub = checking_class(base, "online")
    est = sub(n_ranks=3)
    assert isinstance(est, base) and sub.__name__ == base.__name__ and repr(est) == repr(base(n_ranks=3))
    assert sub._param_names() == base._param_names() and sub.constraints() == base.constraints()
    X = np.random.default_rng(0).uniform(-1, 1, size=(20, 3))
    y = np.random.default_rng(1).integers(1, 4, size=20)
    est.fit_online(X, y)
    for twin in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):  # pickled as the learner's class
        assert type(twin) is base and np.array_equal(twin.predict(X), est.predict(X))


# -- no number changes ---------------------------------------------------------------------------
@contextmanager
def _no_checks(protocol, estimator):
    yield


def _same_numbers(name: str, cell: str | None, trials, monkeypatch):
    """A cell's rows with the checks (as every run has them) and without, the timing metrics
    apart (they are measured, never equal twice)."""
    from rankrepro.metrics import TIMING_METRICS
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import run_cell

    exp = load_experiment(name, "smoke")
    cell = cell or exp.cells[0].id
    frames = []
    for check in (True, False):
        with monkeypatch.context() as m:
            if not check:
                m.setattr(learner_checks, "checked", _no_checks)
            df = run_cell(exp, cell, trials=trials)
        timing = TIMING_METRICS | {f"fold_{m}" for m in TIMING_METRICS}  # as make verify leaves them out
        frames.append(df[~df["metric"].isin(timing)].reset_index(drop=True))
    checked, plain = frames
    assert len(checked) > 0 and checked.drop(columns="value").equals(plain.drop(columns="value"))
    # bit for bit (NaN where NaN)
    assert np.array_equal(checked["value"].to_numpy(), plain["value"].to_numpy(), equal_nan=True)


@pytest.mark.parametrize("name,cell,trials", [("crammer_singer2005/fig6", "prank", [0, 1]),
                                              ("crammer_singer2005/fig6", "mcp", [0, 1]),
                                              ("harrington2003/table1", "oap_bagg-tau0.3", [0]),
                                              ("harrington2003/table1", "voted_prank", [0]),
                                              ("elsas2008/sec3_table", None, None)])
def test_a_correct_learners_numbers_are_bit_identical_with_and_without_the_checks(name, cell, trials, monkeypatch):
    _same_numbers(name, cell, trials, monkeypatch)


@pytest.mark.long  # minutes of end-to-end work: `make test-long`
@pytest.mark.parametrize("name", ["elsas2008/table4_ohsumed", "shivaswamy2012/fig2", "shivaswamy2012/fig4",
                                  "yu2006/tables"])
def test_bit_identical_in_every_protocol(name, monkeypatch):
    """letor_seeds (iterate), coactive_ranking and coactive_movies (make: scores, update, W),
    collab_gp (fit_predict_kernel): one trial of the first cell
    (on the processed data this checkout has; the suite's data fixture makes them, `make data`)."""
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import default_data_path

    try:
        path = default_data_path(load_experiment(name, "smoke"))
    except FileNotFoundError as e:
        pytest.skip(str(e))
    if path is not None and not (ROOT / path).is_file():
        pytest.skip(f"{path} is not made here (make data)")
    _same_numbers(name, None, [0], monkeypatch)


def test_the_registry_holds_the_learners_own_class_after_a_trial():
    from rankrepro.algorithms import ONLINE
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import run_cell

    before = dict(ONLINE)
    run_cell(load_experiment("crammer_singer2005/fig6", "smoke"), "prank", trials=[0])
    assert ONLINE == before and learner_checks._INSTALLED == {}
    with learner_checks.checked("online", "prank"), learner_checks.checked("online", "prank"):
        assert ONLINE["prank"] is checking_class(before["prank"], "online")
    assert ONLINE["prank"] is before["prank"]


def test_a_cell_job_ends_with_the_one_line(broken, tmp_path, capsys):
    from rankrepro.jobs import job_run_cell

    mod, conf, _ = broken
    (conf / "experiment" / "mine" / "outputs.yaml").write_text(EXPERIMENT.format(target=f"{mod}.WrongShape"))
    log = tmp_path / "cell.log"
    with pytest.raises(SystemExit) as stop:
        job_run_cell("mine/outputs", "mine", "smoke", str(conf), str(tmp_path / "mine.parquet"), log=str(log))
    assert stop.value.code == 1
    last = log.read_text().splitlines()[-1]
    assert last.startswith("error: mine/outputs [smoke] cell mine, trial 0: learner ") and \
        "predict returned an array of shape (31, 1), expected (30,)" in last, last
    assert not (tmp_path / "mine.parquet").exists()

