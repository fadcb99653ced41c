"""``falls``: each lhs cell's curve at the last checked round is at most ``expect`` times its
value at the first checked round."""

from __future__ import annotations

from .base import Claim, ClaimKind, Context, result


def curve_ends(c: Claim, ctx: Context, test, failing: str):
    """Verdict of a claim on each lhs curve's first and last checked values: ``test(first,
    last, last_row)``; ``failing`` starts the evidence naming the cells that fail it."""
    parts, bad = [], []
    for cell in ctx.cells(c.lhs):
        v = ctx.values(cell.id, c.metric, c.rounds)
        if len(v) < 2:
            continue
        first, last = float(v.iloc[0]["mean"]), float(v.iloc[-1]["mean"])
        ok = test(first, last, v.iloc[-1])
        parts.append(f"{cell.label}: {first:.3f} at round {int(v.iloc[0]['round'])} -> {last:.3f} at round "
                     f"{int(v.iloc[-1]['round'])}")
        if not ok:
            bad.append(cell.label)
    if not parts:
        return result(c, "not evaluable", "no curve in the checked range")
    return result(c, "not held" if bad else "held",
                  ((failing + ", ".join(bad) + ". ") if bad else "") + "; ".join(parts))


class Falls(ClaimKind):
    name = "falls"
    reads = ("expect",)

    def check(self, claim, chk):
        chk.require("expect", claim.expect is not None and claim.expect > 0,
                    "a falls claim needs 'expect', the largest last/first ratio that counts as falling")

    def check_cells(self, claim, lhs, chk):
        chk.require("metric", chk.curve, f"a falls claim needs a curve metric, '{claim.metric}' is not one")

    def evaluate(self, c, ctx):
        return curve_ends(c, ctx, lambda first, last, _: last <= float(c.expect or 1.0) * first,
                          "does not fall enough for ")


KIND = Falls()
