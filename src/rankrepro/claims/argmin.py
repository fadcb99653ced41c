"""``argmin``: among the lhs cells the lowest has hyperparameter ``over`` equal to ``expect``
(the claimed cell below every other, tested on the trials)."""

from __future__ import annotations

from .base import ClaimKind, compared_points, result
from . import testing
from .spread import _round, at_least_two


class Argmin(ClaimKind):
    name = "argmin"
    reads = ("over", "expect")

    def check(self, claim, chk):
        chk.require("over", claim.over is not None, "an argmin claim needs 'over'")
        chk.require("expect", claim.expect is not None, "an argmin claim needs 'expect'")

    def check_cells(self, claim, lhs, chk):
        at_least_two(claim, lhs, chk)
        over = claim.over
        with_over = [x for x in lhs if over in x.params]
        chk.require("over", len(with_over) > 0, f"'{over}' is not a hyperparameter of any selected cell "
                                                f"(theirs: {sorted(set().union(*(set(x.params) for x in lhs)))})")
        chk.require("over", len(with_over) == len(lhs),
                    f"every compared cell must have '{over}'; {[x.id for x in lhs if over not in x.params]} do not")
        vals = sorted({chk.fmt(x.params[over]) for x in lhs})
        chk.require("expect", any(chk.equal(x.params[over], claim.expect) for x in lhs),
                    f"{over}={claim.expect} is not among the compared values {vals}: the claim could never hold")

    def evaluate(self, c, ctx):
        got_points = compared_points(c, ctx)
        if got_points is None:
            return result(c, "not evaluable", "fewer than two cells with values")
        pts, desc, best = got_points
        over, want = c.over, c.expect
        got = best[0].params.get(over)
        claimed = [p for p in pts if p[0].params.get(over) is not None and float(p[0].params[over]) == float(want)]
        if not claimed:
            return result(c, "not evaluable", f"no cell with {over}={want} has a value: {desc}")
        mine = min(claimed, key=lambda p: p[1])
        rnd = _round(ctx, c, mine[0])
        x = testing.trial_values(ctx.trials, mine[0].id, c.metric, rnd)
        tests = [testing.less(x, testing.trial_values(ctx.trials, p[0].id, c.metric, _round(ctx, c, p[0])),
                              f"{mine[0].label} vs {p[0].label}") for p in pts if p not in claimed]
        return testing.tested(c, f"lowest at {over}={got} (claimed {want}): {desc}", testing.combine(tests))


KIND = Argmin()
