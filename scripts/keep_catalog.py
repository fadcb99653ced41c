"""Snakemake adapter: keep the smoke scale's catalog in the catalog cache (make data)."""
from rankrepro.jobs import job_keep_catalog

sm = snakemake  # noqa: F821 - injected by Snakemake
job_keep_catalog("smoke", sm.params.config_dir, sm.output[0], log=sm.log[0])
