# eoslab — the two commands a learner needs are `make lab` and `make test`.
# Everything else here is what those two call, or a convenience.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
# Extra arguments for `jupyter lab`, e.g. make lab LAB_ARGS="--port=8890 --no-browser".
LAB_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help setup lab test test-unit test-cluster test-course test-system unit up down status heal reset compose image lint strip site site-test

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# A workshop copy (`eoslab workshop pack`) installs from its own wheels: no network, no package index.
PIP_FROM := $(if $(wildcard .offline/wheels/*.whl),--no-index --find-links=.offline/wheels,)

# The first run downloads ~700 MB of wheels (pyspark alone ~430 MB): pip shows a bar per download.
$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "eoslab needs Python 3.10+: install it, or use `conda env create -f environment.yml`.")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(PIP_FROM) --upgrade pip
	$(BIN)/python -m pip install --progress-bar on $(PIP_FROM) -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)  ## create .venv, install the kit, check Java 17+, resolve the Kafka jars (idempotent)
	@$(BIN)/eoslab setup

lab: setup  ## start the cluster and open the course in JupyterLab (serves this folder; EOSLAB_BACKEND=docker: in containers)
	@if [ "$${EOSLAB_BACKEND:-local}" = docker ]; then tools/system/docker.sh ensure && $(BIN)/eoslab image ensure; fi
	$(BIN)/eoslab up
	$(BIN)/eoslab lab $(LAB_ARGS)

# The whole test suite, what CI runs: tests/suite.py (its docstring says what each tier does). Its clusters take
# ports of their own, checked free, and never touch a cluster you run (`make lab`'s included).
SUITE_RUN = $(BIN)/python -m tests.suite

test: setup  ## run the whole suite: unit, cluster, course, system tiers (stops at the first failing tier)
	$(SUITE_RUN) -- $(PYTEST_ARGS)

test-unit: setup  ## tier 1: tests/unit whole, lint and Spark included; no cluster (a few minutes)
	$(SUITE_RUN) unit -- $(PYTEST_ARGS)

test-cluster: setup  ## tier 2: the kit's behaviour on the real cluster (tests/integration, on local clusters of its own)
	$(SUITE_RUN) cluster -- $(PYTEST_ARGS)

test-course: setup  ## tier 3: the notebooks under nbval, the labs graded, the browser (docker clusters; EOSLAB_COURSE_BACKEND=local: local ones)
	$(SUITE_RUN) course -- $(PYTEST_ARGS)

test-system: setup  ## tier 4: the docker backend, the offline workshop install, the course in the lab container (root: installs Docker)
	$(SUITE_RUN) system -- $(PYTEST_ARGS)

# The JVM-free tests, in seconds: no cluster, no Spark, no lint run (tests/unit minus the `jvm` and `lint` marks).
unit: $(STAMP)  ## run the unit tests that need no cluster and no JVM (seconds)
	$(BIN)/python -m pytest tests/unit -m "not jvm and not lint" -q -p no:cacheprovider $(PYTEST_ARGS)

up: setup  ## start the cluster
	$(BIN)/eoslab up
down:  ## stop the cluster (data kept)
	$(BIN)/eoslab down
status:  ## show the nodes
	$(BIN)/eoslab status
heal:  ## undo every fault a lesson left
	$(BIN)/eoslab heal
reset:  ## stop the cluster and delete its data
	$(BIN)/eoslab reset

compose: $(STAMP)  ## re-render docker-compose.yml from eoslab/topology.py
	$(BIN)/eoslab render

image: $(STAMP)  ## build the local Kafka image eoslab/kafka (no registry; root: debootstrap) for EOSLAB_BACKEND=docker
	$(BIN)/eoslab image build

# The course as a website (docs/site.md): Sphinx + myst-nb over the notebooks a run on the cluster executed, kept by
# nbval's course run in $$EOSLAB_EXECUTED_DIR (tests/executed_plugin.py; default site-executed/). A module without a
# usable executed copy (none, another version of its cells, or an error) is executed first, on the local cluster:
# started here when none runs, and stopped again. Sphinx runs in an environment of its own (.venv-site/, pinned in
# tools/site/requirements.txt): the course's .venv, from which the lab image and the workshop bundle are made,
# does not grow by a documentation toolchain.
SITE_EXECUTED ?= $(or $(EOSLAB_EXECUTED_DIR),site-executed)
SITE_OUT ?= build/site
SITE_VENV := .venv-site
SITE_STAMP := $(SITE_VENV)/.installed
$(SITE_STAMP): tools/site/requirements.txt
	$(PYTHON) -m venv $(SITE_VENV)
	$(SITE_VENV)/bin/python -m pip install --quiet $(PIP_FROM) -r tools/site/requirements.txt
	@touch $(SITE_STAMP)

site: setup $(SITE_STAMP)  ## the course as a website in build/site/ from notebooks executed on the cluster (docs/site.md)
	@if $(BIN)/python -m tools.site_build --executed '$(SITE_EXECUTED)' --check 2>/dev/null; then \
	  $(BIN)/python -m tools.site_build --executed '$(SITE_EXECUTED)' --out '$(SITE_OUT)'; \
	else \
	  if $(BIN)/eoslab status >/dev/null 2>&1; then was_up=1; else was_up=; fi; \
	  $(BIN)/eoslab up && $(BIN)/python -m tools.site_build --executed '$(SITE_EXECUTED)' --out '$(SITE_OUT)' --execute; \
	  rc=$$?; if [ -z "$$was_up" ]; then $(BIN)/eoslab down; fi; exit $$rc; \
	fi

site-test: site  ## the built site in Chromium (tests/browser/test_site.py): pages, links, outputs, images
	EOSLAB_SITE_DIR='$(SITE_OUT)' EOSLAB_EXECUTED_DIR='$(SITE_EXECUTED)' $(BIN)/python -m pytest tests/browser/test_site.py \
	  -p no:cacheprovider -q $(PYTEST_ARGS)

lint: $(STAMP)  ## ruff format --check + ruff + mypy (tests/unit/test_lint.py runs the same in `make test`)
	$(BIN)/ruff format --check eoslab examples tests conftest.py tools
	$(BIN)/ruff check eoslab examples tests conftest.py tools
	$(BIN)/mypy eoslab examples tests conftest.py tools

strip: $(STAMP)  ## strip outputs from every notebook before committing
	$(BIN)/nbstripout --keep-id notebooks/*.ipynb labs/*.ipynb solutions/*.ipynb instructor/*.ipynb 2>/dev/null || true  # --keep-id: issues and grading name cells by id
