"""Snakemake adapter: summary table, published comparison and claims of one artefact."""
from rankrepro.timing import job_timer
from rankrepro.jobs import job_aggregate

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("aggregate", sm.params.experiment, None):
    job_aggregate(sm.params.experiment, sm.params.scale, sm.params.config_dir,
                  [p for p in sm.input.cells if p.endswith(".parquet")],
                  sm.output.csv, sm.output.md, sm.output.json, status=dict(sm.params.status),
                  siblings=list(sm.input.siblings))
