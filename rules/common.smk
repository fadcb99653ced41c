# Shared helpers: the catalog, data availability, output locations and input functions.
import difflib
import json
import logging
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger
from snakemake.utils import validate


def check_config(config, schema_path):
    """Stop at once on a workflow config key or value the schema does not know, naming it and
    the closest known one (``--config scael=smoke`` must not start the paper-scale run);
    then Snakemake's own validation against the schema (types, defaults)."""
    props = yaml.safe_load(Path(schema_path).read_text())["properties"]
    for key, value in config.items():
        if key not in props:
            near = difflib.get_close_matches(str(key), list(props), n=1, cutoff=0.5)
            raise WorkflowError(f"unknown config key {key!r}" + (f": did you mean {near[0]!r}?" if near else "")
                                + f" (known keys: {', '.join(props)}; rules/schemas/config.schema.yaml)")
        allowed = props[key].get("enum")
        if allowed is not None and value not in allowed:
            near = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1, cutoff=0.5)
            raise WorkflowError(f"config key {key!r}: unknown value {value!r}"
                                + (f": did you mean {near[0]!r}?" if near else "")
                                + f" (known: {', '.join(map(str, allowed))})")


from rankrepro.pipeline.invocation import MetadataNotes

# Snakemake's notes on its own metadata (not committed): one note, not one per committed file
logger.addFilter(MetadataNotes())

# before anything slow: a typo in --config stops here, in about a second
check_config(config, Path(workflow.basedir) / "rules" / "schemas" / "config.schema.yaml")
validate(config, "schemas/config.schema.yaml")


from rankrepro.data.fetch import availability
from rankrepro.data.preprocess import preprocess_params
from rankrepro.data.registry import DATASETS
from rankrepro.data.status import data_status
from rankrepro.files import WriteFailed
from rankrepro.pipeline.catalog import catalog_jobs, catalog_key, default_cache_dir, load_catalog, output_prefix, resolved_path, write_resolved
from rankrepro.pipeline.invocation import planning_only
from rankrepro.pipeline.freshness import stale_mark, sync as sync_fingerprints, write_stale_marks
from rankrepro.pipeline.cells import cell_fingerprint, claim_family, config_fingerprint, reread_of, reused_trials, twin_cells
from rankrepro.jobs import BACKENDS, DEFAULT_BACKEND, kept_array_builds
from rankrepro.pipeline.schedule import artefact_priority, cell_priority, load_seconds as load_cell_seconds

SCALE = str(config.get("scale", "paper"))
CONFIG_DIR = str(Path(workflow.basedir) / "config")
# paper-scale outputs are the committed ones; any other scale writes under runs/<scale>/
PREFIX = output_prefix(SCALE)
# validated once and kept (~/.cache/rankrepro, or $RANKREPRO_CACHE_DIR) while the configs, the
# package's code and the library versions stay the same: ~10 s saved at each start
# (composed in as many processes as the workflow has cores when it is not kept; a run through an
# executor's profile gives --jobs, not --cores: the CPUs this process may use)
try:
    _CATALOG_JOBS = int(workflow.cores or 1)
except WorkflowError:
    _CATALOG_JOBS = catalog_jobs()
CATALOG = load_catalog(SCALE, config_dir=CONFIG_DIR, cache_dir=default_cache_dir(), jobs=_CATALOG_JOBS)
# a run that only plans or describes (-n, --report, --lint, --summary, --dag, ...) writes nothing
# under results/ or figures/: no resolved config, no fingerprint file removed (only file times are
# aligned, below); what a real run would write or rerun besides the plan is said in one line
PLANNING = planning_only(sys.argv[1:])
# each experiment resolved once: the jobs read results/<paper>/<artefact>.config.yaml instead
# of composing the configs again (rewritten only when it changes)
try:
    _UNWRITTEN = [_exp.name for _exp in CATALOG.values()
                  if (write_resolved(_exp, resolved_path(_exp.name, SCALE), dry=PLANNING is not None))
                  and PLANNING is not None]
except WriteFailed as _e:  # a full disk, a read-only folder: one line naming the file, no partial file left
    raise WorkflowError(str(_e)) from None
# runtime option: run each artefact's cells in one job (saves ~2 s of start-up per cell;
# `make smoke` uses it), instead of one job per sweep cell
BATCH = str(config.get("batch_cells", False)).lower() in ("1", "true", "yes", "paper")
# batch_cells=paper (`make smoke`): one job per paper runs its cells and writes its records and
# figures (the summarise_<paper> rules of rules/experiments.smk), ~1 s of start-up and imports saved per
# artefact, for a machine of its own (on a cluster, batch_cells=true spreads the artefacts)
BATCH_PAPERS = str(config.get("batch_cells", False)).lower() == "paper"
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
# the arena's families (config/arena/): each compares the cells of its experiments
from rankrepro.report.arena import list_arenas, load_arena


def _families():
    """Every family of config/arena/, checked against the catalog; a family none of whose
    experiments is in the catalog (a workflow copied with some experiments only) is left out."""
    out = {}
    for f in list_arenas(CONFIG_DIR):
        arena = load_arena(f, CONFIG_DIR)
        if any(n in CATALOG for n in arena.experiments):
            out[f] = load_arena(f, CONFIG_DIR, list(CATALOG))
    return out


ARENAS = _families()
# batch_cells=paper: a family whose experiments are all one paper's is compared in that paper's
# job (rules/experiments.smk), not by rule arena_comparison (family -> paper)
FOLDED = {f: CATALOG[a.experiments[0]].paper for f, a in ARENAS.items()
          if BATCH_PAPERS and len({CATALOG[n].paper for n in a.experiments}) == 1}


# decided once: the cells another experiment computes exactly, on the same data (the arena's
# experiments repeat cells of the papers' own); their jobs copy the twin's results
TWINS = {} if BATCH else twin_cells(CATALOG, {n: s.used for n, s in DATA_STATUS.items() if s.runnable})


# reruns follow content, not file times (a fresh clone has neither Snakemake's metadata nor
# meaningful times): a cell whose fingerprint file no longer matches loses it (and reruns),
# current outputs are dated now, not before their inputs.  Skipped under --config force=true.
FORCE = str(config.get("force", False)).lower() in ("1", "true", "yes")
# `snakemake --lint` only reads the workflow: it must not remove a stale cell's fingerprint
LINTING = any(a == "--lint" or a.startswith("--lint=") for a in sys.argv[1:])
# Only the run that plans the jobs aligns the files, once, before any job.  A job that parses the
# workflow again (each job of a cluster executor: --mode remote) must not: it would re-date the
# outputs of jobs done meanwhile while other jobs run, and remove the fingerprint file of a cell
# whose job is writing its files at that moment.
def _first(names, n=3):
    return f" ({', '.join(names[:n])}{', ...' if len(names) > n else ''})" if names else ""


# A dry run (PLANNING) removes nothing: a stale cell keeps its fingerprint file and is planned
# through an extra input, a mark under .snakemake/ newer than its outputs (DRY_STALE,
# freshness.stale_mark), as the real run, which removes the fingerprint file, plans it.
DRY_STALE = set()
if not FORCE and not LINTING and workflow.is_main_process:
    sync_fingerprints(CATALOG, {n: s.used for n, s in DATA_STATUS.items() if s.runnable}, prefix=PREFIX,
                      batch=BATCH, comparisons={f: (a.experiments, a.text) for f, a in ARENAS.items()},
                      remove=PLANNING is None, kept=DRY_STALE)
    if PLANNING is not None:
        write_stale_marks(DRY_STALE)
if PLANNING is not None and (DRY_STALE or _UNWRITTEN):
    logger.warning(f"{PLANNING}: nothing written under {PREFIX or ''}results/ or figures/ (a real run first "
                   f"removes the fingerprint files of the {len(DRY_STALE)} stale cell(s) planned here by their "
                   f"mark under .snakemake/{_first(sorted('/'.join(c) for c in DRY_STALE))}, and rewrites {len(_UNWRITTEN)} resolved config(s)"
                   + _first(_UNWRITTEN) + ")")


def _record(path):
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def kept_records():
    """The artefacts whose data cannot be had here but whose record is kept as it is (name ->
    why), instead of being aggregated again: an absent data set never replaces a reproduced
    record (nor its table and figure) with a not-run one.  A not-run record is kept too while
    it was written from the same config (rewriting it would only change its commit and
    machine), unless force=true."""
    kept = {}
    for name, exp in CATALOG.items():
        status = DATA_STATUS[name]
        if status.runnable:
            continue
        rec = _record(f"{PREFIX}results/{exp.paper}/{exp.artefact}.json")
        if rec is None:
            continue
        if rec.get("status") == "ran":
            kept[name] = (f"could not be rerun here ({status.reason}); its record (table, figure) "
                          f"made by commit {str(rec.get('git_commit'))[:10]} is kept unchanged")
        elif not FORCE and rec.get("config_fingerprint") == config_fingerprint(exp):
            kept[name] = f"not run ({status.reason}); its not-run record is current and kept"
    return kept


# decided once, before any job: these records (and figures) are inputs of the report, not
# outputs of any job (the aggregate and figure rules do not match them, see kept_constraint)
KEPT = kept_records()


# batch_cells=paper (`make smoke`): the artefacts whose cells, record or figure an edit changed
# (name -> "cells", "record" or "pending"; pipeline/batchcache.py); a paper's job is planned for
# these only, and none when all are current (a second `make smoke` plans nothing).  None: every
# artefact (another mode, or force=true).
STALE = None
if BATCH_PAPERS and not FORCE and not LINTING:
    from rankrepro.pipeline.batchcache import plan as _batch_plan
    from rankrepro.pipeline.freshness import data_identity

    STALE = _batch_plan(CATALOG, {n: data_identity(DATA_STATUS[n].used) for n, e in CATALOG.items()
                                  if DATA_STATUS[n].runnable and n not in KEPT}, prefix=PREFIX)


def _say_kept():
    by_reason = {}
    for name in KEPT:
        if name in CATALOG and "could not be rerun" in KEPT[name]:
            by_reason.setdefault(DATA_STATUS[name].reason, []).append(name)
    if by_reason:
        logger.warning("Not rerun here, their data being absent (rankrepro data-status, docs/data.md); their "
                       "records, tables and figures are kept unchanged:\n"
                       + "\n".join(f"  {', '.join(names)}: {why}" for why, names in by_reason.items()))


_say_kept()


def kept_constraint(paths):
    """A constraint for a rule's {paper} wildcard that no output ``<paper>/<name>.<ext>`` of
    ``paths`` matches (a rule-level wildcard constraint: the rule cannot make them)."""
    if not paths:
        return r"[A-Za-z0-9_]+"
    return r"(?!(?:" + "|".join(re.escape(p) for p in sorted(paths)) + r")\.)[A-Za-z0-9_]+"


KEPT_RECORDS = kept_constraint([n for n in KEPT])
KEPT_FIGURES = kept_constraint([f"{CATALOG[n].paper}/{CATALOG[n].figure_file}" for n in KEPT
                                if CATALOG[n].figure_file is not None])
if BATCH:
    # one job per paper makes its records and figures (rules/experiments.smk: summarise_<paper>)
    KEPT_RECORDS = KEPT_FIGURES = "(?!)"
# the papers whose artefacts' cells rule run_all_cells runs (none when each paper's job runs them)
CELL_BATCHES = "(?!)" if BATCH_PAPERS else r"[A-Za-z0-9_]+"


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
    return cells_of(experiment_of(wildcards))


def cells_of(exp):
    if not runnable(exp):
        return []
    if BATCH:
        return [out(f"results/{exp.paper}/{exp.artefact}/all_cells.parquet")]
    # the fingerprint files too: a cell whose fingerprint was removed (stale) is rerun
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{c.id}.{ext}") for c in exp.all_cells
            for ext in ("parquet", "fingerprint")]


def sibling_cell_files(wildcards):
    """The cell files of the other experiments of the claim family (experiment.claim_family:
    the five papers' configs name their paper) that run here: a claim's verdict is adjusted
    over its family (Holm, claims/testing.py), so it depends on their cells."""
    return siblings_of(experiment_of(wildcards))


def siblings_of(exp):
    fam = claim_family(exp)
    files = []
    for other in CATALOG.values():
        if claim_family(other) != fam or other.name == exp.name or not runnable(other) or other.name in KEPT:
            continue
        if BATCH:
            files.append(out(f"results/{other.paper}/{other.artefact}/all_cells.parquet"))
        else:
            files += [out(f"results/{other.paper}/{other.artefact}/cells/{c.id}.parquet") for c in other.cells]
    return files


def cell_data(wildcards):
    used = DATA_STATUS[f"{wildcards.paper}/{wildcards.artefact}"].used
    return [processed(used)] if used else []


CELL_SECONDS = load_cell_seconds(Path(workflow.basedir) / "rules" / "cell_seconds.json")


# cell packs (rules/experiments.smk): the cells of a few measured seconds each, several to a job
PACKED = (not BATCH and not FORCE
          and str(config.get("cell_packs", True)).lower() not in ("0", "false", "no"))


def _packs():
    from rankrepro.pipeline.schedule import cell_packs, pack_priority

    found = []
    for name, exp in CATALOG.items():
        if not runnable(exp) or name in KEPT:
            continue
        copies = {c: out(f"results/{t[0]}/cells/{t[1]}.parquet") for (n, c), t in TWINS.items() if n == name}
        for k, cells in enumerate(cell_packs(exp, CELL_SECONDS, copies=copies)):
            found.append({"experiment": name, "cells": cells, "twins": {c: copies[c] for c in cells if c in copies},
                          "rule": re.sub(r"\W", "_", f"cells_{exp.paper}_{exp.artefact}_{k + 1}"),
                          "priority": pack_priority(exp, cells, CELL_SECONDS)})
    return found


PACKS = _packs() if PACKED else []

def cell_priority_of(wildcards):
    return cell_priority(experiment_of(wildcards), wildcards.cell, CELL_SECONDS)


def artefact_priority_of(wildcards):
    return artefact_priority(experiment_of(wildcards), CELL_SECONDS)


def cell_reuse(wildcards):
    """The main cell's results, for a sensitivity cell that only runs more trials."""
    exp = experiment_of(wildcards)
    hit = reused_trials(exp, exp.cell(wildcards.cell))
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{hit[0]}.parquet")] if hit else []



def cell_reread(wildcards):
    """The main cell's results, for a cell that reads its fits under other prediction settings:
    the main cell's job computes it (pipeline/handoff.py)."""
    exp = experiment_of(wildcards)
    base = reread_of(exp, exp.cell(wildcards.cell))
    return [out(f"results/{exp.paper}/{exp.artefact}/cells/{base}.parquet")] if base else []


def cell_twin(wildcards):
    """The twin's results, for a cell another experiment computes exactly (pipeline.cells.twin_cells)."""
    hit = TWINS.get((f"{wildcards.paper}/{wildcards.artefact}", wildcards.cell))
    return [out(f"results/{hit[0]}/cells/{hit[1]}.parquet")] if hit else []


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
    # a kept record's committed figure too, when there is one
    return made([out(f"figures/{e.paper}/{e.figure_file}.png") for e in CATALOG.values()
                 if e.cfg.experiment.figure is not None and runnable(e)]
                + [p for e in CATALOG.values() if e.name in KEPT and e.figure_file is not None
                   and Path(p := out(f"figures/{e.paper}/{e.figure_file}.png")).is_file()])


def preprocess_options(wildcards):
    return preprocess_params(wildcards.dataset)


def data_outputs():
    return [processed(name) for name in USABLE_DATA]


def kernel_sources(wildcards=None):
    """The package's modules that use Numba (the kernels): an edit compiles them again."""
    import rankrepro

    return sorted(str(p) for p in Path(rankrepro.__file__).parent.rglob("*.py")
                  if "__pycache__" not in p.parts and re.search(r"^\s*(?:from|import) numba\b", p.read_text(), re.M))


def kept_array_params(wildcards=None):
    """[experiment, builder, seed, dataset params] of the experiments whose builder keeps
    arrays beside their data (jobs.kept_array_builds): a change reruns rule keep_arrays."""
    return kept_array_builds(CATALOG, DATA_STATUS)


def kept_array_data(wildcards=None):
    return {b[0]: processed(DATA_STATUS[b[0]].used) for b in kept_array_params()}


def kept_array_inputs(wildcards=None):
    return sorted(set(kept_array_data().values()))


def all_outputs():
    # arena_outputs: the arena's comparisons (rules/arena.smk)
    return [*made([out("results/report/index.html")]), *records(), *figures(), *arena_outputs(), *data_outputs()]


def remove_stale_temporaries():
    """Delete leftovers of the project's own atomic writes under this scale's outputs, nothing
    else, and nothing while a `rankrepro run` writes there (pipeline.outlock)."""
    from rankrepro.pipeline.outlock import remove_own_temporaries

    remove_own_temporaries((out("results"), out("figures"), "data/processed"), root=PREFIX or ".")


# ---- the arena (rules/arena.smk): its families and their inputs


def arena_made_here(family):
    """A family is compared when every member runs here (none kept for absent data)."""
    return all(runnable(CATALOG[n]) and n not in KEPT for n in ARENAS[family].experiments)


def arena_cells(wildcards):
    files = []
    for name in ARENAS[wildcards.family].experiments:
        exp = CATALOG[name]
        if BATCH:
            files.append(out(f"results/{exp.paper}/{exp.artefact}/all_cells.parquet"))
        else:
            files += [out(f"results/{exp.paper}/{exp.artefact}/cells/{c.id}.parquet") for c in exp.cells]
    return files


def arena_outputs():
    return made([p for f in ARENAS if arena_made_here(f)
                 for p in (out(f"results/arena/comparison/{f}.json"), out(f"figures/arena/comparison/cd_{f}.png"))])


# ---- batch mode (rules/experiments.smk: summarise_<paper>)


def summarised(exp):
    """What job_summarise is told of one artefact (and makes of it)."""
    rec = {"experiment": exp.name, "status": vars(DATA_STATUS[exp.name]),
           "cells": [p for p in cells_of(exp) if p.endswith(".parquet")],
           "siblings": siblings_of(exp) if runnable(exp) else [],
           **{k: out(f"results/{exp.paper}/{exp.artefact}.{k}") for k in ("csv", "md", "json")}}
    if exp.cfg.experiment.figure is not None and runnable(exp):
        rec.update({k: out(f"figures/{exp.paper}/{exp.figure_file}.{k}") for k in ("png", "pdf")})
    return rec


def batch_member(exp):
    """Whether a paper's job (batch_cells=paper) handles this artefact: one whose data are absent
    (its not-run record), or one an edit changed (STALE)."""
    return exp.name not in KEPT and (STALE is None or not runnable(exp) or exp.name in STALE)


def comparison_current(family):
    """Whether an arena family's comparison was made from its experiments' current cells
    (none of them in STALE) and from its family file as it is."""
    if STALE is None or any(n in STALE for n in ARENAS[family].experiments):
        return False
    paths = [out(f"results/arena/comparison/{family}.{k}") for k in ("json", "md", "csv")] \
        + [out(f"figures/arena/comparison/cd_{family}.{k}") for k in ("png", "pdf")]
    rec = _record(paths[0])
    return all(Path(p).is_file() for p in paths) and isinstance(rec, dict) and rec.get("config") == ARENAS[family].text


def write_plan(paper, members, compared):
    """An input of a paper's job written at parse time when the job has work: newer than its
    outputs, the job runs even when neither a file time nor a parameter moved (e.g. a learner's
    code was edited: its cells' fingerprints changed)."""
    from rankrepro.files import write_text

    path = out(f"logs/{paper}.plan.json")
    write_text(path, json.dumps({"artefacts": {e.name: (STALE or {}).get(e.name, "all") for e in members},
                                 "comparisons": compared}, indent=1, sort_keys=True) + "\n")
    return path


def batched_runs(members):
    """The artefacts whose cells a paper's job runs (batch_cells=paper): each one's all-cells file and data."""
    if not BATCH_PAPERS:
        return []
    return [{"experiment": e.name, "output": out(f"results/{e.paper}/{e.artefact}/all_cells.parquet"),
             "data": [processed(DATA_STATUS[e.name].used)] if DATA_STATUS[e.name].used else []}
            for e in members if runnable(e) and (STALE is None or STALE.get(e.name) == "cells")]
