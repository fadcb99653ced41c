"""``levels``: each lhs cell's curve levels off above zero: at the last checked round it is at
least ``expect`` times its value at the first, and its 95% interval there lies above zero."""

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
        return curve_ends(c, ctx, lambda first, last, row: last >= float(c.expect) * first and float(row["low"]) > 0,
                          "does not level off above zero for ")


KIND = Levels()
