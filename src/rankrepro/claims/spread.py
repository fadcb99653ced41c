"""``spread``: the lhs cells differ: the best one's 95% interval lies entirely below the
worst one's."""

from __future__ import annotations

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
        held = best[3] < worst[2]  # the best's interval lies entirely below the worst's
        return result(c, "held" if held else "not held",
                      f"best {best[0].label} {best[1]:.3f} (+-{best[3] - best[1]:.3f}), worst {worst[0].label} "
                      f"{worst[1]:.3f} (+-{worst[3] - worst[1]:.3f}); intervals "
                      f"{'separated' if held else 'overlap'}: {desc}")


KIND = Spread()
