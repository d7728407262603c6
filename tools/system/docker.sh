#!/usr/bin/env bash
# A Docker engine and `docker compose` v2 for the docker backend's tests (`make test` calls this).
#
#   tools/system/docker.sh ensure   make the engine answer: install what is missing, start it if stopped
#   tools/system/docker.sh stop     stop the engine, but only if `ensure` started it
#   tools/system/docker.sh why      print why the docker tests cannot run here (nothing when they can)
#
# It installs system packages ONLY when every one of these holds, and says what it installs first:
#   - it runs as root (it never calls sudo),
#   - apt-get is here and the OS is Debian-like (/etc/debian_version),
#   - EOSLAB_SYSTEM_INSTALL is not 0 (set EOSLAB_SYSTEM_INSTALL=0 to opt out: the docker tests then skip).
# What it installs, from the OS's own apt sources:
#   docker.io (the engine, containerd, runc, iptables) and debootstrap (the local image's base);
#   compose v2: Ubuntu's docker-compose-v2, or Debian's docker-compose when it is v2 (trixie and later).
#   On Debian 12 (bookworm), whose docker-compose is v1, the ONE package docker-compose is taken from
#   trixie through a throw-away apt configuration under /var/cache/eoslab: no trixie source is added to
#   the system, so nothing else ever comes from trixie.
# The engine it starts (systemd's docker.service, or a plain `dockerd` where there is no systemd) is
# recorded in $STATE, and `stop` stops exactly that one. An engine that already ran is left alone.
set -uo pipefail

STATE=${EOSLAB_DOCKER_STATE:-/var/run/eoslab-dockerd.state}
DOCKERD_LOG=${EOSLAB_DOCKERD_LOG:-/var/log/eoslab-dockerd.log}
APT_TRIXIE=/var/cache/eoslab/apt-trixie

say() { echo "eoslab docker: $*" >&2; }

limit() {  # `timeout SECONDS CMD...` where coreutils' timeout exists (macOS has none)
  if command -v timeout >/dev/null; then timeout "$@"; else shift; "$@"; fi
}

engine_answers() {
  local out
  out=$(limit 20 docker info --format '{{.ServerVersion}}' 2>/dev/null) && [ -n "$out" ]
}

compose_v2() {
  local v
  v=$(limit 20 docker compose version --short 2>/dev/null) || return 1
  v=${v#v}
  [ "${v%%.*}" -ge 2 ] 2>/dev/null
}

why_not() {  # one sentence, or nothing when the docker tests can run
  if command -v docker >/dev/null && engine_answers && compose_v2; then return 0; fi
  if ! command -v docker >/dev/null; then echo "the docker command is not installed"; return 0; fi
  if ! engine_answers; then echo "no Docker engine answers (docker info fails)"; return 0; fi
  echo "the docker compose v2 plugin is missing"
}

may_install() {  # prints the reason when this machine may not be changed
  if [ "${EOSLAB_SYSTEM_INSTALL:-1}" = 0 ]; then echo "EOSLAB_SYSTEM_INSTALL=0 (opted out)"; return 1; fi
  if [ "$(id -u)" != 0 ]; then echo "not root (install Docker yourself, or run as root)"; return 1; fi
  if ! command -v apt-get >/dev/null || [ ! -f /etc/debian_version ]; then
    echo "not a Debian-like system with apt-get (install Docker yourself)"; return 1
  fi
  return 0
}

os_field() { (. /etc/os-release && eval "echo \${$1:-}"); }

apt_install() {
  say "apt-get install $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" >/tmp/eoslab-apt.log 2>&1 \
    || { tail -5 /tmp/eoslab-apt.log >&2; say "apt-get install $* failed (log: /tmp/eoslab-apt.log)"; return 1; }
}

candidate() { apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}' | grep -v '(none)'; }

install_compose_from_trixie() {
  say "compose v2 is not in $(os_field VERSION_CODENAME): taking the one package docker-compose from trixie"
  mkdir -p "$APT_TRIXIE/lists/partial" "$APT_TRIXIE/cache/archives/partial" "$APT_TRIXIE/sources" "$APT_TRIXIE/debs"
  cat >"$APT_TRIXIE/sources/trixie.sources" <<SOURCES
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$APT_TRIXIE/sources"
    -o "Dir::State::Lists=$APT_TRIXIE/lists" -o "Dir::Cache=$APT_TRIXIE/cache"
    -o "APT::Get::List-Cleanup=0" -o "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false"
    -o "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled=false")
  apt-get -q "${opts[@]}" update >/tmp/eoslab-apt.log 2>&1 || { tail -5 /tmp/eoslab-apt.log >&2; return 1; }
  rm -f "$APT_TRIXIE"/debs/*.deb
  (cd "$APT_TRIXIE/debs" && apt-get -q "${opts[@]}" download docker-compose >>/tmp/eoslab-apt.log 2>&1) \
    || { tail -5 /tmp/eoslab-apt.log >&2; return 1; }
  apt_install "$APT_TRIXIE"/debs/docker-compose_*.deb
}

install_missing() {
  local pkgs=()
  if [ ! -x /usr/bin/dockerd ] && ! command -v dockerd >/dev/null; then pkgs+=(docker.io); fi
  command -v debootstrap >/dev/null || pkgs+=(debootstrap)
  local compose_pkg=""
  if ! compose_v2_installed; then
    if [ -n "$(candidate docker-compose-v2)" ]; then compose_pkg=docker-compose-v2
    elif v=$(candidate docker-compose) && [ "${v%%.*}" -ge 2 ] 2>/dev/null; then compose_pkg=docker-compose
    elif [ "$(os_field ID)" = debian ]; then compose_pkg=trixie
    else say "no compose v2 package for $(os_field PRETTY_NAME): install the docker compose plugin yourself"; return 1
    fi
  fi
  if [ ${#pkgs[@]} -eq 0 ] && [ -z "$compose_pkg" ]; then return 0; fi
  say "installing what the docker tests need (opt out: EOSLAB_SYSTEM_INSTALL=0): ${pkgs[*]} ${compose_pkg:+compose v2}"
  say "apt-get update"
  apt-get update -q >/tmp/eoslab-apt.log 2>&1 || { tail -5 /tmp/eoslab-apt.log >&2; return 1; }
  if [ -z "$(candidate docker-compose-v2)" ] && [ "$compose_pkg" = docker-compose-v2 ]; then compose_pkg=trixie; fi
  if [ ${#pkgs[@]} -gt 0 ]; then apt_install "${pkgs[@]}" || return 1; fi
  case "$compose_pkg" in
    "") ;;
    trixie) install_compose_from_trixie || return 1 ;;
    *) apt_install "$compose_pkg" || return 1 ;;
  esac
}

compose_v2_installed() {  # the plugin binary, whether or not an engine runs
  local v
  v=$(docker compose version --short 2>/dev/null) || return 1
  v=${v#v}
  [ "${v%%.*}" -ge 2 ] 2>/dev/null
}

start_engine() {
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    say "starting docker.service (systemd)"
    systemctl start docker || return 1
    echo systemd >"$STATE"
  else
    say "starting dockerd (log: $DOCKERD_LOG)"
    # setsid: the engine outlives this script; its pid goes to $STATE so `stop` ends exactly it.
    setsid dockerd --pidfile /var/run/eoslab-dockerd.pid >>"$DOCKERD_LOG" 2>&1 </dev/null &
    echo "pid $!" >"$STATE"
  fi
  local i
  for i in $(seq 1 60); do
    if engine_answers; then
      if [ -s /var/run/eoslab-dockerd.pid ] && [ "$(cat "$STATE")" != systemd ]; then
        echo "pid $(cat /var/run/eoslab-dockerd.pid)" >"$STATE"
      fi
      return 0
    fi
    sleep 0.5
  done
  say "the engine did not answer within 30 s: see $DOCKERD_LOG"
  return 1
}

ensure() {
  if command -v docker >/dev/null && engine_answers && compose_v2; then return 0; fi
  local why
  if ! why=$(may_install); then
    say "docker tests will be skipped: $(why_not) and this script changes nothing here: $why"
    return 0
  fi
  install_missing || { say "could not install Docker; set EOSLAB_SYSTEM_INSTALL=0 to run the tests without it"; return 1; }
  if ! engine_answers; then
    start_engine || return 1
  fi
  compose_v2 || { say "docker compose v2 is still missing after the install"; return 1; }
  say "engine $(docker info --format '{{.ServerVersion}}'), compose $(docker compose version --short)"
}

alive() {  # a zombie (ended, not yet reaped by its parent) counts as stopped
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

stop() {
  [ -f "$STATE" ] || return 0
  local what
  what=$(cat "$STATE")
  case "$what" in
    systemd) say "stopping docker.service (started by ensure)"; systemctl stop docker docker.socket ;;
    pid\ *)
      local pid=${what#pid }
      if alive "$pid"; then
        say "stopping dockerd (pid $pid, started by ensure)"
        kill -TERM "$pid"
        local i
        for i in $(seq 1 60); do alive "$pid" || break; sleep 0.5; done
        if alive "$pid"; then say "dockerd $pid did not stop in 30 s: SIGKILL"; kill -KILL "$pid"; fi
      fi ;;
  esac
  rm -f "$STATE"
}

case "${1:-}" in
  ensure) ensure ;;
  stop) stop ;;
  why) why_not ;;
  *) echo "usage: $0 ensure|stop|why" >&2; exit 2 ;;
esac
