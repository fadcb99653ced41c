"""Snakemake adapter: build data/processed/<name>/data.npz and its manifest."""
from rankrepro.jobs import job_preprocess

sm = snakemake  # noqa: F821 - injected by Snakemake
job_preprocess(sm.wildcards.dataset, dict(sm.params.options), log=sm.log[0])
