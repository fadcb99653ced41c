"""The rankrepro command line (the workflow itself is plain Snakemake).

The package's parts: :mod:`.parser` (subcommands, options, help), :mod:`.overrides` (checks
of overrides and names before anything runs, "did you mean", sweeps), :mod:`.run` (``run``
and ``arena``); this module holds ``main`` and the other subcommands."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from .errors import CliError
from .overrides import did_you_mean, is_sweep, known_keys, multirun_as_grid, precheck
from .parser import _parser, parse_args
from .paths import plain_scale, writable_out
from .run import run_arena, run_experiment, show_arena_config, show_config, _arena, _run

__all__ = ["CliError", "did_you_mean", "is_sweep", "known_keys", "main", "multirun_as_grid", "parse_args",
           "precheck", "run_arena", "run_experiment", "show_arena_config", "show_config", "_parser"]


def _verify(args) -> int:
    from ..config_files import find_config_dir, list_experiments
    from ..pipeline.catalog import catalog_jobs, default_cache_dir, load_catalog
    from ..pipeline.verify import run

    known = list_experiments(find_config_dir())
    for name in args.experiments:
        if name not in known:
            near = difflib.get_close_matches(name, known, n=1)
            raise CliError(f"unknown experiment {name!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
    if args.record:  # a verification stamp names the exact code it ran: refused from a modified tree
        from ..provenance import git_commit

        if git_commit().endswith("+dirty"):
            raise CliError("verify --record stamps the records with the commit the cells were verified at, and "
                           "tracked sources differ from it (git status): commit or stash them first")
    if args.kernel:  # OpenBLAS and NumPy read their kernel when they load: the command runs again under it
        from ..pipeline.platforms import KernelError, under_kernel

        try:
            under_kernel(args.kernel, sys.argv[1:])
        except KernelError as e:
            raise CliError(str(e)) from None
    catalog = load_catalog("paper", cache_dir=default_cache_dir(), jobs=catalog_jobs())
    if args.records:
        from ..records_check import check

        return 1 if check(catalog, jobs=args.jobs, names=args.experiments or None) else 0
    if args.against is not None and Path(args.against).name != "results":
        raise CliError(f"--against {args.against}: give the results/ folder of another checkout's run "
                       "(<checkout>/results)")
    checks = run(catalog, args.experiments or None, every=args.all, jobs=args.jobs, record=args.record,
                 stale=args.stale, reused=args.reused, patterns=args.cells, against=args.against,
                 per_learner=args.per_learner)
    if args.record_spread:
        from ..pipeline.platforms import SPREAD, current_kernel, record
        from ..records_check import outcome_changes

        measured, moved = record(checks, catalog, outcomes=outcome_changes)
        print(f"platform spread under {current_kernel()}: {measured} cell(s) measured, {moved} moved, merged into "
              f"{SPREAD} (the records carry it once aggregated again: snakemake --forcerun aggregate)")
        return 0
    # identical, or moved only within the rule for numbers that move (last bits, platform spread)
    return 0 if all(c.passes for c in checks) else 1


def _check_learner(args) -> int:
    from ..conformance import Check, run_checks
    from ..pipeline.targets import TargetError, import_target

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
    from ..checkout import OutsideCheckout
    from ..data.processed_check import ProcessedDataRefused
    from ..files import DamagedFile, ReadFailed, RecordMismatch, WriteFailed

    from ..pipeline.learner_checks import TrialFailed

    args = parse_args(argv)
    try:
        return _dispatch(args)
    except (CliError, FileNotFoundError) as e:  # a config folder or data file not found: one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 2
    except TrialFailed as e:  # a learner's error or unusable output, naming the cell and trial: one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 1
    except (DamagedFile, WriteFailed, ReadFailed, OutsideCheckout, ProcessedDataRefused, RecordMismatch) as e:
        # a project file damaged or leading out of the checkout, a read or write refused (a full disk): one line
        print(f"rankrepro: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("rankrepro: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of the output went away (`rankrepro experiments | head`): stop quietly, as
        # other command-line tools do; stdout goes to devnull so that the interpreter's final
        # flush does not raise again (the Python documentation's recipe for SIGPIPE)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


def _dispatch(args) -> int:
    if args.cmd == "run":
        return _run(args)
    if args.cmd == "check-learner":
        return _check_learner(args)
    if args.cmd == "arena":
        return _arena(args)
    from ..data.fetch import ChecksumError, DataUnavailable, fetch, status_table

    if args.cmd == "data-status":
        print(status_table(probe=not args.no_probe))
        from ..data.status import originals_table

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
        from ..data.preprocess import REFUSED, preprocess

        for n in args.names:
            try:
                print(preprocess(n))
            except (KeyError, *REFUSED) as e:  # a malformed file: one line naming file and line
                print(f"rankrepro: error: {e.args[0] if isinstance(e, KeyError) and e.args else e}", file=sys.stderr)
                return 1
    elif args.cmd == "verify":
        return _verify(args)
    elif args.cmd == "report":
        from ..report.html import rebuild_report

        print(rebuild_report(plain_scale(args.scale, "report")))
    elif args.cmd == "runfiles":
        from ..report.runfiles import UnknownCell, write_runfiles

        plain_scale(args.scale, "runfiles")
        if args.trials is not None and min(args.trials) < 0:
            raise CliError(f"runfiles --trials {min(args.trials)}: a trial is a number from 0 (the committed cell's "
                           "trials: 0, 1, ...)")
        out = writable_out(args.out, "runs/runfiles", "runfiles")
        try:
            done = write_runfiles(args.experiments or None, out, cells=args.cells, trials=args.trials,
                                  scale=args.scale)
        except UnknownCell as e:
            raise CliError(str(e)) from None
        return 1 if any(w.problem for w in done) else 0
    elif args.cmd == "export":
        from ..pipeline.catalog import output_prefix
        from ..report.export import ExportRefused, export

        plain_scale(args.scale, "export")
        root = output_prefix(args.scale) or "."
        if args.source is not None:  # the --out folder of a `rankrepro run` or `rankrepro arena`
            if args.scale != "paper":
                raise CliError("export --from DIR reads the run in DIR; --scale names the workflow's outputs: give one")
            if not (Path(args.source) / "results").is_dir():
                raise CliError(f"export --from {args.source}: no results/ folder there (give the --out folder of "
                               "`rankrepro run` or `rankrepro arena`, e.g. runs/cli/smoke)")
            root = args.source
        out = writable_out(args.out, "runs/export", "export")
        try:
            for path in export(out, root=root, only=args.only or None):
                print(path)
        except ExportRefused as e:
            raise CliError(str(e)) from None
    elif args.cmd == "compare":
        from ..report.compare_runs import CompareError, compare, render, write_csv

        try:
            rows, claims, alone = compare(args.run_a, args.run_b, args.only or None)
        except CompareError as e:
            raise CliError(str(e)) from None
        print(render(rows, claims, alone, args.run_a, args.run_b), end="")
        if args.csv:
            writable_out(str(Path(args.csv).parent), "runs", "compare --csv")
            write_csv(rows, args.csv)
            print(f"csv    {args.csv}")
    elif args.cmd == "experiments":
        from ..pipeline.catalog import catalog_jobs, default_cache_dir, load_catalog

        # the catalog the workflow keeps (read back in ~2 s while the configs and code are unchanged)
        for name, e in load_catalog(args.scale, cache_dir=default_cache_dir(), jobs=catalog_jobs()).items():
            print(f"{name:32s} {len(e.cells):3d} cells  {e.n_trials} trials  {e.cfg.dataset.name}")
    return 0
