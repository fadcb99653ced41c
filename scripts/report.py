"""Snakemake adapter: the HTML replication report."""
from rankrepro.timing import job_timer
from rankrepro.jobs import job_report

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("report", None, None):
    job_report([*sm.input.records, *[p for p in sm.input.comparisons if p.endswith(".json")]],
               [*sm.input.figures, *[p for p in sm.input.comparisons if p.endswith(".png")]], sm.params.scale, sm.output[0],
               kept=dict(sm.params.kept))
