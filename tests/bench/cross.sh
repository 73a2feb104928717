#!/bin/sh
# cross.sh - capture speed of the cross-built agent under its emulator, next
# to the host agent's, and the stripped size of the device build.
#
# usage: tests/bench/cross.sh HOST_BUILD CROSS_BUILD [OBJECTS]
#
# HOST_BUILD and CROSS_BUILD are build folders (a host build, and one made
# with a toolchain file from toolchains/). Both agents capture the mock heap
# of OBJECTS objects (default 1000000, seed 1) into /dev/null with --json;
# the fastest of GS_BENCH_REPEAT runs (default 3) is kept. The cross agent
# runs through CROSS_BUILD/bin/gcsnap-agent-run (qemu-arm or wine). When
# CROSS_BUILD has bin/gcsnap-agent-min (the build without the mock and
# demo sources), its stripped size is printed too.
set -eu

[ $# -ge 2 ] && [ $# -le 3 ] ||
  { echo "usage: tests/bench/cross.sh HOST_BUILD CROSS_BUILD [OBJECTS]" >&2; exit 2; }
host=$1/bin/gcsnap-agent
cross=$2/bin/gcsnap-agent-run
objects=${3:-1000000}
repeat=${GS_BENCH_REPEAT:-3}
for f in "$host" "$cross"; do
  [ -x "$f" ] || { echo "cross.sh: $f not found; build first" >&2; exit 2; }
done

# best AGENT: the highest objects_per_second of $repeat runs.
best() {
  i=0 top=0
  while [ "$i" -lt "$repeat" ]; do
    rate=$("$1" --source "mock:objects=$objects,seed=1" --out /dev/null --json |
           sed -n 's/.*"objects_per_second":\([0-9]*\).*/\1/p')
    [ -n "$rate" ] || { echo "cross.sh: no figure from $1" >&2; exit 1; }
    [ "$rate" -gt "$top" ] && top=$rate
    i=$((i + 1))
  done
  echo "$top"
}

host_rate=$(best "$host")
cross_rate=$(best "$cross")
printf '%-28s %12s objects/s\n' "host agent" "$host_rate"
printf '%-28s %12s objects/s  (%s%% of host)\n' "cross agent (emulated)" "$cross_rate" \
  "$(awk -v a="$cross_rate" -v b="$host_rate" 'BEGIN { printf "%.1f", 100 * a / b }')"
min=$2/bin/gcsnap-agent-min
if [ -x "$min.stripped" ] || [ -f "$min.stripped" ]; then
  printf '%-28s %12s bytes\n' "device build, stripped" "$(wc -c <"$min.stripped")"
fi
