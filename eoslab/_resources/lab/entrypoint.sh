#!/bin/sh
# The lab container's entrypoint (under tini). As root, it first becomes the owner of /course, the bind
# mount of the learner's course folder: on a Linux host, files the learner saves stay theirs, not root's
# (a course folder owned by root, or no bind mount, keeps root). The engine's socket's group is kept, so the
# kit still drives the nodes through it. Then, for `eoslab lab` and `eoslab grade`, `eoslab up` starts what
# is not running (the nodes, with --no-recreate; never this lab service) and the fault proxy IN this
# container (its front ports are published by the lab service), and waits until the cluster is ready.
set -eu
if [ "$(id -u)" = 0 ] && [ -z "${EOSLAB_LAB_USER_SET:-}" ]; then
  uid=$(stat -c %u /course); gid=$(stat -c %g /course)
  if [ "$uid" != 0 ]; then
    groups=$gid
    if [ -S /var/run/docker.sock ]; then groups="$groups,$(stat -c %g /var/run/docker.sock)"; fi
    export EOSLAB_LAB_USER_SET=1 HOME=/home/learner
    exec setpriv --reuid="$uid" --regid="$gid" --groups="$groups" -- "$0" "$@"
  fi
fi
export HOME="${HOME:-/root}"
if [ "${1:-}" = eoslab ] && { [ "${2:-}" = lab ] || [ "${2:-}" = grade ]; }; then
  echo "eoslab lab container: starting the cluster and the fault proxy (eoslab up) ..."
  eoslab up
fi
exec "$@"
