#!/usr/bin/env bash
# A laptop with no network: install a learner copy from its workshop bundle, then `make lab`.
#
# Usage (as tests/integration/test_workshop_offline.py runs it, as root):
#   unshare --net -- bash offline_install.sh LEARNER_DIR HOME_DIR PYTHON
# Inside the new network namespace only loopback exists (brought up here): pip and Maven cannot
# reach anything. HOME_DIR is an empty home: no ~/.m2, no ~/.cache/pip, no ~/.cache/eoslab, so
# nothing the packing machine had cached can help. Prints one "STEP name seconds" line per step,
# and "OK" at the end; any failure exits non-zero with the failing command's output.
set -euo pipefail
learner=$1 home=$2 python=$3
port=8899 token=offline-test

ip link set lo up
if python3 - <<'PY' 2>/dev/null; then echo "the network is reachable: this is not an offline test" >&2; exit 3; fi
import socket; socket.create_connection(("pypi.org", 443), timeout=3)
PY

export HOME=$home PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 EOSLAB_PROGRESS=0
# PYTHONPATH too: a checkout on it (a shared venv run with PYTHONPATH=checkout) would shadow the copy's own eoslab,
# whose folders (.offline, kafka-data) are found from where the package lies.
unset EOSLAB_PORT_OFFSET EOSLAB_DATA EOSLAB_CACHE EOSLAB_OFFLINE KAFKA_HOME XDG_CACHE_HOME PYTHONPATH
mkdir -p "$HOME"
cd "$learner"
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
step() { local name=$1; shift; local t0=$EPOCHREALTIME; "$@"; echo "STEP $name $(since "$t0")"; }

lab_pid=
cleanup() {
  if [ -n "$lab_pid" ]; then kill -TERM -- "-$lab_pid" 2>/dev/null || true; fi
  [ -x .venv/bin/eoslab ] && .venv/bin/eoslab down >/dev/null 2>&1 || true
}
trap cleanup EXIT

# Runs "$@" with its output in the log file $1; on failure shows the log's tail.
logged() { local log=$1; shift; "$@" > "$log" 2>&1 || { tail -40 "$log"; return 1; }; }

step install logged setup.log make setup PYTHON="$python"
grep -q "class-data-sharing archive" setup.log

# `make lab`, as a learner types it (its own process group, so it can be stopped whole).
setsid make lab LAB_ARGS="--no-browser --port=$port --IdentityProvider.token=$token" > lab.log 2>&1 &
lab_pid=$!
t0=$EPOCHREALTIME
for _ in $(seq 1 180); do
  if curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $token" \
       "http://127.0.0.1:$port/api/contents/notebooks/index.ipynb" 2>/dev/null | grep -q 200; then
    break
  fi
  kill -0 "$lab_pid" 2>/dev/null || { tail -40 lab.log; exit 1; }
  sleep 1
done
echo "STEP lab $(since "$t0")"
code() { curl -s -o /dev/null -w '%{http_code}' -H "Authorization: token $token" "http://127.0.0.1:$port/api/contents/$1"; }
echo "HTTP notebooks/index.ipynb $(code notebooks/index.ipynb)"
echo "HTTP labs/lab01_idempotence.ipynb $(code labs/lab01_idempotence.ipynb)"
echo "HTTP solutions $(code solutions)"

# The index runs top to bottom in the learner's kernel: doctor, the cluster, its diagram.
step index logged nbconvert.log .venv/bin/jupyter nbconvert --to notebook --execute \
  --ExecutePreprocessor.timeout=300 --output "$home/index.out.ipynb" notebooks/index.ipynb
echo "CLASSPATH $(cat "$HOME/.cache/eoslab/kafka-"*.classpath | tr ':' '\n' | head -1)"
echo OK
