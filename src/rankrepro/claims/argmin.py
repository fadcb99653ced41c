"""``argmin``: among the lhs cells the lowest has hyperparameter ``over`` equal to ``expect``
(*inconclusive* when it does not but the claimed cell's interval overlaps the lowest one's)."""

from __future__ import annotations

from .base import ClaimKind, compared_points, result
from .spread import at_least_two


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
        held = got is not None and want is not None and float(got) == float(want)
        verdict = "held" if held else "not held"
        claimed = [p for p in pts if p[0].params.get(over) is not None and float(p[0].params[over]) == float(want)]
        if not held and claimed and all(p[2] <= best[3] for p in claimed):
            verdict = "inconclusive"  # the claimed cell's interval overlaps the lowest one's
        return result(c, verdict, f"lowest at {over}={got} (claimed {want}): {desc}")


KIND = Argmin()
