# Outputs for other tools, made on demand and never committed (they are large and follow from
# what is committed): `snakemake runfiles` (TREC run files of the LETOR cells,
# rankrepro.report.runfiles) and `snakemake export` (the tidy tables, rankrepro.report.export;
# also `make export`).  Neither is part of `all`; both first bring the records they read up to
# date, like the report.


def _on_demand(name):
    # paper scale: runs/<name>; another scale beside its outputs, runs/<scale>/<name>
    return f"runs/{name}" if SCALE == "paper" else out(name)


rule runfiles:
    input:
        records=[out(f"results/{e.paper}/{e.artefact}.json") for e in CATALOG.values()
                 if e.cfg.experiment.protocol == "letor" and runnable(e)],
    output:
        directory(_on_demand("runfiles")),
    log:
        out("logs/runfiles.log"),
    params:
        python=sys.executable,
        scale=SCALE,
    conda:
        "../environment.yml"
    shell:
        "{params.python} -m rankrepro.cli runfiles --scale {params.scale} --out {output} > {log} 2>&1"


rule export:
    input:
        records=records(),
    output:
        directory(_on_demand("export")),
    log:
        out("logs/export.log"),
    params:
        python=sys.executable,
        scale=SCALE,
    conda:
        "../environment.yml"
    shell:
        "{params.python} -m rankrepro.cli export --scale {params.scale} --out {output} > {log} 2>&1"
