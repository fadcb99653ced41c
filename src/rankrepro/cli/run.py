"""``rankrepro run`` and ``rankrepro arena``: one experiment, or an arena family, by hand."""

from __future__ import annotations

import contextlib
import errno
import sys
from pathlib import Path

from .errors import CliError
from .overrides import did_you_mean, hydra_settings, multirun_as_grid, precheck
from .paths import writable_out


@contextlib.contextmanager
def _holding(root: Path):
    """Hold the output folder for this run (pipeline.outlock); another run in it, or an output
    folder or lock file that cannot be used (a planted link, not a folder), is a one-line error;
    so is a full disk while the run writes (:class:`~rankrepro.files.WriteFailed`, naming the
    file where the error does, else the folder)."""
    from ..files import ReadFailed, WriteFailed
    from ..pipeline.outlock import FolderInUse, OutputRefused, output_lock

    try:
        with output_lock(root):
            yield
    except (FolderInUse, OutputRefused) as e:
        raise CliError(str(e)) from None
    except OSError as e:
        if isinstance(e, (WriteFailed, ReadFailed)) or e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise WriteFailed(e.filename or root, e) from None


def _load(name: str, overrides: list[str], scale: str):
    """The experiment, composed and checked; a config error as one line with a "did you mean"."""
    from ..pipeline.catalog import load_experiment
    from ..pipeline.config_errors import ConfigError

    try:
        exp = load_experiment(name, scale, overrides=overrides)
    except ConfigError as e:
        if "does not support deletion" in str(e):  # '~experiment.figure': a key of the schema
            raise CliError(f"{e}: '~' removes an entry of a mapping (e.g. ~algorithms.<key>); a key every "
                           "experiment has is set instead (e.g. experiment.figure=null)") from None
        hint = did_you_mean(e, name, scale)
        raise CliError(str(e) + (f"; did you mean '{hint}'?" if hint else "")) from None
    if exp.override_note:  # what a learner removed or swept takes with it (pipeline.user_drops): one line
        print(f"{name}: {exp.override_note}", file=sys.stderr, flush=True)
    return exp


def scale_caps(exp) -> str:
    """The sizes a run of ``exp`` uses under its scale's caps, against the experiment's own
    (``--cfg job`` prints the config as written: n_trials 100 where a smoke run does 2)."""
    e = exp.cfg.experiment
    used = [("n_trials", exp.n_trials, e.n_trials), ("n_train", exp.n_train, e.n_train),
            ("n_test", exp.n_test, e.n_test), ("curve_points", exp.curve_points, e.get("curve_points"))]
    parts = [f"{k} {u}" + (f" (written {w})" if w is not None and w != u else "") for k, u, w in used]
    parts += [f"{k} {v}" for k, v in (("max_steps", exp.max_steps), ("max_users", exp.max_users)) if v is not None]
    return f"# scale {exp.scale}, in effect: {', '.join(parts)}\n"


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

    from ..pipeline.catalog import composed_config

    return scale_caps(exp) + OmegaConf.to_yaml(composed_config(name, scale, overrides, drops=exp.override_drops))


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
    # never the checkout's root, results/ or figures/ (the workflow's, committed): refused first
    root = writable_out(out, Path("runs") / "cli" / scale, "run")
    if multirun:
        overrides = multirun_as_grid(overrides)
    if exp is None:
        precheck(name, overrides, scale)  # before the heavy imports: a mistake here is reported in a second
    from ..data.status import data_status
    from ..io import write_parquet
    from ..pipeline.catalog import write_resolved
    from ..pipeline.names import OutsideRoot, output_path
    from ..pipeline.runner import run_cell

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
        from ..checkout import OutsideCheckout
        from ..data.processed_check import ProcessedDataRefused, check_processed

        try:  # before any trial: in the checkout, and the very file its manifest names
            check_processed(data_path)
        except (OutsideCheckout, ProcessedDataRefused) as e:
            raise CliError(f"{name}: {e}") from None
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
        from ..pipeline import reuse
        from ..pipeline.cells import reused_trials
        from ..pipeline.freshness import data_identity, write_fingerprint

        # the cells already made with this fingerprint, here or in the workflow's outputs
        plan = reuse.plan(exp, data_identity(st.used), reuse.sources(exp, root))
        if loaded is not None:
            loaded.update(exp=exp, cells=[str(p) for p in cell_paths], plan=plan)
        write_resolved(exp, res["config.yaml"])
        log(f"{name} [{scale}]: {len(exp.all_cells)} cells"
            + (f", overrides {' '.join(overrides)}" if overrides else "") + f" -> {root}"
            + (f"; {len(plan.reused)} already made, {len(plan.computed)} to compute" if plan.reused else ""))
        read = {}  # cells read off a main cell's fits, computed with it (pipeline.cells.reread_of)
        for c, p in zip(exp.all_cells, cell_paths):
            if c.id in plan.reused:
                found = plan.reused[c.id][1]
                if isinstance(found, Path):
                    reuse.take(found, p)
                else:  # its rows in make smoke's all_cells.parquet (pipeline.reuse, 3.)
                    write_parquet(found, p)
                    write_fingerprint(exp, c.id, data_path, reuse.fingerprint_of(p))
                continue
            reuse.fingerprint_of(p).unlink(missing_ok=True)  # none until the new results are written
            if c.id in read:
                write_parquet(read.pop(c.id), p)
                write_fingerprint(exp, c.id, data_path, reuse.fingerprint_of(p))
                continue
            # a sensitivity cell that only adds trials takes its main cell's (bit for bit theirs)
            hit = reused_trials(exp, c)
            kept = None
            if hit is not None:
                from ..files import read_cell

                kept = read_cell(cell_paths[[x.id for x in exp.all_cells].index(hit[0])])
            df = run_cell(exp, c.id, n_jobs=jobs, progress=log, data_path=data_path, reuse=kept, rereads=read)
            write_parquet(df, p)
            write_fingerprint(exp, c.id, data_path, reuse.fingerprint_of(p))
        log(plan.summary(name, scale, len(exp.all_cells)))
        from ..report.artefact import build_artefact

        rec = build_artefact(exp, cell_paths, res["csv"], res["md"], res["json"], data=vars(st))
        pngs = {}
        if png is not None:
            from ..report.figures import build_figure

            build_figure(exp, res["csv"], png, png.with_suffix(".pdf"), res["json"])
            pngs[exp.name] = str(png)
        if not report:
            return rec
        from ..report.html import build_report

        build_report([str(res["json"])], pngs, report_html, scale, roots=[root])
        return rec


def _resolve_without_cfg(args) -> None:
    if args.resolve and args.cfg is None:
        raise CliError("--resolve goes with --cfg job (print the resolved config without running)")


def _run(args) -> int:
    _resolve_without_cfg(args)
    args.overrides, args.out = hydra_settings(list(args.overrides), args.out)
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
    from ..config_files import find_config_dir, list_experiments
    from ..report.arena import ArenaError, load_arena

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
    from ..report.arena import ArenaError, build_comparison, comparison_paths

    root = writable_out(out, Path("runs") / "cli" / scale, "arena")
    arena = _load_arena(family)
    if multirun:
        overrides = multirun_as_grid(overrides)
    # every member loaded and the family's entry (enter:) checked before any cell runs: a
    # learner added without the setting that enters the comparison stops here, in seconds
    for name in arena.experiments:
        precheck(name, overrides, scale)
    loaded_exps = {name: _load(name, overrides, scale) for name in arena.experiments}
    from ..report.arena import entering_cells

    try:
        entering_cells(arena, loaded_exps)
    except ArenaError as e:
        raise CliError(str(e)) from None
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
        from ..report.html import build_report

        jsons = [str(root / "results" / r["paper"] / f"{r['artefact']}.json") for r in recs] + [str(paths["json"])]
        build_report(jsons, arena_report_figures(root, recs, paths), root / "results" / "report" / "index.html",
                     scale, roots=[root])
        return rec


def arena_report_figures(root: Path, recs: list[dict], paths: dict[str, Path]) -> dict[str, str]:
    """The figures an arena run's report embeds, keyed as :func:`~rankrepro.report.html.build_report`
    looks them up: each data set's figure, and the family's critical-difference diagram
    (``comparison/cd_<family>``, as the workflow's report job names it)."""
    pngs = {f"{r['paper']}/{r['figure_file']}": str(root / "figures" / r["paper"] / f"{r['figure_file']}.png")
            for r in recs if r.get("figure_file")}
    pngs[f"comparison/{paths['png'].stem}"] = str(paths["png"])
    return pngs


def _arena(args) -> int:
    _resolve_without_cfg(args)
    args.overrides, args.out = hydra_settings(list(args.overrides), args.out)
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
