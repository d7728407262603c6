#!/usr/bin/env bash
# Installs Debian's Chromium for the real-browser test of the course (tests/browser/), when it is missing.
#
# What it does: if no Chromium is on PATH (chromium, chromium-browser, google-chrome) and this is a
# Debian/Ubuntu machine where we are root, it runs `apt-get update` and `apt-get install chromium`
# (~300 MB, once). Otherwise it changes nothing and says why. It never downloads a browser build of
# its own (Playwright's `playwright install` is not used: the test drives the system browser).
#
# Opt out: EOSLAB_SYSTEM_INSTALL=0 (every system install of `make test`, as tools/system/docker.sh) or
# EOSLAB_INSTALL_CHROMIUM=0 (this one only); the browser test is then skipped, with the reason, if there is
# no Chromium). Exit code 0 in every case: a machine without Chromium still runs the rest of `make test`.
set -uo pipefail

say() { echo "tools/system/chromium.sh: $*"; }

for exe in chromium chromium-browser google-chrome; do
  if command -v "$exe" >/dev/null 2>&1; then
    exit 0  # already there: nothing to do, nothing printed
  fi
done

if [ "${EOSLAB_SYSTEM_INSTALL:-1}" = "0" ] || [ "${EOSLAB_INSTALL_CHROMIUM:-1}" = "0" ]; then
  say "no Chromium, and EOSLAB_SYSTEM_INSTALL=0 or EOSLAB_INSTALL_CHROMIUM=0: the browser test will be skipped."
  exit 0
fi
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  say "no Chromium; installing it needs root and apt-get (Debian/Ubuntu): install it yourself" \
      "(e.g. 'sudo apt-get install chromium') or the browser test will be skipped."
  exit 0
fi

say "installing Debian's chromium for the browser test (once, ~300 MB; EOSLAB_INSTALL_CHROMIUM=0 skips this) ..."
export DEBIAN_FRONTEND=noninteractive
# Another process may hold the dpkg lock (unattended upgrades, a second install): wait for it up to 5 min.
lock=(-o DPkg::Lock::Timeout=300)
if apt-get "${lock[@]}" update -qq >/dev/null && apt-get "${lock[@]}" install -y -qq --no-install-recommends chromium >/dev/null; then
  say "installed $(chromium --version 2>/dev/null || echo chromium)."
else
  say "apt-get could not install chromium: the browser test will be skipped (see the reason in its output)."
fi
exit 0
