# The replication report: every artefact, paper beside reproduction, claims, provenance.


rule report:
    input:
        records=records(),
        figures=figures(),
    output:
        report(
            out("results/report/index.html"),
            caption="report/replication.rst",
            category="Replication report",
            labels={"file": "index.html"},
        ),
    log:
        out("logs/report.log"),
    params:
        scale=SCALE,
    conda:
        "../environment.yml"
    script:
        "../scripts/report.py"
