"""Where the experiment configs are and which exist, with the standard library only: the
command line checks an experiment's name and scale with these before it imports the catalog
(Hydra, the learners, numba; seconds on a loaded machine)."""

from __future__ import annotations

import os
from pathlib import Path


def find_config_dir(start: str | os.PathLike | None = None) -> Path:
    """``$RANKREPRO_CONFIG_DIR``, else the nearest ``config/config.yaml`` above ``start``."""
    env = os.environ.get("RANKREPRO_CONFIG_DIR")
    if env:
        return Path(env).resolve()
    here = Path(start or Path.cwd()).resolve()
    for p in [here, *here.parents]:
        if (p / "config" / "config.yaml").is_file():
            return p / "config"
    raise FileNotFoundError("no config/config.yaml found above " + str(here) + "; set RANKREPRO_CONFIG_DIR")


def list_experiments(config_dir: str | os.PathLike | None = None) -> list[str]:
    """Every experiment as ``<paper>/<artefact>``, sorted."""
    root = Path(config_dir) if config_dir else find_config_dir()
    exp_dir = root / "experiment"
    return sorted(str(p.relative_to(exp_dir).with_suffix("")).replace(os.sep, "/")
                  for p in exp_dir.rglob("*.yaml") if not p.name.startswith("_"))


def list_scales(config_dir: str | os.PathLike | None = None) -> list[str]:
    root = Path(config_dir) if config_dir else find_config_dir()
    return sorted(p.stem for p in (root / "scale").glob("*.yaml"))
