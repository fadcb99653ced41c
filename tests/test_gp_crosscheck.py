"""GP models of Yu, Yu & Tresp (2006) against independent computations.

* GPOR's EP marginals, evidence and predictive probabilities against the exact posterior by
  brute-force Gauss-Hermite quadrature on problems of 2 and 3 labelled items;
* a Laplace approximation written here from scipy's normal cdf/pdf (Rasmussen & Williams
  2006, Sec. 3.4, with the ordinal likelihood of Chu & Ghahramani 2005): EP must be closer to
  the exact posterior than Laplace, and the two must agree on the predicted ranks of a toy set
  up to the expected EP-vs-Laplace difference (Laplace centres on the mode and takes the
  curvature there: its means sit nearer the label's interval edge and its variances are
  smaller; Kuss & Rasmussen 2005, Nickisch & Rasmussen 2008);
* the EP evidence's gradient in the thresholds and sigma against finite differences of the
  evidence itself (EP rerun to convergence at each perturbed point);
* the collaborative M-step: eq. 3 for CGPOR against the full-matrix plain iteration, and the
  Normal-Inverse-Wishart MAP step against the textbook formula with h inside the scatter.

GPflow's ordinal likelihood (variational) was not used: it needs TensorFlow (several hundred MB)
in CI for one cross-check; quadrature is exact where EP is approximate, which is the stronger
reference on small problems.
"""
import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy import optimize, stats

from rankrepro.algorithms.ep import _pack, ep_ordinal, ordinal_objective, predict_ordinal, thresholds_from
from rankrepro.algorithms.gp import CollabPrior, GPModel, cgpr_em
from rankrepro.algorithms.reference import cgpor_iteration_plain

B5 = np.array([-np.inf, -1.0, -0.3, 0.3, 1.0, np.inf])


def lik(f, y, b, sigma):
    """P(y | f), straight from the paper's formula (scipy's normal cdf)."""
    return stats.norm.cdf((b[y] - f) / sigma) - stats.norm.cdf((b[y - 1] - f) / sigma)


def exact_posterior(K, h, y, b, sigma, nodes=80):
    """Evidence, posterior means, variances and the weights/points of the quadrature, by a
    tensor Gauss-Hermite rule in the prior's whitened coordinates f = h + L z."""
    n = y.size
    x, w = hermegauss(nodes)
    w = w / np.sqrt(2 * np.pi)
    Z = np.stack(np.meshgrid(*([x] * n), indexing="ij"), -1).reshape(-1, n)
    Wt = np.prod(np.stack(np.meshgrid(*([w] * n), indexing="ij"), -1).reshape(-1, n), axis=1)
    F = h + Z @ np.linalg.cholesky(K).T
    L = np.prod(lik(F, y[None, :], b, sigma), axis=1)
    p = Wt * L
    ev = p.sum()
    mean = p @ F / ev
    var = p @ (F - mean) ** 2 / ev
    return np.log(ev), mean, var, F, p / ev


def toy(n, seed, extra=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + extra, 3))
    K = 0.8 * np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, -1) / 1.5) + 0.05 * np.eye(n + extra)
    h = rng.normal(scale=0.3, size=n + extra)
    y = rng.integers(1, 6, size=n)
    return K, h, y


@pytest.mark.parametrize("n, seed, sigma", [(2, 0, 0.5), (2, 1, 0.3), (3, 2, 0.5), (3, 3, 1.0)])
def test_ep_marginals_evidence_and_predictions_match_brute_force(n, seed, sigma):
    K, h, y = toy(n, seed)
    J, s = np.arange(n), n  # labelled items, one test item
    KJ = K[np.ix_(J, J)]
    log_ev, mean, var, F, post = exact_posterior(KJ, h[J], y, B5, sigma)
    # the rule is converged: the same with fewer nodes
    assert exact_posterior(KJ, h[J], y, B5, sigma, nodes=60)[0] == pytest.approx(log_ev, abs=1e-5)
    ep = ep_ordinal(KJ, h[J], y, B5, sigma, tol=1e-12)
    assert ep.converged
    # EP's errors on probit sites are small (Kuss & Rasmussen 2005): thousandths of the prior scale
    # (measured here: evidence within 2e-4, means within 1.1e-4, variances within 1.3e-3 relative)
    assert ep.log_z == pytest.approx(log_ev, abs=1e-3)
    np.testing.assert_allclose(ep.post.post_mean, mean, atol=1e-3)
    np.testing.assert_allclose(ep.post.post_var, var, rtol=5e-3)
    # predictive distribution of the unlabelled item: exact = E_post[P(y* | f_J)]
    ks = K[s, J]
    A = np.linalg.solve(KJ, ks)
    m_s = h[s] + (F - h[J]) @ A
    v_s = K[s, s] - ks @ A
    sd = np.sqrt(sigma ** 2 + v_s)
    exact = np.array([post @ (stats.norm.cdf((B5[k] - m_s) / sd) - stats.norm.cdf((B5[k - 1] - m_s) / sd))
                      for k in range(1, 6)])
    ep_mean = h[s] + ks @ ep.post.a
    ep_var = K[s, s] - ks @ ep.post.W @ ks
    sd_ep = np.sqrt(sigma ** 2 + ep_var)
    ep_p = np.array([stats.norm.cdf((B5[k] - ep_mean) / sd_ep) - stats.norm.cdf((B5[k - 1] - ep_mean) / sd_ep)
                     for k in range(1, 6)])
    np.testing.assert_allclose(ep_p, exact, atol=1e-2)  # measured: at most 4.2e-3
    assert predict_ordinal(np.array([ep_mean]), np.array([ep_var]), B5, sigma)[0] == np.argmax(exact) + 1


def laplace(K, h, y, b, sigma, iters=100):
    """Laplace approximation: Newton on log P(y | f) - (f - h)' K^-1 (f - h) / 2 with the
    ordinal probit's derivatives from scipy.stats.norm.  Returns (mode, W = -Hessian of the
    log likelihood at the mode, gradient of the log likelihood at the mode)."""
    f = h.copy()
    lo, hi = b[y - 1], b[y]

    def derivs(f):
        z0, z1 = (lo - f) / sigma, (hi - f) / sigma
        Zk = stats.norm.cdf(z1) - stats.norm.cdf(z0)
        n0, n1 = stats.norm.pdf(z0), stats.norm.pdf(z1)
        zn0 = np.where(np.isfinite(z0), np.nan_to_num(z0) * n0, 0.0)
        zn1 = np.where(np.isfinite(z1), np.nan_to_num(z1) * n1, 0.0)
        g = (n0 - n1) / (sigma * Zk)
        W = g ** 2 + (zn1 - zn0) / (sigma ** 2 * Zk)
        return g, W

    Kinv = np.linalg.inv(K)
    for _ in range(iters):
        g, W = derivs(f)
        f_new = np.linalg.solve(Kinv + np.diag(W), W * f + g + Kinv @ h)
        if np.max(np.abs(f_new - f)) < 1e-12:
            f = f_new
            break
        f = f_new
    g, W = derivs(f)
    return f, W, g


@pytest.mark.parametrize("n, seed, sigma", [(2, 0, 0.5), (3, 2, 0.5), (3, 4, 0.3)])
def test_ep_is_closer_to_the_exact_posterior_than_laplace(n, seed, sigma):
    K, h, y = toy(n, seed)
    KJ, hJ = K[:n, :n], h[:n]
    _, mean, var, _, _ = exact_posterior(KJ, hJ, y, B5, sigma)
    ep = ep_ordinal(KJ, hJ, y, B5, sigma, tol=1e-12)
    mode, W, _ = laplace(KJ, hJ, y, B5, sigma)
    lap_var = np.diag(np.linalg.inv(np.linalg.inv(KJ) + np.diag(W)))
    assert np.max(np.abs(ep.post.post_mean - mean)) < np.max(np.abs(mode - mean))
    assert np.max(np.abs(ep.post.post_var - var)) < np.max(np.abs(lap_var - var))


def test_gpor_predictions_agree_with_an_independent_laplace_gpor():
    """A toy set from a GP: 40 labelled and 60 unlabelled items, the same thresholds and sigma
    for both methods.  EP and Laplace differ by the approximation only; on the ranks that
    shows as a few items whose predictive distribution is close between two ranks."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(100, 2))
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, -1)) + 1e-6 * np.eye(100)
    f = np.linalg.cholesky(K) @ rng.normal(size=100)
    sigma = 0.4
    y_all = np.digitize(f + sigma * rng.normal(size=100), B5[1:-1]) + 1
    J, T = np.arange(40), np.arange(40, 100)
    KJ = K[np.ix_(J, J)]
    ep = ep_ordinal(KJ, np.zeros(40), y_all[J], B5, sigma, tol=1e-10)
    KsJ = K[np.ix_(T, J)]
    ep_mean = KsJ @ ep.post.a
    ep_var = np.diag(K)[T] - np.einsum("ij,jk,ik->i", KsJ, ep.post.W, KsJ)
    mode, W, g = laplace(KJ, np.zeros(40), y_all[J], B5, sigma)
    lap_mean = KsJ @ g
    lap_var = np.diag(K)[T] - np.einsum("ij,jk,ik->i", KsJ, np.linalg.inv(KJ + np.diag(1 / W)), KsJ)
    # Laplace's latent means are close to EP's, its variances not larger on average
    assert np.max(np.abs(ep_mean - lap_mean)) < 0.1
    assert np.mean(lap_var) <= np.mean(ep_var) + 1e-9
    p_ep = predict_ordinal(ep_mean, ep_var, B5, sigma)
    p_lap = predict_ordinal(lap_mean, lap_var, B5, sigma)
    assert np.mean(p_ep == p_lap) >= 0.95
    # and both predict far better than chance on this toy set (mean absolute error)
    assert np.mean(np.abs(p_ep - y_all[T])) < 0.6


@pytest.mark.parametrize("seed", [0, 1])
def test_ep_evidence_gradient_in_thresholds_and_sigma_matches_finite_differences(seed):
    rng = np.random.default_rng(20 + seed)
    n = 9
    X = rng.normal(size=(n, 2))
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, -1)) + 0.05 * np.eye(n)
    h = rng.normal(scale=0.2, size=n)
    y = rng.integers(1, 6, size=n)
    P = _pack(np.array([-0.8, -0.2, 0.4, 1.1]), 0.6) + rng.normal(scale=0.1, size=5)

    def log_ev(P):
        ep = ep_ordinal(K, h, y, thresholds_from(P[:-1]), float(np.exp(P[-1])), tol=1e-13, max_sweeps=2000)
        assert ep.converged
        return ep

    ep = log_ev(P)
    _, grad = ordinal_objective(P[None, :], np.zeros(n, dtype=np.int64), y, ep.cav_mean, ep.cav_var)
    grad = -grad  # ordinal_objective returns the gradient of minus the evidence
    eps = 1e-5
    fd = np.array([(log_ev(P + eps * e).log_z - log_ev(P - eps * e).log_z) / (2 * eps) for e in np.eye(5)])
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


def small_collab(seed=3, m=30, users=6, density=0.7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 40))
    K = np.corrcoef(X)
    L = np.linalg.cholesky(K + 1e-9 * np.eye(m))
    common = L @ rng.normal(size=m)
    F = common + 0.6 * (L @ rng.normal(size=(m, users))).T
    Y = np.digitize(F + 0.3 * rng.normal(size=F.shape), [-1, -0.3, 0.3, 1]) + 1
    Y = np.where(rng.random(Y.shape) < density, Y, 0)
    train = np.sort(rng.permutation(m)[:18])
    return K, Y, train


def test_cgpor_m_step_is_eq3_on_the_full_matrices():
    K, Y, train = small_collab()
    n_users = Y.shape[0]
    b = np.tile(B5, (n_users, 1))
    sig = np.full(n_users, 0.5)
    prior = CollabPrior.from_kernel(K, train)
    Ytr = Y[:, train]
    J = [np.flatnonzero(r > 0) for r in Ytr]
    posts = [ep_ordinal(K[np.ix_(train[j], train[j])], np.zeros(j.size), r[j], B5, 0.5, tol=1e-11).post
             for r, j in zip(Ytr, J)]
    prior.m_step(J, posts)
    h, Sig = cgpor_iteration_plain(K, Y, train, b, sig, np.zeros(K.shape[0]), K.copy())
    # the plain iteration stops its sequential EP at 1e-4 change: agreement to that order
    np.testing.assert_allclose(prior.h, h, atol=1e-4)
    np.testing.assert_allclose(prior.G, Sig[:, train], atol=1e-4)
    np.testing.assert_allclose(prior.d, np.diag(Sig), atol=1e-4)


@pytest.mark.parametrize("hyper", [0.0, 3.0, 50.0])
def test_cgpr_niw_map_step_matches_the_textbook_formula(hyper):
    """Hyper-prior h ~ N(0, Sigma/pi), Sigma ~ IW(pi, K0) (Schwaighofer, Tresp & Yu 2005):
    h = sum_j f_j / (pi + n), Sigma = [pi h h' + pi K0 + sum_j ((f_j - h)(f_j - h)' + Sigma_j)]
    / (pi + n), on the full m x m matrices, three EM iterations."""
    K, Y, train = small_collab(seed=4)
    Ytr = Y[:, train]
    J = [np.flatnonzero(r > 0) for r in Ytr]
    targets = [r[j] - r[j].mean() for r, j in zip(Ytr, J)]
    prior = CollabPrior.from_kernel(K, train)
    s2 = cgpr_em(prior, J, targets, 0.04, 3, 0.0, hyper=hyper)
    h, Sig, s2p = np.zeros(K.shape[0]), K.copy(), 0.04
    n = len(J)
    for _ in range(3):
        fs, covs, sq, nl = [], [], 0.0, 0
        for j, t in zip(J, targets):
            items = train[j]
            Ainv = np.linalg.inv(Sig[np.ix_(items, items)] + s2p * np.eye(items.size))
            f = h + Sig[:, items] @ Ainv @ (t - h[items])
            C = Sig - Sig[:, items] @ Ainv @ Sig[:, items].T
            fs.append(f)
            covs.append(C)
            sq += float(np.sum((t - f[items]) ** 2) + np.trace(C[np.ix_(items, items)]))
            nl += items.size
        h = np.sum(fs, axis=0) / (hyper + n)
        Sig = (hyper * np.outer(h, h) + hyper * K
               + sum(np.outer(f - h, f - h) + C for f, C in zip(fs, covs))) / (hyper + n)
        s2p = sq / nl
    np.testing.assert_allclose(prior.h, h, atol=1e-9)
    np.testing.assert_allclose(prior.G, Sig[:, train], atol=1e-9)
    np.testing.assert_allclose(prior.d, np.diag(Sig), atol=1e-9)
    assert s2 == pytest.approx(s2p, rel=1e-9)


def test_unregularised_cgpr_em_has_no_finite_maximum_and_the_hyper_prior_gives_one():
    """With more training items than users, eq. 3 can put all label variance into Sigma's
    training block: sigma^2 -> 0 and the evidence grows without bound (here from below zero
    to hundreds of nats).  The NIW hyper-prior keeps Sigma near K0 and the EM settles with a
    finite sigma^2."""
    rng = np.random.default_rng(5)
    m, users = 60, 8
    K = np.corrcoef(rng.normal(size=(m, 120)))
    Y = rng.integers(1, 6, size=(users, m))
    Y = np.where(rng.random(Y.shape) < 0.6, Y, 0)
    train = np.arange(40)
    Ytr = Y[:, train]
    J = [np.flatnonzero(r > 0) for r in Ytr]
    targets = [r[j] - r[j].mean() for r, j in zip(Ytr, J)]
    free, reg = [], []
    s2_free = cgpr_em(CollabPrior.from_kernel(K, train), J, targets, 0.01, 25, 0.0, free)
    s2_reg = cgpr_em(CollabPrior.from_kernel(K, train), J, targets, 0.01, 25, 0.0, reg, hyper=float(users))
    assert s2_free < 1e-3 < s2_reg
    assert free[0] < 0 < 100 < free[-1]
    assert abs(reg[-1] - reg[-2]) < 1e-3 * abs(reg[-1])   # settled


def test_hyper_and_threshold_init_are_validated():
    from rankrepro.algorithms.base import ParamError

    with pytest.raises(ParamError, match="hyper"):
        GPModel(hyper=-1.0).validate()
    with pytest.raises(ParamError, match="threshold_init"):
        GPModel(threshold_init="median").validate()
    K, Y, train = small_collab(seed=6)
    test = np.setdiff1d(np.arange(K.shape[0]), train)
    for init in ("quantile", "uniform"):
        fit = GPModel(likelihood="ordinal", sigma0=1.0, em_iters=4, threshold_init=init).fit_predict_kernel(K, Y, train, test)
        assert np.all(np.diff(fit.thresholds, axis=1) > 0)


def test_median_prediction_minimises_the_expected_absolute_error():
    rng = np.random.default_rng(30)
    mean, var = rng.normal(scale=1.5, size=200), rng.random(200) + 0.05
    sigma = 0.4
    sd = np.sqrt(sigma ** 2 + var)
    P = np.stack([stats.norm.cdf((B5[k] - mean) / sd) - stats.norm.cdf((B5[k - 1] - mean) / sd)
                  for k in range(1, 6)], axis=1)
    ranks = np.arange(1, 6)
    exp_abs = P @ np.abs(ranks[:, None] - ranks[None, :])  # E|k - y| for each candidate k
    med = predict_ordinal(mean, var, B5, sigma, "median")
    np.testing.assert_allclose(exp_abs[np.arange(200), med - 1], exp_abs.min(axis=1), atol=1e-12)
    np.testing.assert_array_equal(predict_ordinal(mean, var, B5, sigma), np.argmax(P, axis=1) + 1)


def test_collab_gp_task_and_kernel_options(tmp_path, monkeypatch):
    from rankrepro.data import collab_gp as cg

    rng = np.random.default_rng(31)
    n_u, n_i = 60, 25
    user = np.repeat(np.arange(n_u), n_i)
    item = np.tile(np.arange(n_i), n_u)
    keep = rng.random(user.size) < np.repeat(np.linspace(0.3, 1.0, n_u), n_i)
    d = {"user": user[keep], "item": item[keep], "score": rng.integers(1, 6, keep.sum()).astype(float),
         "scale": np.arange(1, 6)}
    monkeypatch.setattr(cg, "load_cached", lambda path: d)
    cg.collab_gp.cache_clear()
    most = cg.collab_gp(data_path="x", min_item=1, min_user=1, n_tasks=10)
    rnd = cg.collab_gp(data_path="x", min_item=1, min_user=1, n_tasks=10, tasks="random", task_min_ratings=10)
    z = cg.collab_gp(data_path="x", min_item=1, min_user=1, n_tasks=10, kernel="zscore")
    assert (most.Y > 0).mean() > (rnd.Y > 0).mean()       # the most active users are the densest tasks
    assert np.allclose(np.diag(z.K), 1) and not np.allclose(z.K, most.K)
    assert np.all(np.linalg.eigvalsh(z.K) > -1e-9)
    with pytest.raises(ValueError, match="dataset.params.tasks"):
        cg.collab_gp(data_path="x", tasks="all")
    with pytest.raises(ValueError, match="task_min_ratings"):
        cg.collab_gp(data_path="x", min_item=1, min_user=1, n_tasks=10, tasks="random", task_min_ratings=10 ** 6)
    cg.collab_gp.cache_clear()


def test_collab_gp_data_is_kept_beside_the_data_bit_for_bit(tmp_path):
    """The kernel and targets are built once and read back by later jobs: what is read back
    equals a fresh build array for array, bit for bit; each parameter set has its own file;
    newer data rebuild it."""
    import os

    from rankrepro.data import collab_gp as cg

    rng = np.random.default_rng(8)
    n_u, n_i = 50, 30
    user, item = np.repeat(np.arange(n_u), n_i), np.tile(np.arange(n_i), n_u)
    keep = rng.random(user.size) < 0.6
    p = tmp_path / "ratings" / "data.npz"
    p.parent.mkdir()
    np.savez(p, user=user[keep], item=item[keep], score=rng.integers(1, 6, keep.sum()).astype(float),
             scale=np.arange(1, 6))
    kw = dict(data_path=str(p), min_item=1, min_user=1, n_tasks=8)
    fresh = cg._build(str(p), **{**dict(tasks="most", task_min_ratings=100, task_seed=0, kernel="cosine"),
                                 **{k: v for k, v in kw.items() if k != "data_path"}})
    cg.collab_gp.cache_clear()
    first = cg.collab_gp(**kw)
    kept = sorted(p.parent.glob("collab_gp-*.npz"))
    assert len(kept) == 1
    cg.collab_gp.cache_clear()
    again = cg.collab_gp(**kw)
    for d in (first, again):
        assert d.K.tobytes() == fresh["K"].tobytes() and d.Y.tobytes() == fresh["Y"].tobytes()
        assert (d.n_ranks, d.n_users, d.n_ratings) == tuple(int(v) for v in fresh["counts"])
    cg.collab_gp(**kw, kernel="zscore")
    assert len(list(p.parent.glob("collab_gp-*.npz"))) == 2
    old = kept[0].stat().st_mtime
    os.utime(p, (old + 10, old + 10))
    cg.collab_gp.cache_clear()
    cg.collab_gp(**kw)
    assert kept[0].stat().st_mtime > old
    cg.collab_gp.cache_clear()


@pytest.mark.parametrize("collaborative", [False, True])
def test_an_unchecked_likelihood_step_runs_ep_once_per_user_and_iteration(collaborative):
    from rankrepro.algorithms.base import ParamError

    with pytest.raises(ParamError, match="likelihood_step"):
        GPModel(likelihood_step="none").validate()
    K, Y, train = small_collab(seed=7)
    test = np.setdiff1d(np.arange(K.shape[0]), train)
    fits = {step: GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=4, tol=0.0,
                          likelihood_step=step).fit_predict_kernel(K, Y, train, test)
            for step in ("checked", "unchecked")}
    n_users = Y.shape[0]
    # unchecked: the E-step's EP only; checked: the E-steps plus the runs that check each step
    assert len(fits["unchecked"].ep_sweeps) == n_users * len(fits["unchecked"].objective) == n_users * 4
    assert len(fits["checked"].ep_sweeps) > n_users * len(fits["checked"].objective)
    for fit in fits.values():
        assert np.all(np.diff(fit.thresholds, axis=1) > 0)
        assert all(p.shape == (test.size,) and set(np.unique(p)) <= set(range(1, 6)) for p in fit.pred)
    assert not np.array_equal(fits["checked"].thresholds, fits["unchecked"].thresholds)
