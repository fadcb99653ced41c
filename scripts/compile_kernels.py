"""Snakemake adapter: compile the package's Numba kernels into Numba's cache (make data)."""
from rankrepro.jobs import job_compile_kernels

sm = snakemake  # noqa: F821 - injected by Snakemake
job_compile_kernels(sm.output[0], log=sm.log[0])
