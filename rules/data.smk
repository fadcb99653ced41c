# Data: fetch and verify (data/raw/<dataset>/MANIFEST.json), then preprocess once
# (data/processed/<dataset>/data.npz).  Sources: data/raw, $RANKREPRO_DATA_MIRROR, home page.


rule data:
    input:
        data_outputs(),


rule fetch_data:
    output:
        "data/raw/{dataset}/MANIFEST.json",
    log:
        "logs/data/{dataset}.fetch.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/fetch_data.py"


rule preprocess_data:
    input:
        "data/raw/{dataset}/MANIFEST.json",
    output:
        npz="data/processed/{dataset}/data.npz",
        manifest="data/processed/{dataset}/manifest.json",
    params:
        options=preprocess_options,
    log:
        "logs/data/{dataset}.preprocess.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/preprocess_data.py"
