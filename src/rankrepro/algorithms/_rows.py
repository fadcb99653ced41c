"""Row access of the compiled kernels (``_compiled``): one kernel source for CSR rows and for
dense rows.

A kernel takes an instance array as ``(ip, ix, xv)``: CSR row pointers, column indices and
values, or, for dense instances (:func:`.base.rows` of a 2-D array), two empty index arrays
and the (T x n) array itself as ``xv``.  Numba compiles the kernel once for each form; the
helpers below are chosen by the type of ``xv`` when it compiles, and inlined.

A CSR array made from a dense one stores its non-zeros in column order; the dense helpers
visit every feature in column order, and give the numbers the CSR form gives, to the last
bit.  A zero feature adds w_j * 0 = +-0 to a sum that starts at +0 and so is never -0 (in
round-to-nearest, a + b is -0 only when a and b are both -0): it changes nothing, as long as
w_j is finite.  So a dense sum is taken over every feature (no branch per feature), and only
when it comes out not finite (some w_j * x_j was inf or NaN, perhaps inf * 0 of a diverged
Widrow-Hoff) is it taken again over the non-zero features alone.  Likewise w += c x adds
c * 0 = +-0 to weights that are never -0 (they start at +0 or are sums): plain when c is
finite, over the non-zero features when it is not.  Dense rows save the conversion to CSR
(most of a short learner's time on dense data) and the indirect indexing.

A non-finite x_tj makes the dense sum over every feature non-finite whatever w is (w_j x_tj
is inf or NaN, inf * 0 included), so the slow path above is where dense rows are checked:
it looks at the row and raises :class:`NonFiniteRow` when a value is inf or NaN, before the
round changes any state.  Every kernel takes a dense sum of the round's row before it
updates, so a dense X needs no separate finiteness pass (``OnlineRanker.fit_online`` restores
the learner's state of before the call when a later row is refused).  CSR rows are not
checked here: they are checked before.
"""

from __future__ import annotations

import math

from numba import njit, types
from numba.extending import overload


def _dense(xv) -> bool:
    return isinstance(xv, types.Array) and xv.ndim == 2


def n_rows(ip, xv):
    """The number of rows."""


@overload(n_rows, inline="always")
def _n_rows(ip, xv):
    if _dense(xv):
        return lambda ip, xv: xv.shape[0]
    return lambda ip, xv: ip.shape[0] - 1


_helper = njit(cache=True, nogil=True, inline="always")


class NonFiniteRow(ValueError):
    """A dense row holding inf or NaN, met by a kernel (before that round's update)."""


@_helper
def check_row(xv, t):
    """Raise :class:`NonFiniteRow` when dense row t holds inf or NaN."""
    for j in range(xv.shape[1]):
        if not math.isfinite(xv[t, j]):
            raise NonFiniteRow("input X contains NaN or infinity")


@_helper
def _dot_csr(w, ip, ix, xv, t, exp):
    """sum_j w_j x_tj (exp(w_j) x_tj with ``exp``) over the stored entries of CSR row t."""
    s = 0.0
    for p in range(ip[t], ip[t + 1]):
        s += (math.exp(w[ix[p]]) if exp else w[ix[p]]) * xv[p]
    return s


@_helper
def _dot_nonzero(w, xv, t, exp):
    """The same over the non-zero x_tj of dense row t."""
    s = 0.0
    for j in range(xv.shape[1]):
        if xv[t, j] != 0.0:
            s += (math.exp(w[j]) if exp else w[j]) * xv[t, j]
    return s


@_helper
def _dot_dense(w, xv, t, exp):
    """The same over every x_tj of dense row t; again over the non-zero ones when the sum is
    not finite (after :func:`check_row`: the row itself may be what is not finite)."""
    s = 0.0
    for j in range(xv.shape[1]):
        s += (math.exp(w[j]) if exp else w[j]) * xv[t, j]
    if math.isfinite(s):
        return s
    check_row(xv, t)
    return _dot_nonzero(w, xv, t, exp)


def dot_row(w, ip, ix, xv, t):
    """w . x_t"""


def _dot_row_impl(w, ip, ix, xv, t):
    if _dense(xv):
        return lambda w, ip, ix, xv, t: _dot_dense(w, xv, t, False)
    return lambda w, ip, ix, xv, t: _dot_csr(w, ip, ix, xv, t, False)


overload(dot_row, inline="always")(_dot_row_impl)


def dot_row_call(w, ip, ix, xv, t):
    """w . x_t, as :func:`dot_row`, a call rather than inlined at Numba's level (the body is
    inlined in it): oap_online's loop, where Numba's SSA pass warns of a variable out of
    scope (NumbaIRAssumptionWarning) when the dense form is inlined twice."""


overload(dot_row_call)(_dot_row_impl)


def exp_dot_row(logw, ip, ix, xv, t):
    """sum_j exp(logw_j) x_tj over the stored (non-zero) entries of x_t."""


@overload(exp_dot_row, inline="always")
def _exp_dot_row(logw, ip, ix, xv, t):
    if _dense(xv):
        return lambda logw, ip, ix, xv, t: _dot_dense(logw, xv, t, True)
    return lambda logw, ip, ix, xv, t: _dot_csr(logw, ip, ix, xv, t, True)


def axpy_row(w, c, ip, ix, xv, t):
    """w += c * x_t"""


@overload(axpy_row, inline="always")
def _axpy_row(w, c, ip, ix, xv, t):
    if _dense(xv):
        def dense(w, c, ip, ix, xv, t):
            if math.isfinite(c):
                for j in range(xv.shape[1]):
                    w[j] += c * xv[t, j]
            else:
                for j in range(xv.shape[1]):
                    if xv[t, j] != 0.0:
                        w[j] += c * xv[t, j]
        return dense

    def csr(w, c, ip, ix, xv, t):
        for p in range(ip[t], ip[t + 1]):
            w[ix[p]] += c * xv[p]
    return csr


def sq_row(ip, xv, t):
    """||x_t||^2"""


@overload(sq_row, inline="always")
def _sq_row(ip, xv, t):
    if _dense(xv):
        def dense(ip, xv, t):
            q = 0.0
            for j in range(xv.shape[1]):
                q += xv[t, j] * xv[t, j]
            return q
        return dense

    def csr(ip, xv, t):
        q = 0.0
        for p in range(ip[t], ip[t + 1]):
            q += xv[p] * xv[p]
        return q
    return csr


def member_scores(ip, ix, xv, t, W, score):
    """score_i = W_i . x_t for every row i of W."""


@overload(member_scores, inline="always")
def _member_scores(ip, ix, xv, t, W, score):
    # the inner loop over the members: independent sums the compiler can run side by side;
    # each member's sum still starts at 0 and adds its terms in the row's order
    if _dense(xv):
        def dense(ip, ix, xv, t, W, score):
            for i in range(W.shape[0]):
                score[i] = 0.0
            for j in range(xv.shape[1]):
                x = xv[t, j]
                for i in range(W.shape[0]):
                    score[i] += W[i, j] * x
            for i in range(W.shape[0]):
                if not math.isfinite(score[i]):
                    check_row(xv, t)
                    score[i] = 0.0
                    for j in range(xv.shape[1]):
                        if xv[t, j] != 0.0:
                            score[i] += W[i, j] * xv[t, j]
        return dense

    def csr(ip, ix, xv, t, W, score):
        for i in range(W.shape[0]):
            score[i] = 0.0
        for p in range(ip[t], ip[t + 1]):
            j = ix[p]
            x = xv[p]
            for i in range(W.shape[0]):
                score[i] += W[i, j] * x
    return csr


_EXPONENT = 0x7FF0000000000000


@njit(cache=True, nogil=True)
def all_finite(bits):
    """Whether every float64 whose bits are ``bits`` (a uint64 view) is finite: none has the
    all-ones exponent of inf and NaN.  An integer count the compiler vectorises: one pass at
    memory speed, no temporary (np.isfinite(X).all() writes a boolean array first)."""
    bad = 0
    for i in range(bits.shape[0]):
        bad += (bits[i] & _EXPONENT) == _EXPONENT
    return bad == 0


@njit(cache=True, nogil=True)
def all_in(a, low, high):
    """Whether every integer of ``a`` lies in low..high: one vectorised pass, no temporary."""
    bad = 0
    for i in range(a.shape[0]):
        bad += (a[i] < low) | (a[i] > high)
    return bad == 0
