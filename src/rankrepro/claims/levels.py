"""``levels``: each lhs cell's curve levels off above zero: at the last checked round it is at
least ``expect`` times its value at the first, and above zero (both tested on the trials)."""

from __future__ import annotations

from .base import ClaimKind
from .falls import curve_ends


class Levels(ClaimKind):
    name = "levels"
    reads = ("expect",)

    def check(self, claim, chk):
        chk.require("expect", claim.expect is not None and 0 < claim.expect <= 1,
                    "a levels claim needs 'expect' in (0, 1], the smallest last/first ratio that counts as "
                    "levelling off")

    def check_cells(self, claim, lhs, chk):
        chk.require("metric", chk.curve, f"a levels claim needs a curve metric, '{claim.metric}' is not one")

    def evaluate(self, c, ctx):
        e = float(c.expect)
        return curve_ends(c, ctx, [(f"last > {e:g} x first", lambda x0, x1: e * x0, lambda x0, x1: x1),
                                   ("last > 0", lambda x0, x1: 0.0 * x1, lambda x0, x1: x1)],
                          "does not level off above zero for ")


KIND = Levels()
