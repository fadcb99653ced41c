"""Snakemake adapter: the HTML replication report."""
from rankrepro.pipeline.jobs import job_report

sm = snakemake  # noqa: F821 - injected by Snakemake
job_report(list(sm.input.records), list(sm.input.figures), sm.params.scale, sm.output[0])
