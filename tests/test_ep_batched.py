"""The faster EP of the GP models (issue 46 item 2) computes the same bits as before.

* :func:`rankrepro.algorithms.ep.chol` and the triangular solve of ``_factor`` call LAPACK
  directly, in place: compared with ``scipy.linalg.cholesky`` / ``solve_triangular`` on the
  same matrices, bit for bit (also on the jitter path and for an empty matrix).
* :func:`~rankrepro.algorithms.ep.ep_ordinal_many` runs several problems in lock-step: compared
  with one :func:`~rankrepro.algorithms.ep.ep_ordinal` per problem, every field bit for bit
  (warm and cold starts, sizes 0 to 60, sites far in the probit's tails, runs stopped at the
  sweep cap, damping halved by oscillation).
* A whole GPOR / CGPOR fit (both likelihood steps) equals the fit whose EP runs one user at a
  time through ``ep_ordinal``, and a rerun of the same fit equals the first, bit for bit.
* Issue 60 item 4: EP's marginals from diag(B^-1) (``linalg_path="inverse"``, an option, not
  the default) equal the dense posterior (K^-1 + T)^-1 and reach the default path's and textbook
  sequential EP's fixed point; fits on either path keep the invariants.
"""
import numpy as np
import pytest
from scipy import linalg

from rankrepro.algorithms import ep as ep_mod
from rankrepro.algorithms import gp as gp_mod
from rankrepro.algorithms.ep import _factor, chol, ep_ordinal, ep_ordinal_many, thresholds_from
from rankrepro.algorithms.gp import GPModel

B5 = np.array([-np.inf, -1.0, -0.3, 0.3, 1.0, np.inf])


def _kernel(rng, n, noise=1e-9):
    X = rng.normal(size=(n, n + 5))
    K = X @ X.T / (n + 5)
    return K + noise * rng.normal(size=K.shape)  # symmetric only up to rounding, as Sigma after an M-step


def _same(a, b) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("n", [1, 2, 7, 64, 151])
def test_chol_and_the_solve_equal_scipy_bit_for_bit(n):
    rng = np.random.default_rng(n)
    K = _kernel(rng, n)
    tau, nu, h = rng.uniform(0, 3, n), rng.normal(size=n), rng.normal(size=n)
    tau[: n // 4] = 0.0  # sites with no weight yet
    st = np.sqrt(tau)
    B = (st[:, None] * K) * st[None, :]
    B[np.diag_indices_from(B)] += 1.0
    L_ref = linalg.cholesky(0.5 * (B + B.T) + 0.0, lower=True)
    assert _same(chol(B), L_ref)
    _, L, V, nup = _factor(K, h, tau, nu)
    assert _same(L, L_ref)
    assert _same(V, linalg.solve_triangular(L_ref, st[:, None] * K, lower=True))
    assert _same(nup, nu - tau * h)


def test_chol_jitter_path_and_its_errors():
    A = np.ones((5, 5))  # rank one: the first tries fail, jitter 1e-10, 1e-8, ... times the mean diagonal
    L = chol(A)
    done = False
    for k in range(1, 8):
        try:
            ref = linalg.cholesky(A + 10.0 ** (-10 + 2 * (k - 1)) * np.eye(5), lower=True)
        except linalg.LinAlgError:
            continue
        assert _same(L, ref)
        done = True
        break
    assert done
    assert _same(A, np.ones((5, 5)))  # the argument is not overwritten
    with pytest.raises(ValueError, match="infs or NaNs"):
        chol(np.full((3, 3), np.nan))
    with pytest.raises(linalg.LinAlgError):
        chol(-np.eye(3), max_tries=2)
    assert chol(np.zeros((0, 0))).shape == (0, 0)


def _problems(rng, sizes, warm=False):
    out = []
    for i, n in enumerate(sizes):
        K = _kernel(rng, n) if n else np.zeros((0, 0))
        h = rng.normal(scale=0.5, size=n)
        if i % 3 == 2 and n:
            h[: max(1, n // 5)] += 40.0  # latent means far above every threshold: the Mills-ratio branch
        y = rng.integers(1, 6, size=n)
        sig = float(rng.uniform(0.05, 1.5))
        tau = rng.uniform(0.1, 2.0, n) if warm else None
        nu = rng.normal(size=n) if warm else None
        out.append((K, h, y, B5, sig, tau, nu))
    return out


@pytest.mark.parametrize("path", ["solve", "inverse"])
@pytest.mark.parametrize("warm", [False, True])
@pytest.mark.parametrize("max_sweeps", [200, 3])
def test_ep_ordinal_many_equals_one_run_per_problem(warm, max_sweeps, path):
    rng = np.random.default_rng(7 + warm + max_sweeps)
    problems = _problems(rng, [0, 1, 5, 40, 17, 60, 3, 0, 33], warm)
    many = ep_ordinal_many(problems, max_sweeps=max_sweeps, linalg_path=path)
    assert len(many) == len(problems)
    n_unconverged = 0
    for (K, h, y, b, s, tau, nu), got in zip(problems, many):
        ref = ep_ordinal(K, h, y, b, s, tau, nu, max_sweeps=max_sweeps, linalg_path=path)
        assert got.sweeps == ref.sweeps and got.converged == ref.converged
        n_unconverged += not ref.converged
        for f in ("tau", "nu", "cav_mean", "cav_var"):
            assert _same(getattr(got, f), getattr(ref, f)), f
        assert got.log_z == ref.log_z or (np.isnan(got.log_z) and np.isnan(ref.log_z))
        for f in ("a", "post_mean", "post_var", "W"):
            assert _same(getattr(got.post, f), getattr(ref.post, f)), f
        assert got.post.log_det_B == ref.post.log_det_B and got.post.quad == ref.post.quad
    if max_sweeps == 3:
        assert n_unconverged > 0  # the cap was reached by some problem: that path is compared too
    # the warm starts given are not modified
    if warm:
        assert all(_same(p[5], q[5]) for p, q in zip(problems, _problems(np.random.default_rng(7 + warm + max_sweeps),
                                                                            [0, 1, 5, 40, 17, 60, 3, 0, 33], warm)))


def test_ep_ordinal_many_of_nothing():
    assert ep_ordinal_many([]) == []


def _data(seed=3, m=40, users=12):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 15))
    Y = rng.integers(1, 6, size=(m, users))
    Y[rng.random(Y.shape) < 0.4] = 0
    Y[:, 0] = 0
    Y[:3, 0] = [1, 4, 5]  # a user with three labels
    return X[:30], Y[:30], X[30:]


@pytest.mark.parametrize("collaborative", [False, True])
@pytest.mark.parametrize("step", ["checked", "unchecked"])
def test_fit_equals_the_one_user_at_a_time_fit_and_reruns_bit_for_bit(monkeypatch, collaborative, step):
    Xtr, Ytr, Xte = _data()

    def fit():
        m = GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=6, tol=0.0,
                    likelihood_step=step).fit(Xtr, Ytr)
        K = gp_mod.cosine_kernel(np.vstack([Xtr, Xte]))
        Y = np.hstack([m.Y_fit_, np.zeros((m.Y_fit_.shape[0], Xte.shape[0]), dtype=np.int64)])
        return m.fit_predict_kernel(K, Y, np.arange(30), np.arange(30, 40))

    first, again = fit(), fit()
    # the same fit with EP run one user at a time (the code before the lock-step EP)
    monkeypatch.setattr(gp_mod, "ep_ordinal_many",
                        lambda problems, marginals=None, linalg_path="solve":
                        [ep_mod.ep_ordinal(*p, linalg_path=linalg_path) for p in problems])
    one_by_one = fit()
    for other in (again, one_by_one):
        assert all(_same(a, b) for a, b in zip(first.pred, other.pred))
        assert first.objective == other.objective
        assert _same(first.sigma, other.sigma) and _same(first.thresholds, other.thresholds)
        assert first.ep_unconverged == other.ep_unconverged
        assert first.param_fits == other.param_fits
    # the sweeps per run in the order one user at a time made them (E-step users 0..n-1, then each
    # user's checked attempts)
    assert first.ep_sweeps == one_by_one.ep_sweeps
    assert len(first.objective) > 1 and len(first.ep_sweeps) >= 12 * (len(first.objective) if collaborative else 2)


def test_ep_ordinal_many_reads_each_label_s_thresholds():
    # ep_ordinal_many reads b[y - 1], b[y] like ep_ordinal: rank 1 is (-inf, b_1], rank r is (b_{r-1}, inf)
    b = thresholds_from(np.array([-0.5, np.log(0.4), np.log(0.3), np.log(0.6)]))
    (got,) = ep_ordinal_many([(np.eye(2), np.zeros(2), np.array([1, 5]), b, 0.5, None, None)])
    ref = ep_ordinal(np.eye(2), np.zeros(2), np.array([1, 5]), b, 0.5)
    assert _same(got.tau, ref.tau) and got.post.post_mean[0] < 0 < got.post.post_mean[1]


@pytest.mark.parametrize("step", ["checked", "unchecked"])
@pytest.mark.parametrize("collaborative", [False, True])
def test_a_converged_ep_at_unmoved_parameters_and_prior_is_kept_not_run_again(collaborative, step):
    # GPOR after a checked step (taken or not) has the E-step's EP at its present parameters and
    # prior already: the fit keeps it instead of running it again; the same fit bit for bit as
    # the one that runs every user's EP at every E-step, with one sweep fewer per kept run
    Xtr, Ytr, Xte = _data()

    def fit(reuse):
        m = GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=6, tol=0.0,
                    likelihood_step=step).fit(Xtr, Ytr)
        m._reuse_ep = reuse
        K = gp_mod.cosine_kernel(np.vstack([Xtr, Xte]))
        Y = np.hstack([m.Y_fit_, np.zeros((m.Y_fit_.shape[0], Xte.shape[0]), dtype=np.int64)])
        return m.fit_predict_kernel(K, Y, np.arange(30), np.arange(30, 40))

    kept, every = fit(True), fit(False)
    assert all(_same(a, b) for a, b in zip(kept.pred, every.pred))
    assert kept.objective == every.objective and len(kept.objective) == 6
    assert _same(kept.sigma, every.sigma) and _same(kept.thresholds, every.thresholds)
    assert kept.ep_unconverged == every.ep_unconverged and kept.param_fits == every.param_fits
    skipped = len(every.ep_sweeps) - len(kept.ep_sweeps)
    if collaborative or step == "unchecked":  # the prior or the parameters move every iteration
        assert kept.ep_sweeps == every.ep_sweeps
    else:  # every user's E-step after the first is kept: 5 iterations x 12 users, one sweep each
        assert skipped == 5 * 12
        assert sum(every.ep_sweeps) - sum(kept.ep_sweeps) == skipped


@pytest.mark.parametrize("max_sweeps", [200, 3])
def test_a_run_started_from_the_last_run_s_marginals_is_the_same_bit_for_bit(max_sweeps):
    # a converged run leaves the marginals of its sites; a run warm-started from those sites on
    # the same K and h (other thresholds and sigma: the checked step) may take them instead of
    # factoring B again in its first sweep -- the same result, sweeps and all, one factor fewer
    rng = np.random.default_rng(11)
    first = ep_ordinal_many(_problems(rng, [0, 1, 5, 40, 17, 60, 3, 33]))
    assert all(r.converged and r.marginals is not None for r in first)
    b2 = thresholds_from(np.array([-0.9, np.log(0.5), np.log(0.7), np.log(0.4)]))
    rng = np.random.default_rng(11)
    again = [(K, h, y, b2, s * 1.3, r.tau, r.nu) for (K, h, y, _, s, _, _), r in
             zip(_problems(rng, [0, 1, 5, 40, 17, 60, 3, 33]), first)]
    calls = []
    real = ep_mod._factor
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ep_mod, "_factor", lambda *a: calls.append(1) or real(*a))
        plain = ep_ordinal_many(again, max_sweeps=max_sweeps)
        n_plain = len(calls)
        calls.clear()
        reused = ep_ordinal_many(again, max_sweeps=max_sweeps, marginals=[r.marginals for r in first])
        n_reused = len(calls)
    assert n_plain - n_reused == len(again)  # one factor fewer per problem (none stops at its first sweep)
    for p, r, (K, h, y, b, s, tau, nu) in zip(plain, reused, again):
        ref = ep_ordinal(K, h, y, b, s, tau, nu, max_sweeps=max_sweeps)
        for got in (p, r):
            assert got.sweeps == ref.sweeps and got.converged == ref.converged and got.log_z == ref.log_z
            for f in ("tau", "nu", "cav_mean", "cav_var"):
                assert _same(getattr(got, f), getattr(ref, f)), f
            for f in ("a", "post_mean", "post_var", "W"):
                assert _same(getattr(got.post, f), getattr(ref.post, f)), f
            if ref.converged:
                assert all(_same(x, z) for x, z in zip(got.marginals, ref.marginals))
            else:
                assert got.marginals is None  # a capped run's sites moved after its last marginals
    if max_sweeps == 3:
        assert any(not r.converged for r in plain)


@pytest.mark.parametrize("step", ["checked", "unchecked"])
@pytest.mark.parametrize("collaborative", [False, True])
def test_the_fit_starting_runs_from_kept_marginals_is_the_same_bit_for_bit(collaborative, step):
    Xtr, Ytr, Xte = _data()

    def fit(reuse):
        m = GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=6, tol=0.0,
                    likelihood_step=step).fit(Xtr, Ytr)
        m._reuse_marginals = reuse
        K = gp_mod.cosine_kernel(np.vstack([Xtr, Xte]))
        Y = np.hstack([m.Y_fit_, np.zeros((m.Y_fit_.shape[0], Xte.shape[0]), dtype=np.int64)])
        calls = []
        real, real_inv = ep_mod._factor, ep_mod._factor_inv  # GPOR's path's factorisation, CGPOR's
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ep_mod, "_factor", lambda *a: calls.append(1) or real(*a))
            mp.setattr(ep_mod, "_factor_inv", lambda *a: calls.append(1) or real_inv(*a))
            return m.fit_predict_kernel(K, Y, np.arange(30), np.arange(30, 40)), len(calls)

    (kept, n_kept), (every, n_every) = fit(True), fit(False)
    assert all(_same(a, b) for a, b in zip(kept.pred, every.pred))
    assert kept.objective == every.objective and kept.ep_sweeps == every.ep_sweeps
    assert _same(kept.sigma, every.sigma) and _same(kept.thresholds, every.thresholds)
    assert kept.ep_unconverged == every.ep_unconverged and kept.param_fits == every.param_fits
    if collaborative and step == "unchecked":  # every run follows an M-step: nothing to start from
        assert n_kept == n_every
    else:  # the checked step's runs (and GPOR's E-steps) start from the marginals kept
        assert n_kept < n_every


# -------------------------------------------------------------------------------------
# issue 60 item 4: the marginals from L^-1 (the default) reach the solve path's fixed point
# -------------------------------------------------------------------------------------
def test_tri_inv_is_the_inverse():
    rng = np.random.default_rng(21)
    for n in (0, 1, 5, 48, 49, 97, 160, 231):
        A = rng.normal(size=(n, n + 3))
        L = np.linalg.cholesky(A @ A.T / (n + 3) + np.eye(n)) if n else np.zeros((0, 0))
        Li = ep_mod.tri_inv(L)
        assert Li.shape == (n, n)
        if n:
            np.testing.assert_allclose(Li @ L, np.eye(n), atol=1e-12)
            assert np.all(np.triu(Li, 1) == 0.0)


@pytest.mark.parametrize("n", [1, 7, 64, 151])
def test_inverse_marginals_equal_the_dense_posterior(n):
    # independent computation: Sigma_post = (K^-1 + T)^-1, mean = Sigma_post (K^-1 h + nu); weak
    # sites (tau = 0 and tau tiny) take the product form
    rng = np.random.default_rng(n + 100)
    X = rng.normal(size=(n, n + 5))
    K = X @ X.T / (n + 5) + 0.05 * np.eye(n)
    tau, nu, h = rng.uniform(0.05, 3, n), rng.normal(size=n), rng.normal(size=n)
    tau[: n // 4] = 0.0
    tau[n // 4: n // 3] = 1e-9
    Kinv = np.linalg.inv(K)
    S = np.linalg.inv(Kinv + np.diag(tau))
    mean, var, factor = ep_mod._marginals_inv(K, h, tau, nu)
    np.testing.assert_allclose(var, np.diag(S), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(mean, S @ (Kinv @ h + nu), rtol=1e-8, atol=1e-9)
    post = ep_mod.site_posterior_inv(K, h, tau, nu, factor, var)
    ref = ep_mod.site_posterior(K, h, tau, nu)
    for f in ("a", "post_mean", "post_var", "W"):
        np.testing.assert_allclose(getattr(post, f), getattr(ref, f), rtol=1e-9, atol=1e-10, err_msg=f)
    assert post.log_det_B == pytest.approx(ref.log_det_B, rel=1e-12)
    assert post.quad == pytest.approx(ref.quad, rel=1e-9, abs=1e-10)


@pytest.mark.parametrize("warm", [False, True])
def test_the_inverse_path_reaches_the_solve_path_s_fixed_point(warm):
    from rankrepro.algorithms.reference import ep_ordinal_sequential

    rng = np.random.default_rng(31 + warm)
    # kernels conditioned as the data's are (_kernel's are near-singular: the sites along its
    # near-null directions hardly move the posterior, so any two paths stop at sites ~1e-7 apart);
    # no latent means far in the probit's tails (there the Mills-ratio series stalls above 1e-11)
    problems = [(K + 0.1 * np.eye(K.shape[0]), h, y, b, s, t, v)
                for K, h, y, b, s, t, v in _problems(rng, [1, 5, 40, 17, 60, 3, 33, 25], warm) if not (h > 10).any()]
    assert len(problems) >= 5
    new = ep_ordinal_many(problems, tol=1e-11, max_sweeps=2000, linalg_path="inverse")
    old = ep_ordinal_many(problems, tol=1e-11, max_sweeps=2000)
    for (K, h, y, b, s, _, _), a, r in zip(problems, new, old):
        assert a.converged and r.converged
        # (both stop when no site moves by 1e-11; where the map contracts slowly that is up to
        # ~1e-7 from the fixed point: still 1,000 times tighter than the fits' tolerance, 1e-4)
        np.testing.assert_allclose(a.tau, r.tau, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a.nu, r.nu, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(a.post.post_mean, r.post.post_mean, atol=1e-6)
        np.testing.assert_allclose(a.post.post_var, r.post.post_var, rtol=1e-6, atol=1e-9)
        assert a.log_z == pytest.approx(r.log_z, rel=1e-8)
        assert np.all(a.tau > 0)
        if y.size <= 40:  # textbook sequential EP: the same fixed point
            t_seq, n_seq = ep_ordinal_sequential(K, h, y, b, s, sweeps=500, tol=1e-12)
            np.testing.assert_allclose(a.tau, t_seq, rtol=1e-6, atol=1e-7)
            np.testing.assert_allclose(a.nu, n_seq, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match="linalg_path"):
        ep_ordinal_many(problems, linalg_path="qr")


@pytest.mark.parametrize("collaborative", [False, True])
def test_fits_on_both_paths_agree_and_keep_the_invariants(collaborative):
    # the whole fit on the default path against the solve path: the same EP convergence, ordered
    # thresholds, positive noise, objectives within EP's tolerance, predictions almost all the same
    Xtr, Ytr, Xte = _data()
    fits = {}
    for path in ("inverse", "solve"):
        m = GPModel(likelihood="ordinal", collaborative=collaborative, sigma0=1.0, em_iters=4, tol=0.0).fit(Xtr, Ytr)
        m._ep_linalg = {True: path, False: path}
        K = gp_mod.cosine_kernel(np.vstack([Xtr, Xte]))
        Y = np.hstack([m.Y_fit_, np.zeros((m.Y_fit_.shape[0], Xte.shape[0]), dtype=np.int64)])
        fits[path] = m.fit_predict_kernel(K, Y, np.arange(30), np.arange(30, 40))
    a, r = fits["inverse"], fits["solve"]
    assert a.ep_unconverged == 0 and r.ep_unconverged == 0
    assert np.all(np.diff(a.thresholds, axis=1) > 0) and np.all(a.sigma > 0)
    np.testing.assert_allclose(a.objective, r.objective, rtol=1e-3)
    if not collaborative:  # (CGPOR's EM amplifies EP's tolerance from one iteration to the next)
        np.testing.assert_allclose(a.thresholds, r.thresholds, atol=1e-3)
    same = np.mean(np.concatenate([x == z for x, z in zip(a.pred, r.pred)]))
    assert same >= 0.9
