"""``falls``: each lhs cell's curve at the last checked round is below ``expect`` times its
value at the first checked round (tested on the trials, :mod:`rankrepro.claims.testing`)."""

from __future__ import annotations

from . import testing
from .base import Claim, ClaimKind, Context, result


def curve_ends(c: Claim, ctx: Context, conditions, failing: str):
    """Verdict of a claim on each lhs curve's first and last checked values.  ``conditions``
    lists, as (name, lower, upper) of per-trial Series (first, last) -> Series, the inequalities
    lower < upper the claim asks of each curve; each is tested on the trials (paired: the two
    rounds of one trial).  ``failing`` starts the evidence naming the cells whose means miss one."""
    parts, bad, tests = [], [], []
    for cell in ctx.cells(c.lhs):
        v = ctx.values(cell.id, c.metric, c.rounds)
        if len(v) < 2:
            continue
        r0, r1 = v.iloc[0]["round"], v.iloc[-1]["round"]
        first, last = float(v.iloc[0]["mean"]), float(v.iloc[-1]["mean"])
        x0 = testing.trial_values(ctx.trials, cell.id, c.metric, r0)
        x1 = testing.trial_values(ctx.trials, cell.id, c.metric, r1)
        ok = True
        for name, lower, upper in conditions:
            lo_v, up_v = lower(x0, x1), upper(x0, x1)
            tests.append(testing.less(lo_v, up_v, f"{cell.label}: {name}"))
            ok = ok and float(lo_v.mean()) < float(up_v.mean())
        parts.append(f"{cell.label}: {first:.3f} at round {int(r0)} -> {last:.3f} at round {int(r1)}")
        if not ok:
            bad.append(cell.label)
    if not parts:
        return result(c, "not evaluable", "no curve in the checked range")
    return testing.tested(c, ((failing + ", ".join(bad) + ". ") if bad else "") + "; ".join(parts),
                          testing.combine(tests))


class Falls(ClaimKind):
    name = "falls"
    reads = ("expect",)

    def check(self, claim, chk):
        chk.require("expect", claim.expect is not None and claim.expect > 0,
                    "a falls claim needs 'expect', the largest last/first ratio that counts as falling")

    def check_cells(self, claim, lhs, chk):
        chk.require("metric", chk.curve, f"a falls claim needs a curve metric, '{claim.metric}' is not one")

    def evaluate(self, c, ctx):
        e = float(c.expect or 1.0)
        return curve_ends(c, ctx, [(f"last < {e:g} x first", lambda x0, x1: x1, lambda x0, x1: e * x0)],
                          "does not fall enough for ")


KIND = Falls()
