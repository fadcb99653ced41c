"""Catalog loading (Hydra compose + validation), sweep expansion, seeding, trial runner."""

from .catalog import Cell, ConfigError, Experiment, find_config_dir, list_experiments, load_catalog, load_experiment
from .runner import run_cell, trial_seeds

__all__ = ["Cell", "ConfigError", "Experiment", "find_config_dir", "list_experiments", "load_catalog",
           "load_experiment", "run_cell", "trial_seeds"]
