# One job per sweep cell, then one aggregation and (for figures) one plot per artefact.


rule run_cell:
    input:
        data=cell_data,
        # a sensitivity cell that only adds trials takes its main cell's (pipeline.cells.reused_trials)
        reuse=cell_reuse,
        # a cell another experiment computes exactly (the arena's): its results taken (pipeline.cells.twin_cells)
        twin=cell_twin,
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


rule run_all_cells:
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
