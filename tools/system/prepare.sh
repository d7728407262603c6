#!/usr/bin/env bash
# What `make test`'s course and system tiers need from the system, installed in one go while the cluster tier
# runs (tests/suite.py): Debian's Chromium (chromium.sh), then, with `docker`, the Docker engine (docker.sh) and
# the Kafka image (`eoslab image ensure`). One after another: apt-get takes one lock.
#
# usage: tools/system/prepare.sh [docker]
# Environment: PYTHON, the interpreter with the kit installed (default: .venv/bin/python). Exit code: the engine's
# or the image's failure; Chromium's never fails (chromium.sh says why it installed nothing).
set -uo pipefail
cd "$(dirname "$0")/../.."
bash tools/system/chromium.sh
[ "${1:-}" = docker ] || exit 0
bash tools/system/docker.sh ensure && "${PYTHON:-.venv/bin/python}" -m eoslab.cli image ensure
