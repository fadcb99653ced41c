"""Snakemake adapter: fetch and verify one data set into data/raw/<name>/."""
from rankrepro.jobs import job_fetch

sm = snakemake  # noqa: F821 - injected by Snakemake
job_fetch(sm.wildcards.dataset, log=sm.log[0])
