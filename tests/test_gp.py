"""Collaborative ordinal regression (Yu, Yu & Tresp 2006): GPR closed form, EP against
quadrature and against textbook sequential EP, numerics at extreme inputs, ordered
thresholds, the collaborative EM's objective and its agreement with eq. 3 as written."""
import numpy as np
import pytest
from scipy import integrate, stats

from rankrepro.algorithms.ep import (
    chol, ep_ordinal, fit_ordinal_params, initial_thresholds, log_phi_diff, ordinal_log_lik_grad, ordinal_moments,
    predict_ordinal, site_posterior, thresholds_from, _pack)
from rankrepro.algorithms.gp import CollabPrior, GPModel, cgpr_em
from rankrepro.algorithms.reference import cgpr_em_plain, ep_ordinal_sequential

B5 = np.array([-np.inf, -1.0, -0.3, 0.3, 1.0, np.inf])


def corr_kernel(rng, m, d=80):
    return np.corrcoef(rng.normal(size=(m, d)))


def test_gpr_posterior_is_the_closed_form():
    rng = np.random.default_rng(0)
    K = corr_kernel(rng, 12)
    h = rng.normal(size=12)
    y = rng.normal(size=12)
    s2 = 0.3
    post = site_posterior(K, h, np.full(12, 1 / s2), y / s2)
    A = np.linalg.inv(K + s2 * np.eye(12))
    np.testing.assert_allclose(post.post_mean, h + K @ A @ (y - h), atol=1e-10)
    np.testing.assert_allclose(post.post_var, np.diag(K - K @ A @ K), atol=1e-10)
    np.testing.assert_allclose(post.W, A, atol=1e-10)
    np.testing.assert_allclose(post.a, A @ (y - h), atol=1e-10)


@pytest.mark.parametrize("mu, v, y, sigma", [(0.3, 0.8, 3, 0.4), (2.5, 0.2, 1, 1.0), (-2.0, 1.5, 5, 0.1),
                                             (0.0, 0.05, 2, 0.05), (4.0, 1.0, 5, 1.0)])
def test_ep_site_moments_match_quadrature(mu, v, y, sigma):
    lo, hi = B5[y - 1], B5[y]

    def lik(f):
        return stats.norm.cdf((hi - f) / sigma) - stats.norm.cdf((lo - f) / sigma)

    def moment(k):
        return integrate.quad(lambda f: f ** k * stats.norm.pdf(f, mu, np.sqrt(v)) * lik(f), mu - 12 * np.sqrt(v), mu + 12 * np.sqrt(v),
                              epsabs=1e-13, epsrel=1e-11, limit=200)[0]

    Z = moment(0)
    m1 = moment(1) / Z
    var = moment(2) / Z - m1 ** 2
    logz, alpha, nu = ordinal_moments(mu, v, lo, hi, sigma)
    assert logz == pytest.approx(np.log(Z), rel=1e-7)
    assert mu + v * alpha == pytest.approx(m1, abs=1e-7)
    assert v - v * v * nu == pytest.approx(var, rel=1e-6)


def test_log_likelihood_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    mu, v = rng.normal(size=6), rng.random(6) + 0.1
    lo, hi, sig = np.array([-np.inf, -1, -0.3, 0.3, 1.0, -1]), np.array([-1, -0.3, 0.3, 1.0, np.inf, 1.0]), 0.7
    _, dlo, dhi, dsig = ordinal_log_lik_grad(mu, v, lo, hi, sig)
    eps = 1e-6
    f = lambda lo_, hi_, s_: ordinal_log_lik_grad(mu, v, lo_, hi_, s_)[0]  # noqa: E731
    fin = np.isfinite(lo)
    np.testing.assert_allclose(dlo[fin], ((f(lo + eps, hi, sig) - f(lo - eps, hi, sig)) / (2 * eps))[fin], rtol=1e-5)
    fin = np.isfinite(hi)
    np.testing.assert_allclose(dhi[fin], ((f(lo, hi + eps, sig) - f(lo, hi - eps, sig)) / (2 * eps))[fin], rtol=1e-5)
    np.testing.assert_allclose(dsig, (f(lo, hi, sig + eps) - f(lo, hi, sig - eps)) / (2 * eps), rtol=1e-5)


def test_extreme_inputs_stay_finite():
    mu = np.array([1e6, -1e6, 1e12, -1e12, 0.0, 35.0, -35.0, 0.0])
    lo = np.array([-np.inf, 2.0, -np.inf, 0.0, 1.0, -np.inf, 3.0, -1e9])
    hi = np.array([0.0, np.inf, 0.0, np.inf, 1.0 + 1e-9, 0.0, np.inf, 1e9])
    logz, alpha, nu = ordinal_moments(mu, 1.0, lo, hi, 0.5)
    for a in (logz, alpha, nu):
        assert np.all(np.isfinite(a))
    s2 = 1.25
    assert np.all((nu > 0) & (nu <= 1 / s2))
    # far in the wrong tail the probit is nearly quadratic: -d2 log Z / dmu2 -> 1/s^2
    assert nu[0] == pytest.approx(1 / s2, rel=1e-6) and nu[5] == pytest.approx(1 / s2, rel=2e-3)
    assert np.all(np.isfinite(log_phi_diff(np.array([-1e300, 40.0, -40.0]), np.array([1e300, 41.0, -39.0]))))
    # EP and prediction with a prior mean far from every threshold
    rng = np.random.default_rng(2)
    K = corr_kernel(rng, 15)
    y = rng.integers(1, 6, size=15)
    for h0 in (1e4, -1e4):
        ep = ep_ordinal(K, np.full(15, h0), y, B5, 0.3)
        assert np.isfinite(ep.log_z) and np.all(np.isfinite(ep.tau)) and np.all(np.isfinite(ep.nu))
    assert set(predict_ordinal(np.array([1e8, -1e8, 0.0]), np.array([1e-12, 1.0, 1e6]), B5, 0.5)) <= set(range(1, 6))


def test_cholesky_adds_jitter_to_a_singular_kernel():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    K = X @ X.T  # rank 3
    L = chol(K)
    assert np.all(np.isfinite(L))
    assert np.allclose(L @ L.T, K, atol=1e-5 * np.mean(np.diag(K)))


def test_ep_converges_with_finite_evidence_and_is_exact_for_one_item():
    rng = np.random.default_rng(4)
    K = corr_kernel(rng, 40)
    y = rng.integers(1, 6, size=40)
    ep = ep_ordinal(K, np.zeros(40), y, B5, 0.5)
    assert ep.converged and np.isfinite(ep.log_z) and np.all(ep.tau > 0)
    # one item: EP is exact, its evidence is log int N(f; h, k) P(y | f) df
    k, h, lab, sig = 0.7, 0.4, np.array([4]), 0.6
    one = ep_ordinal(np.array([[k]]), np.array([h]), lab, B5, sig, tol=1e-12)
    Z = integrate.quad(lambda f: stats.norm.pdf(f, h, np.sqrt(k)) *
                       (stats.norm.cdf((B5[4] - f) / sig) - stats.norm.cdf((B5[3] - f) / sig)), -10, 10)[0]
    assert one.log_z == pytest.approx(np.log(Z), rel=1e-8)


def test_parallel_ep_reaches_the_sequential_fixed_point():
    rng = np.random.default_rng(5)
    K = corr_kernel(rng, 25)
    y = rng.integers(1, 6, size=25)
    h = rng.normal(scale=0.3, size=25)
    t_seq, n_seq = ep_ordinal_sequential(K, h, y, B5, 0.5)
    ep = ep_ordinal(K, h, y, B5, 0.5, tol=1e-11)
    np.testing.assert_allclose(ep.tau, t_seq, atol=1e-8)
    np.testing.assert_allclose(ep.nu, n_seq, atol=1e-8)


def test_thresholds_stay_ordered():
    rng = np.random.default_rng(6)
    groups, params = [], []
    for _ in range(6):
        n = int(rng.integers(5, 40))
        lab = rng.choice([1, 2, 5], size=n)  # ranks 3 and 4 never seen: their gaps are unconstrained
        groups.append((lab, rng.normal(size=n) * 3, rng.random(n) + 0.05))
        params.append(_pack(initial_thresholds(lab, 5, 1.0), 1.0))
    out, _ = fit_ordinal_params(groups, np.array(params))
    for row in out:
        b = thresholds_from(row[:-1])
        assert np.all(np.diff(b) > 0) and np.isinf(b[0]) and np.isinf(b[-1])


def test_the_likelihood_parameter_search_reports_its_cap():
    """One L-BFGS iteration cannot reach the optimum of a problem many iterations solve: the search
    says it stopped at the cap; given enough iterations it converges and says so, at a higher
    objective (the cavity-fixed evidence)."""
    from rankrepro.algorithms.ep import ordinal_objective

    rng = np.random.default_rng(11)
    groups, params = [], []
    for _ in range(4):
        lab = rng.integers(1, 6, size=30)
        groups.append((lab, rng.normal(size=30), rng.random(30) + 0.1))
        params.append(_pack(initial_thresholds(lab, 5, 1.0), 1.0))
    params = np.array(params)
    one, capped_one = fit_ordinal_params(groups, params, max_iter=1)
    full, capped_full = fit_ordinal_params(groups, params, max_iter=2000)
    assert capped_one and not capped_full
    owner = np.repeat(np.arange(4), 30)
    y = np.concatenate([g[0] for g in groups])
    cm, cv = np.concatenate([g[1] for g in groups]), np.concatenate([g[2] for g in groups])
    assert ordinal_objective(full, owner, y, cm, cv)[0] < ordinal_objective(one, owner, y, cm, cv)[0]


def test_gp_model_counts_the_capped_parameter_searches():
    K, Y, train = small_problem()
    test = np.setdiff1d(np.arange(K.shape[0]), train)
    capped = GPModel(likelihood="ordinal", em_iters=4, sigma0=1.0, param_fit_iters=1).fit_predict_kernel(
        K, Y, train, test)
    assert capped.param_fits == 3 and capped.param_fits_capped == 3
    free = GPModel(likelihood="ordinal", em_iters=4, sigma0=1.0, param_fit_iters=5000).fit_predict_kernel(
        K, Y, train, test)
    assert free.param_fits == len(free.objective) - 1 and free.param_fits_capped == 0


def small_problem(seed=7, m=80, users=10, density=0.6):
    rng = np.random.default_rng(seed)
    K = corr_kernel(rng, m, d=120)
    L = chol(K)
    common = L @ rng.normal(size=m)
    F = common + 0.6 * (L @ rng.normal(size=(m, users))).T
    Y = np.digitize(F + 0.3 * rng.normal(size=F.shape), [-1, -0.3, 0.3, 1]) + 1
    Y = np.where(rng.random(Y.shape) < density, Y, 0)
    train = np.sort(rng.permutation(m)[:40])
    return K, Y, train


def test_cgpr_em_objective_does_not_decrease_and_matches_eq3_as_written():
    K, Y, train = small_problem()
    prior = CollabPrior.from_kernel(K, train)
    Ytr = Y[:, train]
    J = [np.flatnonzero(r > 0) for r in Ytr]
    T = [r[j] - r[j].mean() for r, j in zip(Ytr, J)]
    objective: list[float] = []
    s2 = cgpr_em(prior, J, T, 0.01, 6, 0.0, objective)
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(objective, objective[1:]))
    h, Sig, s2_plain, obj_plain = cgpr_em_plain(K, Y, train, 0.01, 6)
    np.testing.assert_allclose(objective, obj_plain, rtol=1e-10)
    np.testing.assert_allclose(prior.h, h, atol=1e-9)
    np.testing.assert_allclose(prior.G, Sig[:, train], atol=1e-9)
    np.testing.assert_allclose(prior.d, np.diag(Sig), atol=1e-9)
    assert s2 == pytest.approx(s2_plain, rel=1e-10)


@pytest.mark.parametrize("collaborative", [False, True])
def test_gpor_objective_does_not_decrease_and_thresholds_ordered(collaborative):
    K, Y, train = small_problem(seed=8)
    test = np.setdiff1d(np.arange(K.shape[0]), train)
    fit = GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=6, tol=0.0).fit_predict_kernel(
        K, Y, train, test)
    obj = fit.objective
    assert len(obj) == 6 and np.all(np.isfinite(obj))
    if collaborative:
        assert obj[-1] > obj[0]  # the M-step raises the EM bound, not EP's evidence, at every step
    else:
        assert all(b >= a - 1e-8 * abs(a) for a, b in zip(obj, obj[1:]))
    assert np.all(np.diff(fit.thresholds, axis=1) > 0)
    assert all(set(np.unique(p)) <= set(range(1, 6)) for p in fit.pred)


def test_models_learn_and_are_repeatable():
    """On data drawn from a shared GP the four models beat predicting every user's most
    frequent training rank, and refitting gives identical predictions."""
    K, Y, train = small_problem(seed=9, m=120, users=12)
    test = np.setdiff1d(np.arange(K.shape[0]), train)
    base = []
    for row in Y:
        lab = row[train][row[train] > 0]
        mode = np.bincount(lab).argmax()
        truth = row[test][row[test] > 0]
        base.append(np.mean(truth != mode))
    for lik, sig0 in (("gaussian", 0.1), ("ordinal", 1.0)):
        for col in (False, True):
            model = GPModel(likelihood=lik, collaborative=col, sigma0=sig0, em_iters=5)
            a = model.fit_predict_kernel(K, Y, train, test)
            b = model.fit_predict_kernel(K, Y, train, test)
            assert all(np.array_equal(x, z) for x, z in zip(a.pred, b.pred))
            zo = [np.mean(p[row[test] > 0] != row[test][row[test] > 0]) for p, row in zip(a.pred, Y)]
            assert np.mean(zo) < np.mean(base), (lik, col)


def test_gp_trial_draws_the_same_items_for_every_model(tmp_path, monkeypatch):
    from rankrepro.data import builders
    from rankrepro.data.collab_gp import CollabData
    from rankrepro.protocols.gp import GPSpec, gp_trial

    K, Y, _ = small_problem(seed=10, m=60)
    monkeypatch.setitem(builders.BUILDERS, "tiny_gp", lambda data_path: CollabData(K, Y, 5, 10, int((Y > 0).sum())))
    seen = []
    orig = GPModel.fit_predict_kernel

    def spy(self, K_, Y_, train, predict, progress=None):
        seen.append(train.copy())
        return orig(self, K_, Y_, train, predict, progress)

    monkeypatch.setattr(GPModel, "fit_predict_kernel", spy)
    rows = {}
    for lik in ("gaussian", "ordinal"):
        spec = GPSpec("gp_model", {"likelihood": lik, "n_items": 20, "em_iters": 2}, "tiny_gp", {}, "unused",
                      np.random.SeedSequence(11))
        rows[lik] = gp_trial(spec)
        again = gp_trial(spec)  # repeatable bit for bit (the timing aside)
        assert [r for r in rows[lik] if r[0] != "fit_seconds"] == [r for r in again if r[0] != "fit_seconds"]
    assert len(seen) == 4 and all(np.array_equal(seen[0], s) for s in seen) and seen[0].size == 20
    for lik, r in rows.items():
        vals = dict((m, v) for m, _, v in r)
        assert 0 <= vals["zero_one"] <= 1 and vals["mae"] >= 0
