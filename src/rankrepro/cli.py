"""The rankrepro command line (the workflow itself is plain Snakemake)."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import functools
import re
import sys
from pathlib import Path

DESCRIPTION = """\
rankrepro: regenerate the tables and figures of five online-ranking papers.

The whole pipeline is the Snakemake workflow (make reproduce, snakemake --cores N);
this command runs one experiment by hand, lists the catalog and manages the data."""

EPILOG = """\
examples:
  rankrepro experiments
  rankrepro run harrington2003/table1                # smoke scale -> runs/cli/smoke/
  rankrepro run harrington2003/table1 algorithms.oap_bpm.params.N=50 \\
                'algorithms.oap_bpm.grid.tau=[0.05,0.3,0.6,0.9]'
  rankrepro run crammer_singer2005/fig6 experiment.n_trials=10 --scale paper --jobs 2
  rankrepro run harrington2003/table1 -m algorithms.oap_bpm.params.tau=0.05,0.3,0.6,0.9  # its cells
  rankrepro run arena/online_synthetic '~algorithms.oap_bpm' --cfg job    # print, do not run
  rankrepro arena online                  # the online learners on every data set, compared
  rankrepro data-status --no-probe
  PYTHONPATH=examples/own_learner rankrepro check-learner margin_prank.MarginPRank"""


class CliError(Exception):
    """An error the user can fix: printed as one line, no traceback."""


def _families() -> str:
    """The arena families, config/arena/<family>.yaml (standard library only: the help is fast)."""
    try:
        from .config_files import find_config_dir

        names = sorted(p.stem for p in (find_config_dir() / "arena").glob("*.yaml"))
    except Exception:  # noqa: BLE001 - no config folder here: the help still prints
        names = []
    return ", ".join(names) if names else "none found: no config/arena/ folder"


def _hydra_options(p: argparse.ArgumentParser) -> None:
    """Hydra's own options where a Hydra user reaches for them."""
    p.add_argument("--cfg", choices=["job"], default=None,
                   help="print the composed config (Hydra's --cfg job: interpolations as written) and exit "
                        "without running")
    p.add_argument("--resolve", action="store_true",
                   help="with --cfg job: print the resolved, checked config instead, the file a run writes "
                        "(results/<paper>/<artefact>.config.yaml)")
    p.add_argument("-m", "--multirun", action="store_true",
                   help="sweep comma-separated values (algorithms.<key>.params.<p>=a,b, or choice(...) / "
                        "range(...)) as cells of one experiment: they become algorithms.<key>.grid.<p>=[a,b]")


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    ap = argparse.ArgumentParser(prog="rankrepro", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=f"rankrepro {__version__}")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    r = sub.add_parser(
        "run", help="run one experiment (Hydra-style overrides key=value), write its table, record and figure",
        description="Run every cell of one experiment, then write its summary table (CSV, Markdown), its\n"
                    "record (JSON), its figure and a one-artefact HTML report under OUT.  Overrides are\n"
                    "Hydra's (dotted keys of the experiment's resolved config, e.g. experiment.n_trials=3)\n"
                    "and are validated like the configs: a wrong key stops the run before any trial.\n"
                    "The scale's caps apply after the overrides (smoke: at most 2 trials of 400 rounds).\n"
                    "Hydra's syntax: +key=value adds a key, ~key removes one, -m sweeps key=a,b (an\n"
                    "algorithm's params, run as its grid: cells of this one experiment), --cfg job prints.\n"
                    "A cell already made with the same fingerprint (config, code, data) is reused, not computed:\n"
                    "from OUT (a previous run), else copied from the workflow's outputs of the scale (the\n"
                    "committed results/ at paper scale, runs/<scale>/ otherwise); the log says how many and from where.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  rankrepro run crammer_singer2005/fig6 experiment.n_trials=10 --scale paper --jobs 2\n"
               "  rankrepro run harrington2003/table1 -m algorithms.oap_bpm.params.tau=0.05,0.3,0.6,0.9\n"
               "  rankrepro run arena/online_synthetic '~algorithms.oap_bpm' --cfg job --resolve")
    r.add_argument("experiment", help="<paper>/<artefact>, as listed by `rankrepro experiments`")
    r.add_argument("overrides", nargs="*", metavar="key=value",
                   help="config overrides (Hydra syntax: key=value, +key=value, ~key)")
    r.add_argument("--scale", default="smoke",
                   help="size caps from config/scale/ (default: smoke, a quick run; paper: the paper's sizes)")
    r.add_argument("--jobs", "-j", type=int, default=1, help="trials run in parallel (default: 1)")
    r.add_argument("--out", default=None,
                   help="output folder (default: runs/cli/<scale>; never the committed results/)")
    _hydra_options(r)
    s = sub.add_parser(
        "data-status", help="each data set: verified, in the mirror, downloadable, absent or replaced",
        description="One line per data set the experiments use: verified in data/raw/, in the mirror\n"
                    "($RANKREPRO_DATA_MIRROR), downloadable from its home page, absent, or replaced by a\n"
                    "substitute (and which), with how to obtain it.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  rankrepro data-status --no-probe")
    s.add_argument("--no-probe", action="store_true", help="do not try to reach home pages")
    f = sub.add_parser(
        "fetch", help="fetch and verify data sets into data/raw/",
        description="Copy each named data set from the mirror ($RANKREPRO_DATA_MIRROR) or download it from its\n"
                    "home page into data/raw/<name>/, and verify its checksums; exits 1 when one cannot be had.\n"
                    "The names are those of `rankrepro data-status`.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    f.add_argument("names", nargs="+", metavar="NAME", help="data sets, as named by `rankrepro data-status`")
    p = sub.add_parser(
        "preprocess", help="build data/processed/<name>/data.npz",
        description="Build the processed arrays every experiment reads, data/processed/<name>/data.npz,\n"
                    "from the verified raw files in data/raw/<name>/ (`rankrepro fetch` first).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("names", nargs="+", metavar="NAME", help="data sets, as named by `rankrepro data-status`")
    v = sub.add_parser(
        "verify", help="recompute committed cells at paper scale and compare them bit for bit with the committed ones",
        description="Recompute committed cells at paper scale into runs/verify/ and compare them with the\n"
                    "committed results/<paper>/<artefact>/cells/*.parquet: the same rows and every value bit for\n"
                    "bit, except the timing metrics (rankrepro.metrics.TIMING_METRICS).  Prints a table and exits 1\n"
                    "on any difference.  Without EXPERIMENT or --all: the cheapest cell of every artefact that\n"
                    "can run here (the cells' CPU seconds are printed as each is checked).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  rankrepro verify                                 # the sample (make verify)\n"
               "  rankrepro verify harrington2003/table1 --all     # every cell of one artefact\n"
               "  rankrepro verify --stale --jobs 2 --record       # after a code change: the cells it touched\n"
               "  rankrepro verify --all --jobs 2 --record         # everything; tell the committed files\n"
               "  rankrepro verify --records --jobs 2              # every record against its cells (make verify, first)")
    v.add_argument("experiments", nargs="*", metavar="EXPERIMENT", help="<paper>/<artefact> (default: all)")
    v.add_argument("--all", action="store_true", help="every committed cell, not the cheapest of each artefact")
    v.add_argument("--stale", action="store_true",
                   help="the cells whose fingerprint no longer matches the code and config (after a code change)")
    v.add_argument("--jobs", "-j", type=int, default=1, help="cells checked in parallel (default: 1)")
    v.add_argument("--records", action="store_true",
                   help="instead of recomputing cells: check every committed record against its cells (each cell's "
                        "sha256 against its fingerprint file and record; each record, table and Markdown aggregated "
                        "again from its cells and compared byte for byte); all of them, without recomputing a cell")
    v.add_argument("--record", action="store_true",
                   help="write what was verified into the records and refresh the identical cells' fingerprint "
                        "files (commit them)")
    c = sub.add_parser(
        "check-learner", help="run the conformance checks of a family on a learner class from anywhere",
        description="Import package.module.ClassName (its folder on PYTHONPATH, or installed) and run the checks\n"
                    "the package's own learners pass (rankrepro.conformance): the protocol's interface, inputs\n"
                    "unchanged, same seed same result, clone, pickling, parameters checked, bad input rejected, and\n"
                    "the protocol's calls on a tiny data set.  Prints each check with pass/fail and why; exits 1 on\n"
                    "any failure.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  PYTHONPATH=examples/own_learner rankrepro check-learner margin_prank.MarginPRank")
    c.add_argument("target", metavar="package.module.ClassName")
    c.add_argument("--family", choices=["online", "ranker", "gp", "coactive"], default=None,
                   help="the family whose checks run (default: the family of the class's base)")
    a = sub.add_parser(
        "arena", help="run a family's arena experiments and compare the learners over the data sets",
        description="Run every experiment of an arena family (config/arena/<family>.yaml) with the same overrides,\n"
                    "then compare the learners over the data sets (Friedman, Nemenyi, Holm; a critical-difference\n"
                    "diagram): results/arena/comparison/<family>.md under --out, and a report of them all.\n"
                    "The family's entry (enter:) is checked before any cell runs; cells already made are reused\n"
                    "as by `run` (at paper scale the committed results/arena/: a learner added computes only its own).\n"
                    f"The families: {_families()}.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example (examples/own_learner/margin_prank.py, an online learner of one's own):\n"
               "  PYTHONPATH=examples/own_learner rankrepro arena online \\\n"
               "      +algorithms.mine._target_=margin_prank.MarginPRank +algorithms.mine.label=Mine")
    a.add_argument("family", help=f"a file config/arena/<family>.yaml ({_families()})")
    a.add_argument("overrides", nargs="*", metavar="key=value",
                   help="config overrides (Hydra syntax) applied to every experiment of the family")
    a.add_argument("--scale", default="smoke", help="smoke (default) or paper")
    a.add_argument("--jobs", "-j", type=int, default=1, help="trials run in parallel (default: 1)")
    a.add_argument("--out", default=None, help="output root (default: runs/cli/<scale>)")
    _hydra_options(a)
    e = sub.add_parser("experiments", help="list the experiment catalog",
                       description="One line per experiment of config/experiment/: its name, cells, trials and data\n"
                                   "set at the scale given.",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="example:\n  rankrepro experiments")
    e.add_argument("--scale", default="paper", help="show the sizes at this scale (default: paper)")
    rp = sub.add_parser("report", help="the HTML report again from the records and figures on disk (make report)",
                        description="The report (results/report/index.html, or runs/<scale>/...) rendered again from\n"
                                    "the records and figures on disk: nothing is recomputed; a damaged or edited\n"
                                    "record is refused in one line naming its file.",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="example:\n  rankrepro report")
    rp.add_argument("--scale", default="paper", help="paper (default: results/) or another scale (runs/<scale>/)")
    _add_runfiles_export(sub)
    ap.set_defaults(_commands=dict(sub.choices))
    return ap


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line, overrides and options in any order (``run EXP -m key=a,b``: argparse
    alone leaves the overrides after an option unrecognised); an unknown option is reported with
    its command's usage (``rankrepro run: error: ...``), not the top level's."""
    ap = _parser()
    args, extra = ap.parse_known_args(argv)
    if extra:
        if hasattr(args, "overrides") and not any(e.startswith("-") for e in extra):
            args.overrides = [*args.overrides, *extra]
        else:
            args._commands.get(args.cmd, ap).error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _add_runfiles_export(sub) -> None:
    """``rankrepro runfiles`` and ``rankrepro export``: what the committed results give to other tools."""
    rf = sub.add_parser(
        "runfiles", help="TREC run files and per-query evaluation files of the committed LETOR cells",
        description="Rerun each trial of the committed LETOR cells (Elsas et al., the LETOR arena) from the\n"
                    "committed config and seeds, check that it gives the committed per-query MAP and NDCG@k bit\n"
                    "for bit, and write per cell, fold and trial a TREC run file, a trec_eval -q style evaluation\n"
                    "file and the fold's qrels under OUT/<paper>/<artefact>/ (rankrepro.report.runfiles).\n"
                    "Exits 1 when a trial does not give the committed values (nothing is written for it).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  rankrepro runfiles                                   # every LETOR cell (all of them recomputed: long)\n"
               "  rankrepro runfiles arena/letor_mq2008 --cells ranksvm --trials 0 --out /tmp/runs")
    rf.add_argument("experiments", nargs="*", metavar="EXPERIMENT", help="<paper>/<artefact> (default: every LETOR one)")
    rf.add_argument("--cells", nargs="+", default=None, help="only these cell ids")
    rf.add_argument("--trials", nargs="+", type=int, default=None, help="only these trials (letor: trial i is fold i + 1; letor_seeds: seed i, five folds)")
    rf.add_argument("--out", default="runs/runfiles", help="output folder (default: runs/runfiles)")
    rf.add_argument("--scale", default="paper",
                    help="the results of this scale (default: paper, the committed results/; else runs/<scale>/)")
    ex = sub.add_parser(
        "export", help="one long table per paper (CSV and parquet) from the committed cells, with a data dictionary",
        description="Write OUT/<paper>.csv.gz and OUT/<paper>.parquet: every value of the committed cells of the\n"
                    "paper's artefacts, one row per (artefact, cell, trial, metric, round), with the algorithm,\n"
                    "its grid values and the sensitivity choice of the cell; and OUT/DATA_DICTIONARY.md\n"
                    "(rankrepro.report.export).  Reads only what is committed; recomputes nothing.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  rankrepro export --out /tmp/export")
    ex.add_argument("only", nargs="*", metavar="PAPER[/ARTEFACT]", help="only these papers or artefacts (default: all)")
    ex.add_argument("--out", default="runs/export", help="output folder (default: runs/export)")
    ex.add_argument("--scale", default="paper",
                    help="the results of this scale (default: paper, the committed results/; else runs/<scale>/)")


# ------------------------------------------------------------------------------------
# "did you mean": config keys, experiment names, known values
# ------------------------------------------------------------------------------------
def _paths(node, prefix: str = "") -> list[str]:
    from omegaconf import DictConfig

    out = []
    if isinstance(node, DictConfig):
        for k in node.keys():
            p = f"{prefix}{k}"
            out.append(p)
            try:
                child = node._get_node(k)
            except Exception:  # noqa: BLE001 - a node we cannot read is simply not suggested
                continue
            out += _paths(child, p + ".")
    return out


def did_you_mean(err, name: str, scale: str) -> str:
    """A hint for a ConfigError: the closest known key, experiment, or value."""
    key = getattr(err, "key", "")
    msg = str(err).split(f"at key '{key}': ", 1)[-1]  # the message after the experiment and key
    # a value from a known list: "unknown ... 'prnk' ... (known: ['mcp', 'prank', ...])"
    m = re.search(r"'([^']+)'[^(]*\(known: \[?([^)\]]*)", msg)
    if m:
        known = [k.strip().strip("'\"") for k in m.group(2).split(",")]
        close = difflib.get_close_matches(m.group(1), known, n=1, cutoff=0.6)
        if close:
            return close[0]
    if key == "experiment" or "no file config/experiment" in msg:
        from .config_files import list_experiments

        close = difflib.get_close_matches(name, list_experiments(), n=1, cutoff=0.6)
        return close[0] if close else ""
    m = re.search(r"Could not find '(\w+)/([^']+)'", msg)
    if m:
        from .config_files import find_config_dir

        names = [p.stem for p in (find_config_dir() / m.group(1)).glob("*.yaml")]
        close = difflib.get_close_matches(m.group(2), names, n=1, cutoff=0.6)
        return f"{m.group(1)}={close[0]}" if close else ""
    # a key that does not exist (OmegaConf: "Key 'x' not in 'Cfg'" / "Key 'x' is not in struct")
    if not key or key == "defaults" or not re.search(r"Key '[^']+' (is )?not in", msg):
        return ""
    try:
        known = known_keys(name, scale)
    except Exception:  # noqa: BLE001 - no suggestion rather than a second error
        return ""
    if key in known:
        return ""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if close:
        return close[0]
    # a key given without its section (n_trails=3 for experiment.n_trials=3)
    leaf = key.rsplit(".", 1)[-1]
    by_leaf: dict[str, str] = {}
    for k in known:
        by_leaf.setdefault(k.rsplit(".", 1)[-1], k)
    close = difflib.get_close_matches(leaf, list(by_leaf), n=1, cutoff=0.75)
    if close:
        # keep what the user wrote up to the wrong part
        return by_leaf[close[0]]
    return ""


@functools.lru_cache(maxsize=8)
def known_keys(name: str, scale: str) -> list[str]:
    """Every dotted key of the experiment's config as composed without overrides; an
    algorithm's params and grid list all of its estimator's hyperparameters."""
    from .pipeline.catalog import load_experiment

    exp = load_experiment(name, scale)
    keys = _paths(exp.cfg)
    from .algorithms import ONLINE
    from .algorithms.coactive import COACTIVE
    from .algorithms.gp import GP
    from .algorithms.rankers import LISTS, RANKERS

    families = {**ONLINE, **RANKERS, **LISTS, **COACTIVE, **GP}
    for akey, a in exp.cfg.algorithms.items():
        cls = families.get(a.estimator)
        if cls is None:
            continue
        for p in set(cls._param_names()) - {"n_ranks", "seed"}:
            keys += [f"algorithms.{akey}.params.{p}", f"algorithms.{akey}.grid.{p}"]
    return sorted(set(keys))


# ------------------------------------------------------------------------------------
# rankrepro run
# ------------------------------------------------------------------------------------
_KEY = r"[A-Za-z_][\w.@/\[\]-]*"
#: key=value, +key=value, ++key=value, and Hydra's deletion ~key (or ~key=value: only if it has that value)
_OVERRIDE = re.compile(rf"^(~{_KEY}(=.*)?|\+{{0,2}}{_KEY}=.*)$", re.S)
#: an algorithm's hyperparameter: what a sweep may vary within one experiment (as the algorithm's grid)
_PARAM = re.compile(r"^\+{0,2}algorithms\.([A-Za-z0-9_]+)\.params\.([A-Za-z_]\w*)$")


def is_sweep(value: str) -> bool:
    """Whether an override's value is a Hydra sweep: a comma outside brackets, braces and quotes
    (a,b), or choice(...), range(...), glob(...)."""
    if re.match(r"\s*(choice|range|glob)\(", value):
        return True
    depth, quote, escaped = 0, None, False
    for ch in value:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            return True
    return False


def _sweep_refusal(o: str, multirun: bool) -> str:
    key, value = o.split("=", 1)
    m = _PARAM.match(key)
    if m is None:
        return (f"override '{o}' is a sweep (Hydra's multirun syntax), and '{key.lstrip('+')}' takes one value "
                f"per experiment: run once per value; only an algorithm's params sweep within one experiment, "
                f"as its grid (-m algorithms.<key>.params.<p>=a,b is ++algorithms.<key>.grid.<p>=[a,b]); "
                f"a value with a comma is quoted, {key}='a,b'")
    grid = f"++algorithms.{m.group(1)}.grid.{m.group(2)}=" + (
        f"[{value}]" if not re.match(r"\s*(choice|range|glob)\(", value) else "[...]")
    return (f"override '{o}' is a sweep (Hydra's multirun syntax): add -m to run its values as cells of this "
            f"experiment, or give the grid itself, '{grid}'")


def multirun_as_grid(overrides: list[str]) -> list[str]:
    """``-m``: each sweep of an algorithm's hyperparameter (``algorithms.<key>.params.<p>=a,b``,
    ``choice(a,b)``, ``range(1,4)``) becomes that algorithm's grid, ``algorithms.<key>.grid.<p>=[a,b]``:
    the sweep runs as cells of the one experiment (each cell's own fingerprint, table row and
    figure line), not as separate runs.  A sweep of any other key is refused with one line."""
    # an entry added on the command line is not Hydra's: its grid joins the entry ('+algorithms.<key>...')
    added = {m.group(1) for o in overrides if (m := re.match(r"^\+algorithms\.(\w+)(=|\._target_=)", o))}
    out = []
    for o in overrides:
        if o.startswith("~") or "=" not in o or not is_sweep(o.split("=", 1)[1]):
            out.append(o)
            continue
        m = _PARAM.match(o.split("=", 1)[0])
        if m is None:
            raise CliError(_sweep_refusal(o, multirun=True))
        from hydra.core.override_parser.overrides_parser import OverridesParser

        try:
            values = list(OverridesParser.create().parse_override(o).sweep_string_iterator())
        except Exception as e:  # noqa: BLE001 - Hydra's own words (e.g. glob needs a list of choices)
            raise CliError(f"override '{o}' cannot sweep: {str(e).splitlines()[0]}") from None
        plus = "+" if m.group(1) in added else "++"
        out.append(f"{plus}algorithms.{m.group(1)}.grid.{m.group(2)}=[{','.join(values)}]")
    return out


def precheck(name: str, overrides: list[str], scale: str) -> None:
    """The mistakes found without composing the config, with the standard library only (no
    Hydra, learners or numba imported): a malformed override, a sweep without -m, an unknown
    experiment or scale.  Raises :class:`CliError` worded as the catalog's ConfigError."""
    for o in overrides:
        if not _OVERRIDE.match(o):
            raise CliError(f"override '{o}' is not key=value, +key=value or ~key (e.g. experiment.n_trials=3)")
        if not o.startswith("~") and is_sweep(o.split("=", 1)[1]):
            raise CliError(_sweep_refusal(o, multirun=False))
    from .config_files import find_config_dir, list_experiments, list_scales

    root = find_config_dir()
    known = list_experiments(root)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        raise CliError(f"config error in experiment '{name}' at key 'experiment': no file config/experiment/"
                       f"{name}.yaml (known: {', '.join(known)})" + (f"; did you mean '{close[0]}'?" if close else ""))
    scales = list_scales(root)
    if scale not in scales:
        close = difflib.get_close_matches(scale, scales, n=1, cutoff=0.6)
        raise CliError(f"config error in experiment '{name}' at key 'scale': unknown scale '{scale}' "
                       f"(known: {', '.join(scales)})" + (f"; did you mean '{close[0]}'?" if close else ""))


@contextlib.contextmanager
def _holding(root: Path):
    """Hold the output folder for this run (pipeline.outlock); another run in it is a one-line error."""
    from .pipeline.outlock import FolderInUse, output_lock

    try:
        with output_lock(root):
            yield
    except FolderInUse as e:
        raise CliError(str(e)) from None


def _load(name: str, overrides: list[str], scale: str):
    """The experiment, composed and checked; a config error as one line with a "did you mean"."""
    from .pipeline.catalog import load_experiment
    from .pipeline.config_errors import ConfigError

    try:
        return load_experiment(name, scale, overrides=overrides)
    except ConfigError as e:
        if "does not support deletion" in str(e):  # '~experiment.figure': a key of the schema
            raise CliError(f"{e}: '~' removes an entry of a mapping (e.g. ~algorithms.<key>); a key every "
                           "experiment has is set instead (e.g. experiment.figure=null)") from None
        hint = did_you_mean(e, name, scale)
        raise CliError(str(e) + (f"; did you mean '{hint}'?" if hint else "")) from None


def show_config(name: str, overrides: list[str], scale: str = "smoke", resolve: bool = False,
                multirun: bool = False) -> str:
    """``--cfg job``: the experiment's config as YAML, checked as for a run but nothing run or
    written.  As Hydra composes it (interpolations as written, the scale's group as chosen), or
    with ``resolve`` the resolved, checked config a run writes to
    results/<paper>/<artefact>.config.yaml, byte for byte."""
    if multirun:
        overrides = multirun_as_grid(overrides)
    precheck(name, overrides, scale)
    exp = _load(name, overrides, scale)
    if resolve:
        return exp.to_yaml()
    from omegaconf import OmegaConf

    from .pipeline.catalog import composed_config

    return OmegaConf.to_yaml(composed_config(name, scale, overrides))


def run_experiment(name: str, overrides: list[str], scale: str = "smoke", jobs: int = 1,
                   out: str | Path | None = None, log=None, report: bool = True, loaded: dict | None = None,
                   multirun: bool = False, exp=None) -> dict:
    """Run one experiment's cells and write its outputs under ``out`` as the workflow lays
    them out (results/<paper>/<artefact>.{csv,md,json,config.yaml}, its cells, figures/);
    returns the artefact record.  A cell whose fingerprint matches one already made, in
    ``out`` or in the workflow's outputs of this scale (the committed results/ at paper scale),
    is taken, not computed (:mod:`rankrepro.pipeline.reuse`); every cell written gets its
    fingerprint file.  ``report``: also a report of this artefact alone; ``loaded``: a dict
    that receives the loaded experiment (key ``exp``), its cell files (``cells``) and where
    each cell came from (``plan``, a :class:`~rankrepro.pipeline.reuse.Plan`); ``multirun``:
    sweeps of an algorithm's params run as its grid (:func:`multirun_as_grid`); ``exp``: the
    experiment already loaded with these overrides (the arena loads its members first)."""
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    if multirun:
        overrides = multirun_as_grid(overrides)
    if exp is None:
        precheck(name, overrides, scale)  # before the heavy imports: a mistake here is reported in a second
    from .data.status import data_status
    from .io import write_parquet
    from .pipeline.catalog import write_resolved
    from .pipeline.names import OutsideRoot, output_path
    from .pipeline.runner import run_cell

    if exp is None:
        exp = _load(name, overrides, scale)
    st = data_status(exp.cfg.dataset.source)
    if not st.runnable:
        raise CliError(f"{name}: {st.reason}. {st.how_to_obtain}")
    data_path = None
    if st.used:
        data_path = f"data/processed/{st.used}/data.npz"
        if not Path(data_path).is_file():
            raise CliError(f"{name} needs the processed data set {st.used} ({data_path} is absent): "
                           f"run `make data` or `rankrepro fetch {st.used} && rankrepro preprocess {st.used}`")
        from .checkout import OutsideCheckout
        from .data.processed_check import ProcessedDataRefused, check_processed

        try:  # before any trial: in the checkout, and the very file its manifest names
            check_processed(data_path)
        except (OutsideCheckout, ProcessedDataRefused) as e:
            raise CliError(f"{name}: {e}") from None
    root = Path(out) if out is not None else Path("runs") / "cli" / scale
    # one run per output folder: a second run into it stops here, naming this one's pid
    with _holding(root):
        # every output, placed before anything runs: none may leave root (the catalog's name checks
        # make sure; this is the guard at the place that writes)
        try:
            res = {ext: output_path(root, "results", exp.paper, f"{exp.artefact}.{ext}")
                   for ext in ("config.yaml", "csv", "md", "json")}
            cell_paths = [output_path(root, "results", exp.paper, exp.artefact, "cells", f"{c.id}.parquet")
                          for c in exp.all_cells]
            png = (output_path(root, "figures", exp.paper, f"{exp.figure_file}.png")
                   if exp.cfg.experiment.figure is not None else None)
            report_html = output_path(root, "results", "report", "index.html")
        except OutsideRoot as e:
            raise CliError(f"{name}: {e}") from None
        from .pipeline import reuse
        from .pipeline.cells import reused_trials
        from .pipeline.freshness import data_identity, write_fingerprint

        # the cells already made with this fingerprint, here or in the workflow's outputs
        plan = reuse.plan(exp, data_identity(st.used), reuse.sources(exp, root))
        if loaded is not None:
            loaded.update(exp=exp, cells=[str(p) for p in cell_paths], plan=plan)
        write_resolved(exp, res["config.yaml"])
        log(f"{name} [{scale}]: {len(exp.all_cells)} cells"
            + (f", overrides {' '.join(overrides)}" if overrides else "") + f" -> {root}"
            + (f"; {len(plan.reused)} already made, {len(plan.computed)} to compute" if plan.reused else ""))
        for c, p in zip(exp.all_cells, cell_paths):
            if c.id in plan.reused:
                reuse.take(plan.reused[c.id][1], p)
                continue
            reuse.fingerprint_of(p).unlink(missing_ok=True)  # none until the new results are written
            # a sensitivity cell that only adds trials takes its main cell's (bit for bit theirs)
            hit = reused_trials(exp, c)
            kept = None
            if hit is not None:
                from .files import read_cell

                kept = read_cell(cell_paths[[x.id for x in exp.all_cells].index(hit[0])])
            df = run_cell(exp, c.id, n_jobs=jobs, progress=log, data_path=data_path, reuse=kept)
            write_parquet(df, p)
            write_fingerprint(exp, c.id, data_path, reuse.fingerprint_of(p))
        log(plan.summary(name, scale, len(exp.all_cells)))
        from .report.artefact import build_artefact

        rec = build_artefact(exp, cell_paths, res["csv"], res["md"], res["json"], data=vars(st))
        pngs = {}
        if png is not None:
            from .report.figures import build_figure

            build_figure(exp, res["csv"], png, png.with_suffix(".pdf"), res["json"])
            pngs[exp.name] = str(png)
        if not report:
            return rec
        from .report.html import build_report

        build_report([str(res["json"])], pngs, report_html, scale, roots=[root])
        return rec


def _resolve_without_cfg(args) -> None:
    if args.resolve and args.cfg is None:
        raise CliError("--resolve goes with --cfg job (print the resolved config without running)")


def _run(args) -> int:
    _resolve_without_cfg(args)
    if args.cfg == "job":
        print(show_config(args.experiment, list(args.overrides), args.scale, args.resolve, args.multirun), end="")
        return 0
    rec = run_experiment(args.experiment, list(args.overrides), args.scale, args.jobs, args.out,
                         multirun=args.multirun)
    root = Path(args.out) if args.out is not None else Path("runs") / "cli" / args.scale
    held = sum(c["verdict"] == "held" for c in rec["claims"])
    cmp_ = [t for t in rec["table"] if t["verdict"] in ("consistent", "differs")]
    print(f"{rec['name']} [{rec['scale']}]: {rec['size']}; published cells consistent "
          f"{sum(t['verdict'] == 'consistent' for t in cmp_)} / {len(cmp_)}, claims held {held} / {len(rec['claims'])}")
    print(f"table  {root / 'results' / rec['paper'] / (rec['artefact'] + '.md')}")
    print(f"report {root / 'results' / 'report' / 'index.html'}")
    return 0


def _load_arena(family: str):
    from .config_files import find_config_dir, list_experiments
    from .report.arena import ArenaError, load_arena

    root_cfg = find_config_dir()
    try:
        return load_arena(family, root_cfg, list_experiments(root_cfg))
    except ArenaError as e:
        raise CliError(str(e)) from None


def show_arena_config(family: str, overrides: list[str], scale: str = "smoke", resolve: bool = False,
                      multirun: bool = False) -> str:
    """``arena --cfg job``: the config of every experiment of the family (:func:`show_config`),
    one YAML document each, headed by its name."""
    return "---\n".join(f"# {name}\n" + show_config(name, overrides, scale, resolve, multirun)
                        for name in _load_arena(family).experiments)


def run_arena(family: str, overrides: list[str], scale: str = "smoke", jobs: int = 1,
              out: str | Path | None = None, log=None, multirun: bool = False) -> dict:
    """Run every experiment of an arena family with ``overrides`` (e.g. a learner of one's own
    added to each), then its comparison over the data sets; write them and a report of them all
    under ``out``.  Returns the comparison's record."""
    from .report.arena import ArenaError, build_comparison, comparison_paths

    arena = _load_arena(family)
    if multirun:
        overrides = multirun_as_grid(overrides)
    # every member loaded and the family's entry (enter:) checked before any cell runs: a
    # learner added without the setting that enters the comparison stops here, in seconds
    for name in arena.experiments:
        precheck(name, overrides, scale)
    loaded_exps = {name: _load(name, overrides, scale) for name in arena.experiments}
    from .report.arena import entering_cells

    try:
        entering_cells(arena, loaded_exps)
    except ArenaError as e:
        raise CliError(str(e)) from None
    root = Path(out) if out is not None else Path("runs") / "cli" / scale
    with _holding(root):  # the whole family, each experiment and the comparison, in one hold
        recs, exps, cells = [], {}, {}
        for name in arena.experiments:
            loaded: dict = {}
            recs.append(run_experiment(name, overrides, scale, jobs, root, log, report=False, loaded=loaded,
                                       exp=loaded_exps[name]))
            exps[name], cells[name] = loaded["exp"], loaded["cells"]
        paths = comparison_paths(root, family)
        try:
            rec = build_comparison(arena, exps, cells, paths["json"], paths["md"], paths["csv"], paths["png"])
        except ArenaError as e:
            raise CliError(str(e)) from None
        from .report.html import build_report

        jsons = [str(root / "results" / r["paper"] / f"{r['artefact']}.json") for r in recs] + [str(paths["json"])]
        pngs = {f"{r['paper']}/{r['figure_file']}": str(root / "figures" / r["paper"] / f"{r['figure_file']}.png")
                for r in recs if r.get("figure_file")}
        build_report(jsons, pngs, root / "results" / "report" / "index.html", scale, roots=[root])
        return rec


def _arena(args) -> int:
    _resolve_without_cfg(args)
    if args.cfg == "job":
        print(show_arena_config(args.family, list(args.overrides), args.scale, args.resolve, args.multirun), end="")
        return 0
    rec = run_arena(args.family, list(args.overrides), args.scale, args.jobs, args.out, multirun=args.multirun)
    root = Path(args.out) if args.out is not None else Path("runs") / "cli" / args.scale
    best = rec["learners"][0]
    f = rec["friedman"]
    print(f"{rec['name']} [{rec['scale']}]: {f['k']} learners over {f['n']} blocks; best average rank "
          f"{best['label']} ({best['avg_rank']:.2f}); Friedman p = {f['p_chi2']:.3g}, CD = {rec['nemenyi']['cd']:.2f}")
    print(f"table  {root / 'results' / 'arena' / 'comparison' / (args.family + '.md')}")
    print(f"report {root / 'results' / 'report' / 'index.html'}")
    return 0


def _verify(args) -> int:
    from .config_files import find_config_dir, list_experiments
    from .pipeline.catalog import default_cache_dir, load_catalog
    from .pipeline.verify import run

    known = list_experiments(find_config_dir())
    for name in args.experiments:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            raise CliError(f"unknown experiment {name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    if args.record:  # a verification stamp names the exact code it ran: refused from a modified tree
        from .provenance import git_commit

        if git_commit().endswith("+dirty"):
            raise CliError("verify --record stamps the records with the commit the cells were verified at, and "
                           "tracked sources differ from it (git status): commit or stash them first")
    catalog = load_catalog("paper", cache_dir=default_cache_dir())
    if args.records:
        from .records_check import check

        return 1 if check(catalog, jobs=args.jobs, names=args.experiments or None) else 0
    checks = run(catalog, args.experiments or None, every=args.all, jobs=args.jobs, record=args.record,
                 stale=args.stale)
    return 0 if all(c.identical for c in checks) else 1


def _check_learner(args) -> int:
    from .conformance import Check, run_checks
    from .pipeline.targets import TargetError, import_target

    try:
        cls = import_target(args.target)
        checks = run_checks(cls, args.family)
    except TargetError as e:
        checks = [Check("import", False, str(e))]
    width = max(len(c.name) for c in checks)
    for c in checks:
        print(f"{'PASS' if c.passed else 'FAIL'}  {c.name:{width}s}  {c.why}")
    failed = sum(not c.passed for c in checks)
    print(f"{args.target}: {len(checks) - failed} of {len(checks)} checks passed")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    from .checkout import OutsideCheckout
    from .data.processed_check import ProcessedDataRefused
    from .files import DamagedFile, ReadFailed, WriteFailed

    from .pipeline.learner_checks import TrialFailed

    args = parse_args(argv)
    try:
        return _dispatch(args)
    except (CliError, FileNotFoundError) as e:  # a config folder or data file not found: one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 2
    except TrialFailed as e:  # a learner's error or unusable output, naming the cell and trial: one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 1
    except (DamagedFile, WriteFailed, ReadFailed, OutsideCheckout, ProcessedDataRefused) as e:
        # a project file damaged or leading out of the checkout, a read or write refused (a full disk): one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rankrepro: interrupted", file=sys.stderr)
        return 130


def _dispatch(args) -> int:
    if args.cmd == "run":
        return _run(args)
    if args.cmd == "check-learner":
        return _check_learner(args)
    if args.cmd == "arena":
        return _arena(args)
    from .data.fetch import ChecksumError, DataUnavailable, fetch, status_table

    if args.cmd == "data-status":
        print(status_table(probe=not args.no_probe))
        from .data.status import originals_table

        if extra := originals_table(probe=not args.no_probe):  # what each absent original would change
            print(extra)
    elif args.cmd == "fetch":
        rc = 0
        for n in args.names:
            try:
                print(fetch(n))
            except (DataUnavailable, ChecksumError, KeyError) as e:
                print(f"rankrepro: error: {e}", file=sys.stderr)
                rc = 1
        return rc
    elif args.cmd == "preprocess":
        from .data.preprocess import preprocess

        for n in args.names:
            try:
                print(preprocess(n))
            except (ChecksumError, KeyError) as e:
                print(f"rankrepro: error: {e}", file=sys.stderr)
                return 1
    elif args.cmd == "verify":
        return _verify(args)
    elif args.cmd == "report":
        from .report.html import rebuild_report

        print(rebuild_report(args.scale))
    elif args.cmd == "runfiles":
        from .report.runfiles import write_runfiles

        done = write_runfiles(args.experiments or None, args.out, cells=args.cells, trials=args.trials,
                              scale=args.scale)
        return 1 if any(w.problem for w in done) else 0
    elif args.cmd == "export":
        from .pipeline.catalog import output_prefix
        from .report.export import export

        for path in export(args.out, root=output_prefix(args.scale) or ".", only=args.only or None):
            print(path)
    elif args.cmd == "experiments":
        from .pipeline.catalog import load_catalog

        for name, e in load_catalog(args.scale).items():
            print(f"{name:32s} {len(e.cells):3d} cells  {e.n_trials} trials  {e.cfg.dataset.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
