# rankrepro: the two commands of the README are `make reproduce` and `make test`.
# Both create the virtual environment .venv and install the package on first use.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
CORES  ?= all
STAMP  := $(VENV)/.installed-stamp

.PHONY: install reproduce smoke test bench lint clean-smoke data data-status

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## the whole pipeline at paper scale on all cores (outputs in results/ and figures/)
reproduce: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES)

## every artefact tiny, end to end (outputs in runs/smoke/)
smoke: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) --config scale=smoke batch_cells=true

## the test suite
test: $(STAMP)
	$(PY) -m pytest -q

## speed: rounds per second against a plain NumPy reference measured in the same run
bench: $(STAMP)
	$(PY) scripts/bench.py

## fetch, verify and preprocess every data set that can be had (mirror: RANKREPRO_DATA_MIRROR)
data: $(STAMP)
	$(VENV)/bin/snakemake --cores $(CORES) data

## each data set: verified, in the mirror, downloadable, absent, or replaced by which substitute
data-status: $(STAMP)
	$(VENV)/bin/rankrepro data-status

lint: $(STAMP)
	$(VENV)/bin/snakemake --lint

clean-smoke:
	rm -rf runs/smoke
