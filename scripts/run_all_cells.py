"""Snakemake adapter: every sweep cell of one artefact in one job (option batch_cells=true)."""
from rankrepro.timing import job_timer
from rankrepro.jobs import DEFAULT_BACKEND, job_run_all_cells

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("run_all_cells", sm.params.experiment, None, sm.threads):
    job_run_all_cells(sm.params.experiment, sm.params.scale, sm.params.config_dir, sm.output[0], threads=sm.threads,
                      log=sm.log[0], data=list(sm.input.data), backend=str(sm.config.get("backend", DEFAULT_BACKEND)),
                      scheduler=sm.config.get("dask_scheduler"),
                      reuse_cells=str(sm.config.get("force", False)).lower() not in ("1", "true", "yes"))
