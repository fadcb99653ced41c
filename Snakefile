# rankrepro: regenerate every table and figure of the papers, next to the published numbers.
#
#   snakemake --cores N                        paper scale (outputs in results/ and figures/)
#   snakemake --cores N --config scale=smoke   every artefact tiny (outputs in runs/smoke/)
#
# The experiment catalog is read from the Hydra configs in config/ (one file per artefact);
# every bad config stops here, before any job runs.  All logic lives in src/rankrepro.

report: "rules/report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/experiments.smk"
include: "rules/arena.smk"
include: "rules/report.smk"
include: "rules/exports.smk"


rule all:
    input:
        all_outputs(),
    default_target: True


onstart:
    # a run killed midway (kill -9, power cut) may leave the hidden temporary files of
    # atomic writes behind; the outputs themselves are never partial.  Snakemake's lock
    # guarantees no other run writes here now, so the leftovers can go.
    remove_stale_temporaries()
