# rankrepro: the two commands of the README are `make reproduce` and `make test`.
# Both create the virtual environment .venv and install the package on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORES  ?= all
STAMP  := $(VENV)/.installed-stamp

.PHONY: install reproduce report smoke test browser bench lint clean-smoke data data-status verify

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## the whole pipeline at paper scale on all cores (outputs in results/ and figures/): the data
## first, then only the cells whose fingerprint changed; FORCE=1 recomputes everything
reproduce: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) data --config download=true
	$(VENV)/bin/snakemake --cores $(CORES) $(if $(FORCE),--forcerun run_cell run_all_cells aggregate figure report --config force=true,)
	$(PY) scripts/results_doc.py

## the report (and docs/results.md's numbers, the README's status table and the per-paper replication
## articles results/<paper>/article.*) again from the committed records and figures, in seconds (nothing recomputed)
report: $(STAMP)
	$(PY) scripts/results_doc.py
	$(PY) -m rankrepro.cli report

## the tidy tables of every committed value, one per paper (gzipped CSV and parquet), and their data
## dictionary, in runs/export/ (docs/export.md; read from the committed cells, nothing recomputed)
.PHONY: export runfiles
export: $(STAMP)
	$(VENV)/bin/rankrepro export --out runs/export

## TREC run files, per-query evaluation files and qrels of every committed LETOR cell, in runs/runfiles/
## (each trial rerun and checked bit for bit against the committed per-query values; about 30 CPU-minutes, estimated)
runfiles: $(STAMP)
	$(VENV)/bin/rankrepro runfiles --out runs/runfiles

## first every committed record against its cells (each cell's sha256 against its fingerprint file
## and record; each record, table and Markdown aggregated again from its cells and compared byte for
## byte: `rankrepro verify --records`, all of them, ~2 CPU-minutes), every verdict recomputed
## independently from the committed cells with scipy/statsmodels (scripts/recompute_verdicts.py), then
## recompute committed cells at paper scale into runs/verify/ and compare them bit for bit with the
## committed ones (timing metrics apart); exits non-zero on any difference.  Default: the cheapest
## cell of every artefact that can run here (~2 CPU-minutes); VERIFY="--all" for every cell,
## VERIFY="--stale --record" after a code change (the cells it touched; refreshes what is committed)
VERIFY ?=
verify: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) data --config download=true
	$(VENV)/bin/rankrepro verify --records --jobs $$(nproc)
	$(PY) scripts/recompute_verdicts.py results
	$(VENV)/bin/rankrepro verify --jobs $$(nproc) $(VERIFY)

## the platform spread (docs/reproducibility.md): the cheapest main cell of every learner of every artefact
## recomputed under each CPU kernel setting this CPU can run (AVX-512, AVX2, pre-AVX2) and compared with the
## committed cells; results/platform_spread.json, then the records (~30 CPU-minutes a setting, estimated)
SPREAD ?=
KERNELS ?= skylakex zen haswell sandybridge
.PHONY: spread
spread: $(STAMP)
	for k in $(KERNELS); do $(VENV)/bin/rankrepro verify --kernel $$k --per-learner --record-spread --jobs $$(nproc) $(SPREAD) || exit 1; done
	$(VENV)/bin/snakemake --cores $(CORES) --forcerun aggregate

## every artefact tiny, end to end (outputs in runs/smoke/)
smoke: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) --config scale=smoke batch_cells=paper

## the test suite (first makes sure headless Chromium is there for the report's browser test)
test: $(STAMP) browser
	$(PY) -m pytest -q -n auto --dist loadfile

## Debian's chromium for the report's browser test: installed when missing and this is root
## with apt-get (CI); otherwise the test is skipped outside CI, with a message saying how to install it
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  export DEBIAN_FRONTEND=noninteractive && \
	  (apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }); } \
	  || echo "chromium not installed (Debian: apt-get install chromium): the report's browser test needs it (skipped outside CI)"

## speed: each online learner against a tight compiled loop written from the papers, interleaved in the same run (writes docs/bench/bench.json)
bench: $(STAMP)
	$(PY) scripts/bench.py

## how the cost grows with the work, against LightGBM (docs/bench/scale.json, docs/figures/bench/; ~15 minutes)
.PHONY: bench-scale bench-page
bench-scale: $(STAMP)
	$(PY) scripts/bench_scale.py

## the top of docs/benchmarks.md again from the records in docs/bench/*.json (seconds; nothing measured)
bench-page: $(STAMP)
	$(PY) scripts/bench_page.py

## fetch, verify and preprocess every data set that can be had (mirror: RANKREPRO_DATA_MIRROR;
## home pages are tried here only, not by a plain snakemake run)
data: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) data --config download=true

## each data set: verified, in the mirror, downloadable, absent, or replaced by which substitute
data-status: $(STAMP)
	$(VENV)/bin/rankrepro data-status

lint: $(STAMP)
	$(VENV)/bin/snakemake --lint

clean-smoke:
	rm -rf runs/smoke

## the tests against real engines (marked `engines`, skipped by `make test`): the smoke workflow
## through profiles/slurm on a single-node SLURM (scripts/slurm_local.sh; as root with apt-get,
## else skipped) and a dask cluster losing a worker midway; a few minutes
.PHONY: test-engines
test-engines: $(STAMP)
	$(PY) -m pip install --quiet -e '.[slurm]'
	$(PY) -m pytest -q -m engines

## the tests that take the workflow or the command line end to end over minutes (a timing
## artefact run twice, once under load): left out of `make test`, run by CI (.ci/run)
.PHONY: test-long
test-long: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile -m long

## the original data sets that cannot be had here, proven on fixtures of their official formats
## (scripts/make_fixtures.py): every artefact that uses one runs on it end to end at smoke scale and
## its record says original data (marked `fixtures`, skipped by `make test`); several minutes
.PHONY: test-fixtures
test-fixtures: $(STAMP)
	$(PY) -m pytest -q -m fixtures tests/test_original_fixtures.py
