"""Collaborative-filtering instance construction on tiny hand-made rating tables."""
import numpy as np
import pytest

from rankrepro.data.cf import cf_judges, cf_people, cf_viewer_stream, draw_judges, judge_instances, people_matrix


def save(tmp_path, name, **arrays):
    p = tmp_path / f"{name}.npz"
    np.savez(p, **arrays)
    return str(p)


def test_judge_instances_exact():
    scores = np.array([[2, 1, 0, 1],
                       [0, 0, 2, -1]])  # pair 1: the fourth judge gave nothing
    X, y = judge_instances(scores, np.array([0, 0, 1]), np.array([0, 3, 2]))
    assert y.tolist() == [3, 2, 3]  # score + 1
    # ranks of the other judges, in judge order; 0 where absent
    assert X.tolist() == [[2, 1, 2], [3, 2, 1], [1, 1, 0]]
    X, _ = judge_instances(scores, np.array([0]), np.array([1]), instance_values="score")
    assert X.tolist() == [[2, 0, 1]]


def test_draw_judges_only_judged_and_uniform():
    rng = np.random.default_rng(0)
    judged = np.array([[True, False, True], [False, False, True]] * 5000)
    j = draw_judges(judged, rng)
    assert np.all(judged[np.arange(j.size), j])
    first = j[::2]
    assert abs(np.mean(first == 0) - 0.5) < 0.02


def test_cf_judges_split_sizes_and_distinct_pairs(tmp_path):
    rng = np.random.default_rng(1)
    scores = rng.integers(0, 3, size=(50, 4)).astype(np.int8)
    scores[:5, 1:] = -1  # five pairs judged once: excluded by min_judged = 2
    path = save(tmp_path, "cf", query=np.arange(50), doc=np.arange(50), scores=scores, judges=np.array(list("abcd")))
    s = cf_judges(30, 15, np.random.default_rng(2), data_path=path)
    assert s.X_train.shape == (30, 3) and s.X_test.shape == (15, 3) and s.n_ranks == 3
    assert set(np.unique(np.concatenate([s.y_train, s.y_test]))) <= {1, 2, 3}
    with pytest.raises(ValueError, match="only 45 pairs"):
        cf_judges(40, 10, np.random.default_rng(2), data_path=path)
    a = cf_judges(30, 15, np.random.default_rng(7), data_path=path)
    b = cf_judges(30, 15, np.random.default_rng(7), data_path=path)
    np.testing.assert_array_equal(a.X_train, b.X_train)  # a trial depends only on its seed
    # drawn apart: the test pairs are drawn from all pairs on their own, so 40 + 30 examples fit
    # 45 pairs; the training set is the held-out reading's, the test set differs
    held = cf_judges(40, 5, np.random.default_rng(3), data_path=path)
    apart = cf_judges(40, 30, np.random.default_rng(3), data_path=path, test_pairs="drawn_apart")
    np.testing.assert_array_equal(held.X_train, apart.X_train)
    np.testing.assert_array_equal(held.y_train, apart.y_train)
    assert apart.X_test.shape == (30, 3)
    with pytest.raises(ValueError, match="test_pairs must be one of"):
        cf_judges(4, 4, np.random.default_rng(3), data_path=path, test_pairs="overlap")


def ratings_file(tmp_path):
    # people 10, 20, 30 rate items 1..4 on a 1..5 scale; person 40 rates one item
    user = np.array([10, 10, 10, 20, 20, 20, 30, 30, 30, 10, 40])
    item = np.array([1, 2, 3, 1, 3, 4, 2, 3, 4, 4, 1])
    score = np.array([5, 3, 1, 4, 2, 5, 1, 5, 3, 4, 2], dtype=float)
    return save(tmp_path, "r", user=user, item=item, score=score, time=np.full(11, -1),
                scale=np.array([1.0, 2, 3, 4, 5]))


def test_person_instances_exact(tmp_path):
    path = ratings_file(tmp_path)
    P = people_matrix(path, 3, False)  # people with >= 3 ratings: 10 (4), 20 (3), 30 (3)
    assert P["n_people"] == 3 and P["n_ranks"] == 5
    from rankrepro.data.cf import person_instances

    X, y = person_instances(P, 0, 4)  # person 10: items 1, 2, 3, 4 in file order
    assert y.tolist() == [5, 3, 1, 4]
    c = lambda s: (s - 3) / 4  # noqa: E731 - centred score, 0 = unseen
    np.testing.assert_allclose(X, [[c(4), 0], [0, c(1)], [c(2), c(5)], [c(5), c(3)]])
    X, y = person_instances(P, 2, 2)  # person 30's first two: items 2, 3
    assert y.tolist() == [1, 5]
    np.testing.assert_allclose(X, [[c(3), 0], [c(1), c(2)]])


def test_people_and_viewer_streams(tmp_path):
    path = ratings_file(tmp_path)
    with pytest.raises(ValueError, match="fewer than two people"):
        # strict: more than 3 ratings -> only person 10 qualifies
        cf_people(2, 1, np.random.default_rng(0), data_path=path, min_ratings=3, strict=True, first=3)
    s = cf_people(2, 1, np.random.default_rng(0), data_path=path, min_ratings=3, strict=False, first=3)
    assert s.X_train.shape == (2, 2) and s.X_test.shape == (1, 2) and s.n_ranks == 5
    s = cf_viewer_stream(3, 0, np.random.default_rng(3), data_path=path, min_ratings=3)
    assert s.X_train.shape == (3, 2) and s.X_test.shape == (0, 2)
    a = cf_viewer_stream(3, 0, np.random.default_rng(9), data_path=path, min_ratings=3)
    b = cf_viewer_stream(3, 0, np.random.default_rng(9), data_path=path, min_ratings=3)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.y_train, b.y_train)
