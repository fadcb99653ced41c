"""``spread``: the lhs cells differ: the best one is below the worst one (tested on the
trials, Bonferroni over every pair since both are chosen after seeing the values)."""

from __future__ import annotations

from . import testing
from .base import ClaimKind, compared_points, result


def at_least_two(claim, lhs, chk) -> None:
    chk.require("lhs", len(lhs) >= 2, f"a {claim.kind} claim compares at least two cells, "
                                      f"the selector gives {len(lhs)}")


class Spread(ClaimKind):
    name = "spread"

    def check_cells(self, claim, lhs, chk):
        at_least_two(claim, lhs, chk)

    def evaluate(self, c, ctx):
        got_points = compared_points(c, ctx)
        if got_points is None:
            return result(c, "not evaluable", "fewer than two cells with values")
        pts, desc, best = got_points
        worst = max(pts, key=lambda p: p[1])
        k = len(pts)
        t = testing.less(testing.trial_values(ctx.trials, best[0].id, c.metric, _round(ctx, c, best[0])),
                         testing.trial_values(ctx.trials, worst[0].id, c.metric, _round(ctx, c, worst[0])),
                         f"{best[0].label} vs {worst[0].label}")
        # the best and the worst are chosen after seeing the values: Bonferroni over every pair;
        # "the cells differ" has no reversal to show, so it is held or inconclusive
        pairs = k * (k - 1) // 2
        t = testing.Test(t.what, min(1.0, pairs * t.p_claim), float("nan"), t.n, t.paired, t.diffs)
        return testing.tested(c, f"best {best[0].label} {best[1]:.3f} (+-{best[3] - best[1]:.3f}), worst "
                                 f"{worst[0].label} {worst[1]:.3f} (+-{worst[3] - worst[1]:.3f}), the best below the "
                                 f"worst tested with Bonferroni over the {pairs} pairs: {desc}",
                              testing.combine([t]))


def _round(ctx, c, cell):
    v = ctx.values(cell.id, c.metric, c.rounds)
    return v.iloc[-1]["round"] if not v.empty else None


KIND = Spread()
