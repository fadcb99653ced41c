"""``monotone``: per algorithm, ``stat`` (the ``mean`` or the interval half-width ``ci``)
moves in ``direction`` as hyperparameter ``over`` grows; the mean's steps tested on the trials
(:mod:`rankrepro.claims.testing`), a half-width read on the estimates."""

from __future__ import annotations

from . import testing
from .base import ClaimKind, result


class Monotone(ClaimKind):
    name = "monotone"
    reads = ("over", "stat", "direction")

    def check(self, claim, chk):
        chk.require("over", claim.over is not None, "a monotone claim needs 'over'")
        chk.require("stat", claim.stat in ("mean", "ci"), "must be 'mean' or 'ci'")
        chk.require("direction", claim.direction in ("increasing", "decreasing"),
                    "must be 'increasing' or 'decreasing'")

    def check_cells(self, claim, lhs, chk):
        over = claim.over
        with_over = [x for x in lhs if over in x.params]
        chk.require("over", len(with_over) > 0, f"'{over}' is not a hyperparameter of any selected cell "
                                                f"(theirs: {sorted(set().union(*(set(x.params) for x in lhs)))})")
        by_alg: dict[str, set] = {}
        for x in with_over:
            by_alg.setdefault(x.algorithm, set()).add(chk.fmt(x.params[over]))
        chk.require("over", any(len(v) >= 2 for v in by_alg.values()),
                    f"no selected algorithm has two values of '{over}' to compare")

    def evaluate(self, c, ctx):
        over, stat = c.over, c.stat
        col = "mean" if stat == "mean" else "ci"
        by_alg: dict[str, list[tuple[float, float, object, object]]] = {}
        for cell in ctx.cells(c.lhs):
            if over not in cell.params:
                continue
            v = ctx.values(cell.id, c.metric, c.rounds)
            if v.empty:
                continue
            r = v.iloc[-1]
            by_alg.setdefault(cell.algorithm, []).append((float(cell.params[over]), float(r[col]), cell, r["round"]))
        if not by_alg:
            return result(c, "not evaluable", "no values")
        sign = 1 if c.direction == "increasing" else -1
        bad, parts, tests = [], [], []
        for alg, pts in by_alg.items():
            pts.sort(key=lambda p: p[0])
            ys = [p[1] for p in pts]
            parts.append(f"{alg}: " + ", ".join(f"{over}={p[0]:g}: {p[1]:.3f}" for p in pts))
            if any(sign * (ys[i + 1] - ys[i]) < 0 for i in range(len(ys) - 1)):
                bad.append(alg)
            for p, q in zip(pts, pts[1:]):
                lower, upper = (p, q) if sign > 0 else (q, p)
                tests.append(testing.less(testing.trial_values(ctx.trials, lower[2].id, c.metric, lower[3]),
                                          testing.trial_values(ctx.trials, upper[2].id, c.metric, upper[3]),
                                          f"{alg} {over}={p[0]:g} -> {q[0]:g}"))
        name = "interval half-width" if stat == "ci" else "mean"
        ev = f"{name} by {over}: " + "; ".join(parts)
        ev = ev if not bad else f"not monotone for {', '.join(bad)}. " + ev
        frac = 1 - len(bad) / len(by_alg)
        if stat == "ci":
            # a half-width has no per-trial values to test: the claim is read on the estimates
            return result(c, "held" if not bad else "not held",
                          ev + " (descriptive: an interval's half-width is not tested)", frac)
        return testing.tested(c, ev, testing.combine(tests), frac)


KIND = Monotone()
