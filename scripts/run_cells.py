"""Snakemake adapter: run a pack of one experiment's cells in one job (rankrepro.pipeline.schedule.cell_packs)."""
from pathlib import Path

from rankrepro.timing import job_timer
from rankrepro.jobs import DEFAULT_BACKEND, job_run_cells

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("run_cells", sm.params.experiment, None, sm.threads) as times:
    done = []
    times["cells"] = done
    job_run_cells(sm.params.experiment, list(sm.params.cells), sm.params.scale, sm.params.config_dir,
                  # the cells' files are results/<paper>/<artefact>/cells/<cell>.{parquet,fingerprint}, their
                  # logs beside the pack's
                  str(Path(sm.output[0]).parent), str(Path(sm.log[0]).parent), threads=sm.threads,
                  log=sm.log[0], data=list(sm.input.data), backend=str(sm.config.get("backend", DEFAULT_BACKEND)),
                  scheduler=sm.config.get("dask_scheduler"), twins=dict(sm.params.twins), done=done)
