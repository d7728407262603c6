#!/bin/sh
# copy-classpath.sh CLASSPATH_FILE DEST: copy every jar that Maven's `dependency:build-classpath` wrote into
# CLASSPATH_FILE (one line, entries separated by ':', no newline at its end) into DEST, and list their names,
# one per line, in DEST/classpath.txt (the workshop bundle's layout, read by eoslab._jars.bundled).
# The lab image's registry path runs it (eoslab/_resources/lab/Dockerfile). It fails when a jar is missing or
# when DEST ends up holding fewer jars than the classpath names: a `while read` over `tr ':' '\n'` output drops
# the last entry, which has no newline after it (Spark's Kafka source lost commons-pool2 that way).
set -eu
cp_file=$1
dest=$2
mkdir -p "$dest"
: > "$dest/classpath.txt"
{ tr ':' '\n' < "$cp_file"; echo; } | while IFS= read -r jar; do
  [ -n "$jar" ] || continue
  cp "$jar" "$dest/"
  basename "$jar" >> "$dest/classpath.txt"
done
want=$(tr ':' '\n' < "$cp_file" | grep -c .)
have=$(grep -c . "$dest/classpath.txt")
if [ "$want" -ne "$have" ]; then
  echo "copy-classpath.sh: $cp_file names $want jars, $dest/classpath.txt lists $have" >&2
  exit 1
fi
echo "copy-classpath.sh: $have jars in $dest"
