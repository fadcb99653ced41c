# Shared helpers: the catalog, output locations and input functions.
from pathlib import Path

from rankrepro.pipeline.catalog import load_catalog
from rankrepro.pipeline.jobs import cell_fingerprint, config_fingerprint

SCALE = str(config.get("scale", "paper"))
CONFIG_DIR = str(Path(workflow.basedir) / "config")
# paper-scale outputs are the committed ones; any other scale writes under runs/<scale>/
PREFIX = "" if SCALE == "paper" else f"runs/{SCALE}/"
CATALOG = load_catalog(SCALE, config_dir=CONFIG_DIR)


wildcard_constraints:
    paper=r"[A-Za-z0-9_]+",
    artefact=r"[A-Za-z0-9_]+",
    cell=r"[A-Za-z0-9_.\-]+",


def out(path):
    return f"{PREFIX}{path}"


def experiment_of(wildcards):
    return CATALOG[f"{wildcards.paper}/{wildcards.artefact}"]


def cell_files(wildcards):
    exp = experiment_of(wildcards)
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{c.id}.parquet") for c in exp.cells]


def cell_param_fingerprint(wildcards):
    exp = experiment_of(wildcards)
    return cell_fingerprint(exp, exp.cell(wildcards.cell))


def experiment_fingerprint(wildcards):
    return config_fingerprint(experiment_of(wildcards))


def records():
    return [out(f"results/{e.paper}/{e.artefact}.json") for e in CATALOG.values()]


def figures():
    return [out(f"figures/{e.paper}/{e.artefact}.png") for e in CATALOG.values() if e.cfg.experiment.kind == "figure"]


def all_outputs():
    return [out("results/report/index.html"), *records(), *figures()]
