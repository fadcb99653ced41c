"""Snakemake adapter: one arena family's comparison over its data sets."""
from rankrepro.timing import job_timer
from rankrepro.jobs import job_arena

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("arena", f"arena/{sm.params.family}", None):
    job_arena(sm.params.family, sm.params.scale, sm.params.config_dir, list(sm.input.cells), sm.output.json,
              sm.output.md, sm.output.csv, sm.output.png)
