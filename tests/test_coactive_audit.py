"""Fig. 5 audit (Shivaswamy & Joachims 2012): the perceptron and the Ranking SVM get the same
object each round, the noisy user's pick rules, and the learner-only timing."""
import numpy as np
import pytest

from rankrepro.algorithms.base import ParamError
from rankrepro.algorithms.coactive import CoactiveLearner, CoactiveRankSVM, PreferencePerceptron


def tiny(monkeypatch):
    from rankrepro.data import builders
    from rankrepro.data.coactive_movies import MovieSetup

    rng = np.random.default_rng(0)
    M = rng.normal(size=(80, 4))
    W = rng.normal(size=(6, 4))
    ratings = [(np.arange(0, 80, 3), rng.integers(1, 6, size=27).astype(float)) for _ in range(6)]
    setup = MovieSetup(M, W, ratings, 4, 1.0, 0.0)
    monkeypatch.setitem(builders.BUILDERS, "tiny", lambda seed, data_path, **kw: setup)
    return setup


def run(params, seed=3):
    from rankrepro.protocols.coactive import CoactiveSpec, coactive_movies_trial

    spec = CoactiveSpec("preference_perceptron", {"feedback": "noisy", **params}, "tiny", {}, 1, 0, 1, 30, 10,
                        "unused", np.random.SeedSequence(seed))
    return coactive_movies_trial(spec)


def test_both_learners_receive_the_same_pairs(monkeypatch):
    """Spy on what each learner is given: the perceptron's update rows and the SVM's pairs are
    the same differences M[feedback] - M[presented] (with the best-utility pick both see the
    same simulated user; the SVM drops zero pairs)."""
    tiny(monkeypatch)
    got = {"p": [], "s": []}
    orig_u, orig_a = PreferencePerceptron.update, CoactiveRankSVM.add_pair
    monkeypatch.setattr(PreferencePerceptron, "update", lambda self, d: (got["p"].append(np.array(d)), orig_u(self, d)))
    monkeypatch.setattr(CoactiveRankSVM, "add_pair", lambda self, d: (got["s"].append(np.array(d)), orig_a(self, d)))
    run({"noisy_pick": "best"})
    run({"noisy_pick": "best", "variant": "ranksvm"})
    assert len(got["p"]) == 30 and len(got["s"]) == 30 * 6
    # round 1: both present with w = 0 (the first movie) and so get the same feedback pairs
    np.testing.assert_array_equal(got["p"][0], np.stack(got["s"][:6]))


def test_best_pick_is_deterministic_and_random_pick_is_seeded(monkeypatch):
    tiny(monkeypatch)
    reg = lambda rows: [v for m, _, v in rows if m == "regret"]  # noqa: E731
    assert reg(run({"noisy_pick": "best"}, 3)) == reg(run({"noisy_pick": "best"}, 4))
    assert reg(run({"noisy_pick": "random"}, 3)) == reg(run({"noisy_pick": "random"}, 3))


def test_learner_seconds_is_part_of_the_wall_time(monkeypatch):
    tiny(monkeypatch)
    for variant in ("perceptron", "ranksvm"):
        vals = {m: v for m, _, v in run({"variant": variant}) if m != "regret"}
        assert 0 < vals["learner_seconds"] <= vals["wall_seconds"]


def test_noisy_pick_is_validated():
    with pytest.raises(ParamError, match="noisy_pick"):
        CoactiveLearner(noisy_pick="worst").validate()
