# Shared helpers: the catalog, data availability, output locations and input functions.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

from rankrepro.data.fetch import availability
from rankrepro.data.preprocess import preprocess_params
from rankrepro.data.registry import DATASETS
from rankrepro.data.status import data_status
from rankrepro.pipeline.catalog import default_cache_dir, load_catalog, output_prefix, resolved_path, write_resolved
from rankrepro.pipeline.freshness import sync as sync_fingerprints
from rankrepro.pipeline.catalog import cell_fingerprint, config_fingerprint, reused_trials
from rankrepro.pipeline.jobs import BACKENDS, DEFAULT_BACKEND
from rankrepro.pipeline.schedule import artefact_priority, cell_priority, load_seconds as load_cell_seconds

SCALE = str(config.get("scale", "paper"))
CONFIG_DIR = str(Path(workflow.basedir) / "config")
# paper-scale outputs are the committed ones; any other scale writes under runs/<scale>/
PREFIX = output_prefix(SCALE)
# validated once and kept (~/.cache/rankrepro, or $RANKREPRO_CACHE_DIR) while the configs, the
# package's code and the library versions stay the same: ~10 s saved at each start
CATALOG = load_catalog(SCALE, config_dir=CONFIG_DIR, cache_dir=default_cache_dir())
# each experiment resolved once: the jobs read results/<paper>/<artefact>.config.yaml instead
# of composing the configs again (rewritten only when it changes)
for _exp in CATALOG.values():
    write_resolved(_exp, resolved_path(_exp.name, SCALE))
# runtime option: run each artefact's cells in one job (saves ~2 s of start-up per cell;
# `make smoke` uses it), instead of one job per sweep cell
BATCH = str(config.get("batch_cells", False)).lower() in ("1", "true", "yes")
# runtime option: where a job's trials run (joblib backend; "dask" with dask_scheduler=<address>
# uses a running dask.distributed cluster).  Read by the job scripts; checked here, before any job.
BACKEND = str(config.get("backend", DEFAULT_BACKEND))
if BACKEND not in BACKENDS:
    raise WorkflowError(f"config key 'backend': unknown trial backend {BACKEND!r} (known: {', '.join(BACKENDS)})")
# runtime option: may home pages be tried for data sets neither verified in data/raw nor in the
# mirror (`make data` and the first step of `make reproduce` set it).  Off, deciding what can be
# had only looks at files: parsing the workflow (which every cluster job does again) touches no
# network.
DOWNLOAD = str(config.get("download", False)).lower() in ("1", "true", "yes")
# decided once, before any job: which data sets can be had, and which artefacts can run
USABLE_DATA = [name for name in DATASETS if availability(name, probe=DOWNLOAD).usable]
DATA_STATUS = {name: data_status(exp.cfg.dataset.source, probe=DOWNLOAD) for name, exp in CATALOG.items()}
# reruns follow content, not file times (a fresh clone has neither Snakemake's metadata nor
# meaningful times): a cell whose fingerprint file no longer matches loses it (and reruns),
# current outputs are dated after their inputs.  Skipped under --config force=true.
FORCE = str(config.get("force", False)).lower() in ("1", "true", "yes")
if not FORCE:
    sync_fingerprints(CATALOG, {n: s.used for n, s in DATA_STATUS.items() if s.runnable}, prefix=PREFIX, batch=BATCH)


# the names that are parts of paths, as the catalog checks them (rankrepro.pipeline.names)
from rankrepro.pipeline.names import NAME_PATTERNS


wildcard_constraints:
    paper=NAME_PATTERNS["paper"],
    artefact=NAME_PATTERNS["artefact"],
    cell=NAME_PATTERNS["cell"],
    figure=NAME_PATTERNS["figure"],
    dataset=NAME_PATTERNS["dataset"],


def out(path):
    return f"{PREFIX}{path}"


def experiment_of(wildcards):
    if "figure" in wildcards.keys():
        return CATALOG[f"{wildcards.paper}/{artefact_of_figure(wildcards)}"]
    return CATALOG[f"{wildcards.paper}/{wildcards.artefact}"]


def artefact_of_figure(wildcards):
    """The artefact whose figure is figures/<paper>/<figure>.png."""
    for e in CATALOG.values():
        if e.paper == wildcards.paper and e.figure_file == wildcards.figure:
            return e.artefact
    raise ValueError(f"no experiment draws figures/{wildcards.paper}/{wildcards.figure}.png")


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
    # the fingerprint files too: a cell whose fingerprint was removed (stale) is rerun
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{c.id}.{ext}") for c in exp.all_cells
            for ext in ("parquet", "fingerprint")]


def cell_data(wildcards):
    used = DATA_STATUS[f"{wildcards.paper}/{wildcards.artefact}"].used
    return [processed(used)] if used else []


CELL_SECONDS = load_cell_seconds(Path(workflow.basedir) / "rules" / "cell_seconds.json")


def cell_priority_of(wildcards):
    return cell_priority(experiment_of(wildcards), wildcards.cell, CELL_SECONDS)


def artefact_priority_of(wildcards):
    return artefact_priority(experiment_of(wildcards), CELL_SECONDS)


def cell_reuse(wildcards):
    """The main cell's results, for a sensitivity cell that only runs more trials."""
    exp = experiment_of(wildcards)
    hit = reused_trials(exp, exp.cell(wildcards.cell))
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{hit[0]}.parquet")] if hit else []



def cell_param_fingerprint(wildcards):
    exp = experiment_of(wildcards)
    return cell_fingerprint(*exp.variant_of(exp.cell(wildcards.cell)))


def experiment_fingerprint(wildcards):
    return config_fingerprint(experiment_of(wildcards))


# `snakemake --report` documents what has been made: an output not made yet (an experiment
# not run, a figure not drawn) is left out of its DAG, instead of failing the whole report
# with "marked for report but does not exist" (Snakemake tells the Snakefile nothing else)
REPORTING = any(a == "--report" or a.startswith("--report=") for a in sys.argv[1:])


def made(paths):
    return [p for p in paths if Path(p).exists()] if REPORTING else paths


def records():
    return made([out(f"results/{e.paper}/{e.artefact}.json") for e in CATALOG.values()])


def figures():
    return made([out(f"figures/{e.paper}/{e.figure_file}.png") for e in CATALOG.values()
                 if e.cfg.experiment.figure is not None and runnable(e)])


def preprocess_options(wildcards):
    return preprocess_params(wildcards.dataset)


def data_outputs():
    return [processed(name) for name in USABLE_DATA]


def all_outputs():
    return [*made([out("results/report/index.html")]), *records(), *figures(), *data_outputs()]


def remove_stale_temporaries():
    """Delete leftovers of atomic writes (``.<name>.<random>.tmp``) under this scale's outputs."""
    for top in (out("results"), out("figures"), "data/processed"):
        root = Path(top)
        if root.is_dir():
            for p in root.rglob(".*.tmp"):
                p.unlink(missing_ok=True)
