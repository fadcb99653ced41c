# Outputs for other tools, made on demand and never committed (they are large and follow from
# what is committed): `snakemake runfiles` (TREC run files of the LETOR cells,
# rankrepro.report.runfiles) and `snakemake export` (the tidy tables, rankrepro.report.export;
# also `make export`).  Neither is part of `all`; both first bring the records they read up to
# date, like the report.


# paper scale: runs/<name>; another scale beside its outputs, runs/<scale>/<name>
ON_DEMAND = "runs/" if SCALE == "paper" else PREFIX


rule runfiles:
    input:
        records=[out(f"results/{e.paper}/{e.artefact}.json") for e in CATALOG.values()
                 if e.cfg.experiment.protocol == "letor" and runnable(e)],
    output:
        directory(f"{ON_DEMAND}runfiles"),
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
        directory(f"{ON_DEMAND}export"),
    log:
        out("logs/export.log"),
    params:
        python=sys.executable,
        scale=SCALE,
    conda:
        "../environment.yml"
    shell:
        "{params.python} -m rankrepro.cli export --scale {params.scale} --out {output} > {log} 2>&1"
