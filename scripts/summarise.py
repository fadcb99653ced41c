"""Snakemake adapter: one paper's records and figures in one job (batch mode); with
batch_cells=paper its artefacts' cells first."""
from rankrepro.timing import job_timer
from rankrepro.jobs import DEFAULT_BACKEND, job_run_all_cells, job_summarise, loads_shared

sm = snakemake  # noqa: F821 - injected by Snakemake
runs = [dict(r) for r in sm.params.runs]
with job_timer("run_paper" if runs else "summarise", sm.params.paper, None, sm.threads), loads_shared():
    for r in runs:
        job_run_all_cells(r["experiment"], sm.params.scale, sm.params.config_dir, r["output"], threads=sm.threads,
                          log=sm.log[0], data=list(r["data"]), backend=str(sm.config.get("backend", DEFAULT_BACKEND)),
                          scheduler=sm.config.get("dask_scheduler"),
                          reuse_cells=str(sm.config.get("force", False)).lower() not in ("1", "true", "yes"))
    job_summarise(sm.params.scale, sm.params.config_dir, [dict(a) for a in sm.params.artefacts], log=sm.log[0],
                  comparisons=[dict(c) for c in sm.params.comparisons])
