"""Snakemake adapter: build the arrays the builders keep beside the processed data (make data)."""
from rankrepro.jobs import job_keep_arrays

sm = snakemake  # noqa: F821 - injected by Snakemake
job_keep_arrays([b[0] for b in sm.params.builds], sm.params.scale, sm.params.config_dir, dict(sm.params.data),
                sm.output[0], log=sm.log[0])
