"""Snakemake adapter: draw one figure artefact."""
from rankrepro.timing import job_timer
from rankrepro.jobs import job_figure

sm = snakemake  # noqa: F821 - injected by Snakemake
with job_timer("figure", sm.params.experiment, None):
    job_figure(sm.params.experiment, sm.params.scale, sm.params.config_dir, sm.input.summary, sm.output.png,
               sm.output.pdf, record=sm.input.record)
