"""Summaries, the published comparison, claim verdicts (the claim kinds are in
:mod:`rankrepro.claims`), sensitivity tables, figures, the scorecard and the HTML report."""
