"""Snakemake adapter: run the Monte-Carlo trials of one sweep cell."""
from rankrepro.timing import job_timer
from rankrepro.jobs import DEFAULT_BACKEND, job_run_cell

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("run_cell", sm.params.experiment, sm.params.cell, sm.threads):
    job_run_cell(sm.params.experiment, sm.params.cell, sm.params.scale, sm.params.config_dir, sm.output[0],
                 threads=sm.threads, log=sm.log[0], data=list(sm.input.data),
                 backend=str(sm.config.get("backend", DEFAULT_BACKEND)), scheduler=sm.config.get("dask_scheduler"),
                 fingerprint=sm.output.fingerprint, reuse=sm.input.reuse[0] if sm.input.reuse else None,
                 twin=sm.input.twin[0] if sm.input.twin else None,
                 reread=sm.input.reread[0] if sm.input.get("reread") else None)
