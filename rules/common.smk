# Shared helpers: the catalog, data availability, output locations and input functions.
from pathlib import Path

from snakemake.exceptions import WorkflowError

from rankrepro.data.fetch import availability
from rankrepro.data.preprocess import preprocess_params
from rankrepro.data.registry import REGISTRY as DATA_REGISTRY
from rankrepro.pipeline.catalog import data_status, load_catalog
from rankrepro.pipeline.jobs import BACKENDS, cell_fingerprint, config_fingerprint

SCALE = str(config.get("scale", "paper"))
CONFIG_DIR = str(Path(workflow.basedir) / "config")
# paper-scale outputs are the committed ones; any other scale writes under runs/<scale>/
PREFIX = "" if SCALE == "paper" else f"runs/{SCALE}/"
CATALOG = load_catalog(SCALE, config_dir=CONFIG_DIR)
# runtime option: run each artefact's cells in one job (saves ~2 s of start-up per cell;
# `make smoke` uses it), instead of one job per sweep cell
BATCH = str(config.get("batch_cells", False)).lower() in ("1", "true", "yes")
# runtime option: where a job's trials run (joblib backend; "dask" with dask_scheduler=<address>
# uses a running dask.distributed cluster).  Read by the job scripts; checked here, before any job.
BACKEND = str(config.get("backend", "loky"))
if BACKEND not in BACKENDS:
    raise WorkflowError(f"config key 'backend': unknown trial backend {BACKEND!r} (known: {', '.join(BACKENDS)})")
# decided once, before any job: which data sets can be had, and which artefacts can run
USABLE_DATA = [name for name in DATA_REGISTRY if availability(name).usable]
DATA_STATUS = {name: data_status(exp) for name, exp in CATALOG.items()}


wildcard_constraints:
    paper=r"[A-Za-z0-9_]+",
    artefact=r"[A-Za-z0-9_]+",
    cell=r"[A-Za-z0-9_.\-~=]+",
    dataset=r"[A-Za-z0-9_.\-]+",


def out(path):
    return f"{PREFIX}{path}"


def experiment_of(wildcards):
    return CATALOG[f"{wildcards.paper}/{wildcards.artefact}"]


def status_of(wildcards):
    return vars(DATA_STATUS[f"{wildcards.paper}/{wildcards.artefact}"])


def runnable(exp):
    return DATA_STATUS[exp.name].runnable


def processed(name):
    return f"data/processed/{name}/data.npz"


def cell_files(wildcards):
    exp = experiment_of(wildcards)
    if not runnable(exp):
        return []
    if BATCH:
        return [out(f"results/{exp.paper}/{exp.artefact}/all_cells.parquet")]
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{c.id}.parquet") for c in exp.all_cells]


def cell_data(wildcards):
    used = DATA_STATUS[f"{wildcards.paper}/{wildcards.artefact}"].used
    return [processed(used)] if used else []


def cell_param_fingerprint(wildcards):
    exp = experiment_of(wildcards)
    return cell_fingerprint(*exp.variant_of(exp.cell(wildcards.cell)))


def experiment_fingerprint(wildcards):
    return config_fingerprint(experiment_of(wildcards))


def records():
    return [out(f"results/{e.paper}/{e.artefact}.json") for e in CATALOG.values()]


def figures():
    return [out(f"figures/{e.paper}/{e.artefact}.png") for e in CATALOG.values()
            if e.cfg.experiment.figure is not None and runnable(e)]


def preprocess_options(wildcards):
    return preprocess_params(wildcards.dataset)


def data_outputs():
    return [processed(name) for name in USABLE_DATA]


def all_outputs():
    return [out("results/report/index.html"), *records(), *figures(), *data_outputs()]


def remove_stale_temporaries():
    """Delete leftovers of atomic writes (``.<name>.<random>.tmp``) under this scale's outputs."""
    for top in (out("results"), out("figures"), "data/processed"):
        root = Path(top)
        if root.is_dir():
            for p in root.rglob(".*.tmp"):
                p.unlink(missing_ok=True)
