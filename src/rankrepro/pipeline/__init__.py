"""The top floor: the catalog (each experiment composed once with Hydra, validated, its sweep
expanded and written as a resolved config the jobs read), seeding and the trial runner,
freshness (reruns decided by cell fingerprints), and the job entry points of the Snakemake
rules (``jobs``)."""

from .catalog import Cell, ConfigError, Experiment, find_config_dir, list_experiments, load_catalog, load_experiment
from .runner import run_cell, trial_seeds

__all__ = ["Cell", "ConfigError", "Experiment", "find_config_dir", "list_experiments", "load_catalog",
           "load_experiment", "run_cell", "trial_seeds"]
