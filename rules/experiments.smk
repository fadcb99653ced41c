# One job per sweep cell, then one aggregation and (for figures) one plot per artefact.


rule run_cell:
    input:
        data=cell_data,
        # a sensitivity cell that only adds trials takes its main cell's (pipeline.cells.reused_trials)
        reuse=cell_reuse,
        # a cell another experiment computes exactly (the arena's): its results taken (pipeline.cells.twin_cells)
        twin=cell_twin,
        # a cell read off its main cell's fits (pipeline.cells.reread_of): after that cell, whose job computes it
        reread=cell_reread,
        # a dry run only: a stale cell whose fingerprint file the dry run keeps (its mark, newer than it)
        stale=lambda w: [stale_mark(f"{w.paper}/{w.artefact}", w.cell)] if (f"{w.paper}/{w.artefact}", w.cell) in DRY_STALE else [],
    output:
        cells=out("results/{paper}/{artefact}/cells/{cell}.parquet"),
        # what the cell was computed from; the workflow compares it at start (pipeline/freshness.py)
        fingerprint=out("results/{paper}/{artefact}/cells/{cell}.fingerprint"),
    log:
        out("logs/{paper}/{artefact}/{cell}.log"),
    params:
        experiment="{paper}/{artefact}",
        cell="{cell}",
        scale=SCALE,
        config_dir=CONFIG_DIR,
        fingerprint=cell_param_fingerprint,
    threads: 1
    # long cells first (their measured seconds, rules/cell_seconds.json): no core idles at the end
    priority: cell_priority_of
    conda:
        "../environment.yml"
    script:
        "../scripts/run_cell.py"


# cells of a few seconds each run several to a job (rankrepro.pipeline.schedule.cell_packs: a
# job's start-up, ~1.4 CPU s, is paid once per pack instead of once per cell); each cell's
# results, fingerprint file and log are its own, as rule run_cell makes them.  update(): the
# pack's files are kept while its job runs, which recomputes only the cells that are not
# current (an edit of one cell of a pack recomputes that cell).  Off with cell_packs=false,
# in the batch modes, and under force=true (every cell its own job, as --forcerun run_cell expects).
for _pack in PACKS:
    _pexp = CATALOG[_pack["experiment"]]

    rule:
        name:
            _pack["rule"]
        input:
            data=[processed(DATA_STATUS[_pexp.name].used)] if DATA_STATUS[_pexp.name].used else [],
            # the cells of another job this pack's copies are taken from (pipeline.cells.twin_cells)
            twin=sorted(set(_pack["twins"].values())),
            # a dry run only: its stale cells, whose fingerprint files the dry run keeps (their marks)
            stale=[stale_mark(_pexp.name, c) for c in _pack["cells"] if (_pexp.name, c) in DRY_STALE],
        output:
            [update(p) for c in _pack["cells"] for p in (out(f"results/{_pexp.paper}/{_pexp.artefact}/cells/{c}.parquet"),
                                                         out(f"results/{_pexp.paper}/{_pexp.artefact}/cells/{c}.fingerprint"))],
        # the cells' own logs beside it, logs/<paper>/<artefact>/<cell>.log (scripts/run_cells.py)
        log:
            out(f"logs/{_pexp.paper}/{_pexp.artefact}/{_pack['rule']}.log"),
        params:
            experiment=_pexp.name,
            cells=_pack["cells"],
            twins=_pack["twins"],
            scale=SCALE,
            config_dir=CONFIG_DIR,
            # what the cells are computed from: a changed cell changes the job's parameters too
            fingerprint=[cell_fingerprint(*_pexp.variant_of(_pexp.cell(c))) for c in _pack["cells"]],
        threads: 1
        priority: _pack["priority"]
        conda:
            "../environment.yml"
        script:
            "../scripts/run_cells.py"

    workflow.ruleorder(_pack["rule"], "run_cell")

rule run_all_cells:
    wildcard_constraints:
        paper=CELL_BATCHES,
    input:
        data=cell_data,
    output:
        out("results/{paper}/{artefact}/all_cells.parquet"),
    log:
        out("logs/{paper}/{artefact}.cells.log"),
    params:
        experiment="{paper}/{artefact}",
        scale=SCALE,
        config_dir=CONFIG_DIR,
        fingerprint=experiment_fingerprint,
    threads: 1
    priority: artefact_priority_of
    conda:
        "../environment.yml"
    script:
        "../scripts/run_all_cells.py"


# a record kept as it is (common.smk: kept_records, e.g. a reproduced one whose data are absent
# here) is no output of this rule, nor its figure of the figure rule
rule aggregate:
    wildcard_constraints:
        paper=KEPT_RECORDS,
    input:
        cells=cell_files,
        # the paper's other artefacts: the claims are decided over the paper's family (Holm)
        siblings=sibling_cell_files,
        # the cells' platform spread (make spread): the record's `platform` section is read from it
        spread=lambda w: [f] if Path(f := out("results/platform_spread.json")).is_file() else [],
    output:
        csv=report(
            out("results/{paper}/{artefact}.csv"),
            caption="report/table.rst",
            category="{paper}",
            labels={"artefact": "{artefact}", "kind": "summary table"},
        ),
        md=out("results/{paper}/{artefact}.md"),
        json=out("results/{paper}/{artefact}.json"),
    log:
        out("logs/{paper}/{artefact}.aggregate.log"),
    params:
        experiment="{paper}/{artefact}",
        scale=SCALE,
        config_dir=CONFIG_DIR,
        fingerprint=experiment_fingerprint,
        status=status_of,
    conda:
        "../environment.yml"
    script:
        "../scripts/aggregate.py"


# figures are named by the paper's numbering (experiment.figure.file, e.g. fig3b), which
# need not be the artefact's name: the input functions find the artefact of a figure
rule figure:
    wildcard_constraints:
        paper=KEPT_FIGURES,
    input:
        summary=lambda w: out(f"results/{w.paper}/{artefact_of_figure(w)}.csv"),
        record=lambda w: out(f"results/{w.paper}/{artefact_of_figure(w)}.json"),
    output:
        png=report(
            out("figures/{paper}/{figure}.png"),
            caption="report/figure.rst",
            category="{paper}",
            labels={"figure": "{figure}", "kind": "figure"},
        ),
        pdf=out("figures/{paper}/{figure}.pdf"),
    log:
        out("logs/{paper}/{figure}.figure.log"),
    params:
        experiment=lambda w: f"{w.paper}/{artefact_of_figure(w)}",
        scale=SCALE,
        config_dir=CONFIG_DIR,
        fingerprint=experiment_fingerprint,
    conda:
        "../environment.yml"
    script:
        "../scripts/figure.py"


# batch mode (batch_cells=true or paper): each paper's records and figures in one job, the same
# files the aggregate and figure rules write (~2 s of start-up and reading saved per file;
# jobs.job_summarise); those two rules make nothing in this mode (common.smk: KEPT_RECORDS).
# With batch_cells=paper (`make smoke`) the job runs the paper's cells first (jobs.job_run_all_cells).
if BATCH:
    for _paper in sorted({e.paper for e in CATALOG.values()}):
        # with batch_cells=paper only the artefacts an edit changed (common.smk: batch_member, STALE)
        _members = [e for e in CATALOG.values() if e.paper == _paper and batch_member(e)]
        _parts = [{**summarised(e), "pending": (STALE or {}).get(e.name) == "pending"} for e in _members]
        _runs = batched_runs(_members)
        _made = {r["output"] for r in _runs}
        _compared = [{"family": f, "cells": arena_cells(SimpleNamespace(family=f)),
                      **{k: out(f"results/arena/comparison/{f}.{k}") for k in ("json", "md", "csv")},
                      **{k: out(f"figures/arena/comparison/cd_{f}.{k}") for k in ("png", "pdf")}}
                     for f, p in FOLDED.items() if p == _paper and arena_made_here(f) and not comparison_current(f)]
        if not _members and not _compared:
            continue

        rule:
            name:
                f"summarise_{_paper}"
            input:
                data=sorted({p for r in _runs for p in r["data"]}),
                cells=sorted(({p for a in _parts for p in a["cells"] + a["siblings"]}
                              | {p for c in _compared for p in c["cells"]}) - _made),
                definitions=[f"config/arena/{c['family']}.yaml" for c in _compared],
                plan=[write_plan(_paper, _members, [c["family"] for c in _compared])] if STALE is not None else [],
            # update(): with batch_cells=paper, Snakemake keeps (and backs up) the files before the
            # job instead of removing them: the job takes its unchanged cells' rows from them and
            # leaves a pending record as it is; a failed job gets them back
            output:
                [update(p) if STALE is not None else p for p in
                 [r["output"] for r in _runs]
                 + [a[k] for a in _parts for k in ("csv", "md", "json", "png", "pdf") if k in a]
                 + [c[k] for c in _compared for k in ("json", "md", "csv", "png", "pdf")]],
            log:
                out(f"logs/{_paper}.summarise.log"),
            params:
                paper=_paper,
                runs=_runs,
                artefacts=_parts,
                comparisons=_compared,
                scale=SCALE,
                config_dir=CONFIG_DIR,
                fingerprints=[config_fingerprint(e) for e in _members],
            threads: 1
            priority: round(sum(artefact_priority(e, CELL_SECONDS) for e in _members), 3) if _runs else 0
            conda:
                "../environment.yml"
            script:
                "../scripts/summarise.py"
