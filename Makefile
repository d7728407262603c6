# eoslab — the two commands a learner needs are `make lab` and `make test`.
# Everything else here is what those two call, or a convenience.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=
LAB_ARGS ?=

.DEFAULT_GOAL := help
.PHONY: help setup lab test test-unit test-cluster test-course test-system unit up down status heal reset compose image lint strip site site-test

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

# A workshop copy (`eoslab workshop pack`) installs from its own wheels: no network, no package index.
PIP_FROM := $(if $(wildcard .offline/wheels/*.whl),--no-index --find-links=.offline/wheels,)

# uv installs the ~700 MB of wheels: ~47 s where pip takes ~110 s on 2 cores, cold caches (docs/reliability.md).
# pip installs uv itself (one wheel, pinned: its flags are the Makefile's); --system-certs: the system's
# certificates, as pip uses them (a proxy's CA); --compile-bytecode: the .pyc files written once here, as pip
# does, not by every kernel and command that imports pandas or Jupyter (with PYTHONDONTWRITEBYTECODE set, as on
# CI's machines, nothing would ever write them: each process compiled them again, twice the CPU of a kernel).
UV_INSTALL = $(BIN)/uv pip install --system-certs --compile-bytecode --python $(BIN)/python $(PIP_FROM)

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "eoslab needs Python 3.10+: install it, or use `conda env create -f environment.yml`.")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet $(PIP_FROM) 'uv==0.13.9'
	$(UV_INSTALL) -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)  ## create .venv, install the kit (first run: ~700 MB of wheels), check Java 17+, resolve the Kafka jars
	@$(BIN)/eoslab setup

lab: setup  ## start the cluster, open the course in JupyterLab (EOSLAB_BACKEND=docker: containers; LAB_ARGS="--port=8890")
	@if [ "$${EOSLAB_BACKEND:-local}" = docker ]; then tools/system/docker.sh ensure && $(BIN)/eoslab image ensure; fi
	$(BIN)/eoslab up
	$(BIN)/eoslab lab $(LAB_ARGS)

# tests/suite.py runs the tiers; its docstring says what each does.
SUITE_RUN = $(BIN)/python -m tests.suite

test: setup  ## the whole suite, what CI runs: unit, cluster, course, system (stops at the first failing tier; own ports, never your cluster)
	$(SUITE_RUN) -- $(PYTEST_ARGS)

test-unit: setup  ## tier 1: tests/unit whole, lint and Spark included; no cluster (a few minutes)
	$(SUITE_RUN) unit -- $(PYTEST_ARGS)

test-cluster: setup  ## tier 2: the kit's behaviour on the real cluster (tests/integration, on local clusters of its own)
	$(SUITE_RUN) cluster -- $(PYTEST_ARGS)

test-course: setup  ## tier 3: the notebooks under nbval, the labs graded, the browser (docker clusters; EOSLAB_COURSE_BACKEND=local: local ones)
	$(SUITE_RUN) course -- $(PYTEST_ARGS)

test-system: setup  ## tier 4: the docker backend, the offline workshop install, the course in the lab container (root: installs Docker)
	$(SUITE_RUN) system -- $(PYTEST_ARGS)

unit: $(STAMP)  ## the unit tests that need no cluster, no JVM and no lint run, in seconds (tests/unit -m "not jvm and not lint")
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

# The course as a website: docs/site.md says what it is built from and why Sphinx has a .venv-site/ of its own.
SITE_EXECUTED ?= $(or $(EOSLAB_EXECUTED_DIR),site-executed)
SITE_OUT ?= build/site
SITE_VENV := .venv-site
SITE_STAMP := $(SITE_VENV)/.installed
$(SITE_STAMP): tools/site/requirements.txt | $(STAMP)
	$(PYTHON) -m venv $(SITE_VENV)
	$(BIN)/uv pip install --quiet --system-certs --compile-bytecode --python $(SITE_VENV)/bin/python $(PIP_FROM) -r tools/site/requirements.txt
	@touch $(SITE_STAMP)

site: setup $(SITE_STAMP)  ## the course as a website in build/site/ from the notebooks a run executed (a missing one: run here)
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
	$(BIN)/nbstripout --keep-id notebooks/*.ipynb labs/*.ipynb solutions/*.ipynb instructor/*.ipynb 2>/dev/null || true  # --keep-id: tests, issues and grading name cells by id
