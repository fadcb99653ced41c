"""The command line's parser: the subcommands, their options, help and examples."""

from __future__ import annotations

import argparse

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

def _families() -> str:
    """The arena families, config/arena/<family>.yaml (standard library only: the help is fast)."""
    try:
        from ..config_files import find_config_dir

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
    from .. import __version__

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
                    "committed results/ at paper scale, runs/<scale>/ otherwise, make smoke's all_cells.parquet\n"
                    "included); the log says how many and from where.",
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
                   help="output folder (default: runs/cli/<scale>; never the checkout, its results/ or figures/)")
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
               "  rankrepro verify yu2006/tables --reused          # cells taken from another cell's job, alone\n"
               "  rankrepro verify yu2006/tables --reused --cells '*ordinal_predict=*'  # of those, these\n"
               "  rankrepro verify --all --jobs 2 --record         # everything; tell the committed files\n"
               "  rankrepro verify --stale --record --against ../clone/results  # cells a run of this code made\n"
               "  rankrepro verify --records --jobs 2              # every record against its cells (make verify, first)\n"
               "  rankrepro verify --kernel sandybridge            # the sample under a pre-AVX2 kernel (CI)\n"
               "  rankrepro verify --kernel haswell --per-learner --record-spread  # measure the spread (make spread)")
    v.add_argument("experiments", nargs="*", metavar="EXPERIMENT", help="<paper>/<artefact> (default: all)")
    v.add_argument("--all", action="store_true", help="every committed cell, not the cheapest of each artefact")
    v.add_argument("--stale", action="store_true",
                   help="the cells whose fingerprint no longer matches the code and config (after a code change)")
    v.add_argument("--reused", action="store_true",
                   help="the cells the workflow takes from another cell's job (trials taken over, fits read under "
                        "another prediction rule, twins), each recomputed on its own")
    v.add_argument("--cells", nargs="+", metavar="PATTERN",
                   help="only the cells whose id matches one of these shell patterns (e.g. '*~ordinal_predict=*')")
    v.add_argument("--jobs", "-j", type=int, default=1, help="cells checked in parallel (default: 1)")
    v.add_argument("--against", metavar="RESULTS_DIR",
                   help="compare a cell as another results tree holds it (e.g. a paper-scale benchmark's clone, kept) "
                        "when this code, config and data made it there (its fingerprint file current); recompute "
                        "the others")
    v.add_argument("--records", action="store_true",
                   help="instead of recomputing cells: check every committed record against its cells (each cell's "
                        "sha256 against its fingerprint file and record; each record, table and Markdown aggregated "
                        "again from its cells and compared byte for byte); all of them, without recomputing a cell")
    v.add_argument("--record-spread", action="store_true",
                   help="merge what was measured (each cell identical or its differences per metric, and the "
                        "outcomes that change) into results/platform_spread.json, with this machine's CPU kernel "
                        "settings: the spread the same code shows on another kernel, which verify then accepts")
    v.add_argument("--kernel", choices=("skylakex", "zen", "haswell", "sandybridge"),
                   help="run under this CPU kernel setting (OpenBLAS core type, NumPy SIMD level, numba target; "
                        "docs/reproducibility.md, 'The platform spread')")
    v.add_argument("--per-learner", action="store_true",
                   help="the cheapest main cell of each learner of each artefact (the platform spread's sample, "
                        "make spread)")
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
    cmp_ = sub.add_parser(
        "compare", help="two runs side by side: per artefact and cell, each run's mean and 95%% CI and the difference",
        description="Two runs side by side, for reading (rankrepro.report.compare_runs): per artefact both hold and per\n"
                    "cell, metric and round of its table, each run's mean and 95% Student-t half-width, B - A and its\n"
                    "95% Welch interval; then each claim's verdict in A and in B.  A run is the --out folder of\n"
                    "`rankrepro run` or `arena`, runs/<scale>, a checkout or a results/ folder.  Nothing is judged\n"
                    "(a code change's regression check against the committed results is scripts/compare_results.py).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  rankrepro compare runs/cli/smoke runs/mine harrington2003/table1  # two rankrepro run --out")
    cmp_.add_argument("run_a", metavar="RUN_A")
    cmp_.add_argument("run_b", metavar="RUN_B")
    cmp_.add_argument("only", nargs="*", metavar="PAPER[/ARTEFACT]", help="only these papers or artefacts (default: all)")
    cmp_.add_argument("--csv", default=None, metavar="FILE", help="also write the rows as CSV (one per cell, metric, round)")
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
                    "(rankrepro.report.export).  Reads only what is committed (or, --from, a run of your own), each\n"
                    "record and cell checked against its hashes (an edited value is refused); recomputes nothing.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  rankrepro export --out /tmp/export\n"
               "  rankrepro export --from runs/cli/smoke --out /tmp/mine   # a run of your own (rankrepro run --out)")
    ex.add_argument("only", nargs="*", metavar="PAPER[/ARTEFACT]", help="only these papers or artefacts (default: all)")
    ex.add_argument("--out", default="runs/export", help="output folder (default: runs/export)")
    ex.add_argument("--scale", default="paper",
                    help="the results of this scale (default: paper, the committed results/; else runs/<scale>/)")
    ex.add_argument("--from", dest="source", metavar="RUN_DIR", default=None,
                    help="instead, the results of a run of your own: the --out folder of `rankrepro run` or `arena`")
