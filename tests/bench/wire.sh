#!/bin/sh
# wire.sh - how many bytes a snapshot takes on the wire, against its text.
#
# usage: tests/bench/wire.sh [BUILD_DIR]
#
# For mock heaps of 100K, 1M and 10M objects (GS_BENCH_SIZES overrides) and
# the real heap fixtures/wpfapp.gclog of the shared folder when present,
# encodes the snapshot as gcsnap-agent --connect streams it (frames counted,
# not sent) and prints text bytes, wire bytes, their ratio (the target is
# at most 0.45) and the encoding speed, the source's walk and the text
# checksum included. Uses test_wire_roundtrip from a host build.
set -eu

case ${1:-} in
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -le 1 ] || { echo "usage: tests/bench/wire.sh [BUILD_DIR]" >&2; exit 2; }
build=${1:-build}
tool=$build/bin/test_wire_roundtrip
[ -x "$tool" ] || { echo "wire.sh: $tool not found: build the tests first" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
shared=${GS_SHARED_DIR:-$here/../../../shared}
sizes=${GS_BENCH_SIZES:-"100000 1000000 10000000"}

printf '%-28s %12s %14s %14s %7s %9s %12s %10s\n' \
  input objects "text bytes" "wire bytes" ratio seconds objects/s "text MB/s"
row() {
  "$tool" measure "$2" | awk -v name="$1" '{
    for (i = 1; i <= NF; i++) {
      if ($(i+1) == "objects,") o = $i
      if ($(i+1) == "text" && $(i+2) == "bytes,") t = $i
      if ($(i+1) == "wire") w = $i
      if ($i == "ratio") r = $(i+1)
      if ($(i+1) == "s") s = $i
    }
    sub(/,/, "", r)
    printf "%-28s %12d %14d %14d %7s %9.2f %12.0f %10.0f\n", name, o, t, w, r, s, o / s, t / s / 1e6
  }'
}
for n in $sizes; do
  row "mock $n" "mock:objects=$n"
done
if [ -f "$shared/fixtures/wpfapp.gclog" ]; then
  row wpfapp "file:$shared/fixtures/wpfapp.gclog"
else
  echo "wpfapp: $shared/fixtures/wpfapp.gclog not found, skipped"
fi
