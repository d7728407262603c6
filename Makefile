# eoslab — the two commands a learner needs are `make lab` and `make test`.
# Everything else here is what those two call, or a convenience.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# What every tier collects: tests/ and the notebooks under nbval (solutions are not: grading them in
# tests/integration/test_labNN.py IS their run). Each tier is a marker that conftest.py sets from the path.
SUITE := tests $(wildcard notebooks/*.ipynb) --nbval-lax --nbval-current-env --nbval-cell-timeout=120
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

# The whole test suite, what CI runs: four tiers, one pytest each, fastest feedback first; the first that
# fails stops the chain, the recipe exiting with its code. The unit tier runs before anything is installed or
# started. The cluster and course tiers run on pytest-xdist workers (TEST_WORKERS, COURSE_WORKERS), each with a
# cluster of its own (the one started here; worker gwK starts one on ports +K*5000: conftest.py,
# tests/worker_clusters.py): local clusters for the cluster tier (the kit's behaviour), DOCKER clusters for the
# course tier (every notebook, every lab graded, on the containerized cluster; ports +500, +5500 and +10500, their
# volumes deleted after it). The
# local cluster stops after the cluster tier only if it was started here. One runs folder ($EOSLAB_RUNS, removed
# at the end) carries the bench matrix measured by one tier to the next. Each tier's log ends with its slowest
# steps (--durations): where CI's time goes. What the tests need from the system, installed only where
# missing and only as root with apt (EOSLAB_SYSTEM_INSTALL=0 opts out; those tests then skip, saying
# why): Debian's Chromium for tests/browser (tools/system/chromium.sh), and for the course and system tiers a
# Docker engine, compose v2 and a Kafka image (tools/system/docker.sh, which stops at the end the engine it started).
tier = $(BIN)/python -m pytest $(SUITE) -m '$(1)' -p no:cacheprovider --durations=30 --durations-min=15 $(2) $(PYTEST_ARGS)
# The cluster and course tiers mostly wait on Kafka (timeouts, resends), not on the CPU: TEST_WORKERS pytest-xdist
# workers run them, each on a cluster of its own (conftest.py: worker gwK's ports +K*5000). In the system tier
# gw0 runs the tests that use the docker cluster (one per session), then the offline install, while gw1 runs the
# course in the lab container; the docker tests that need only the image go to whichever worker is free
# (conftest.py's PINNED and LEFT_TO_OTHERS).
# TEST_WORKERS=0: one process. The course tier runs on COURSE_WORKERS (three docker clusters on 2 cores: its items
# wait on Kafka's timeouts far more than they compute, docs/reliability.md session 12).
TEST_WORKERS ?= 2
PARALLEL := -n $(TEST_WORKERS)
# The cluster tier runs on CLUSTER_WORKERS, three local clusters (gw0 on the session's ports, gw1 +5000, gw2 +10000),
# for the same reason: 4:55 against 6:03 with two (docs/reliability.md, session 13).
CLUSTER_WORKERS ?= 3
COURSE_WORKERS ?= 3
# The local cluster for a tier: started unless it runs; `$$was_up` tells LOCAL_DOWN whether to stop it.
WAS_UP := if $(BIN)/eoslab status >/dev/null 2>&1; then was_up=1; else was_up=; fi
LOCAL_UP := export EOSLAB_BACKEND=local; $(WAS_UP); $(BIN)/eoslab up
LOCAL_DOWN := if [ -z "$$was_up" ]; then $(BIN)/eoslab down; fi
# In `make test` a further worker's cluster outlives its tier (EOSLAB_KEEP_CLUSTER): it stops beside the
# session's, whatever happened.
WORKERS_DOWN := $(BIN)/python -m tests.worker_clusters down $(CLUSTER_WORKERS)
# The session's cluster and the further workers' stop side by side (~13 s instead of ~26 s), also when the run
# ends early (a failed start, Ctrl-C). Starting them beside the unit tier was measured and dropped: on 2 cores the
# unit tier took 51 s longer for ~35 s saved elsewhere (docs/reliability.md, session 8).
CLUSTERS_DOWN := $(LOCAL_DOWN) & $(WORKERS_DOWN); wait
# The cluster `make test` starts (none was running) keeps its data in the runs folder, removed at the end, as the
# further workers' do beside it (EOSLAB_DATA + -gwK): every run starts from empty logs, as CI's fresh clone does,
# and a learner's kafka-data/ is left as it was. Kept between runs, `__cluster_metadata` grew by ~18,000 records a
# run and lab 02's checks, which read it, with it (24.8 -> 39.0 s over three runs: docs/reliability.md, session 9).
TEST_DATA := if [ -z "$$was_up" ]; then export EOSLAB_DATA="$$runs/kafka-data"; fi
# The course tier's docker clusters: gw0's at +500 started here, gwK's at +500+K*5000 by its worker (conftest.py), all
# with their volumes deleted after the tier (`reset`, side by side), also when it ends early. In a subshell: the
# system tier after it runs with the local settings again.
DOCKER_COURSE_ENV := export EOSLAB_BACKEND=docker EOSLAB_PORT_OFFSET=500 EOSLAB_DATA="$$runs/kafka-data-docker"
DOCKER_COURSE_DOWN := $(BIN)/eoslab reset >/dev/null & $(BIN)/python -m tests.worker_clusters reset $(COURSE_WORKERS) >/dev/null; wait
# The lab image (the system tier's course in the lab container) builds beside the course tier, which does not use it:
# 15-30 s here when the kit changed, ~90 s on a fresh machine.
LAB_IMAGE_LOG = "$$runs/lab-image.log"

# The suite's clusters run C1-compiled brokers (eoslab/topology.py BROKER_JIT_ENV): less CPU at each of the
# tests' many restarts; a learner's cluster (make lab, eoslab up) keeps C2. A cluster already running is used as is.
test test-cluster test-course test-system: export EOSLAB_BROKER_JIT ?= c1

test: setup  ## run the whole suite: test-unit, test-cluster, test-course, test-system (stops at the first failing tier)
	@runs=$$(mktemp -d "$${TMPDIR:-/tmp}/eoslab-runs.XXXXXX") || exit 1; started=; \
	trap 'if [ -n "$$started" ]; then $(CLUSTERS_DOWN); fi; rm -rf "$$runs"; tools/system/docker.sh stop' EXIT; \
	trap 'exit 130' INT TERM; \
	export EOSLAB_BACKEND=local EOSLAB_RUNS="$$runs"; \
	$(call tier,unit) || exit $$?; \
	bash tools/system/chromium.sh || exit 1; \
	started=1; export EOSLAB_BACKEND=local; $(WAS_UP); $(TEST_DATA); $(BIN)/eoslab up && EOSLAB_KEEP_CLUSTER=1 $(call tier,cluster,-n $(CLUSTER_WORKERS)); rc=$$?; \
	started=; $(CLUSTERS_DOWN); [ $$rc = 0 ] || exit $$rc; \
	tools/system/docker.sh ensure || exit 1; \
	$(BIN)/eoslab image ensure || exit 1; \
	$(BIN)/eoslab image ensure --lab >$(LAB_IMAGE_LOG) 2>&1 & lab_image=$$!; \
	( $(DOCKER_COURSE_ENV); trap '$(DOCKER_COURSE_DOWN)' EXIT; trap 'exit 130' INT TERM; \
	  $(BIN)/eoslab up && EOSLAB_KEEP_CLUSTER=1 $(call tier,course,-n $(COURSE_WORKERS)) ) || exit $$?; \
	wait $$lab_image; rc=$$?; cat $(LAB_IMAGE_LOG); [ $$rc = 0 ] || exit $$rc; \
	$(call tier,system,$(PARALLEL))

test-unit: setup  ## tier 1: tests/unit whole, lint and Spark included; no cluster (a few minutes)
	$(call tier,unit)

test-cluster: setup  ## tier 2: the kit's behaviour on the real cluster (tests/integration; starts the cluster)
	@$(LOCAL_UP) && $(call tier,cluster,-n $(CLUSTER_WORKERS)); rc=$$?; $(LOCAL_DOWN); exit $$rc

test-course: setup  ## tier 3: the notebooks under nbval, the labs graded, the course in Chromium (on the cluster of EOSLAB_BACKEND: local unless set)
	@bash tools/system/chromium.sh || exit 1; \
	if [ "$${EOSLAB_BACKEND:-local}" = docker ]; then tools/system/docker.sh ensure && $(BIN)/eoslab image ensure || exit 1; fi; \
	export EOSLAB_BACKEND=$${EOSLAB_BACKEND:-local}; $(WAS_UP); $(BIN)/eoslab up && $(call tier,course,-n $(COURSE_WORKERS)); rc=$$?; $(LOCAL_DOWN); exit $$rc

test-system: setup  ## tier 4: the docker backend and the offline workshop install (as root: installs Docker)
	@tools/system/docker.sh ensure || exit 1; \
	trap 'tools/system/docker.sh stop' EXIT; trap 'exit 130' INT TERM; \
	export EOSLAB_BACKEND=local; $(BIN)/eoslab image ensure || exit 1; $(BIN)/eoslab image ensure --lab || exit 1; \
	$(call tier,system,$(PARALLEL))

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
	  $(LOCAL_UP) && $(BIN)/python -m tools.site_build --executed '$(SITE_EXECUTED)' --out '$(SITE_OUT)' --execute; \
	  rc=$$?; $(LOCAL_DOWN); exit $$rc; \
	fi

site-test: site  ## the built site in Chromium (tests/browser/test_site.py): pages, links, outputs, images
	EOSLAB_SITE_DIR='$(SITE_OUT)' EOSLAB_EXECUTED_DIR='$(SITE_EXECUTED)' $(BIN)/python -m pytest tests/browser/test_site.py \
	  -p no:cacheprovider -q $(PYTEST_ARGS)

lint: $(STAMP)  ## ruff format --check + ruff + mypy (tests/unit/test_lint.py runs the same in `make test`)
	$(BIN)/ruff format --check eoslab tests conftest.py tools
	$(BIN)/ruff check eoslab tests conftest.py tools
	$(BIN)/mypy eoslab tests conftest.py tools

strip: $(STAMP)  ## strip outputs from every notebook before committing
	$(BIN)/nbstripout --keep-id notebooks/*.ipynb labs/*.ipynb solutions/*.ipynb instructor/*.ipynb 2>/dev/null || true  # --keep-id: issues and grading name cells by id
