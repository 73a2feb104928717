#!/bin/sh
# collector.sh - benchmark of the collector gcsnapd: ingest throughput of
# one stream and of 50 concurrent streams, the collector's peak memory while
# it ingests a 5M-object snapshot, and wire bytes as a share of text bytes.
#
# usage: tests/bench/collector.sh [BUILD_DIR]
#
# Starts gcsnapd on free loopback ports with a store in $GS_BENCH_DIR
# (default $TMPDIR/gcsnap-bench, removed afterwards), connects mock agents
# (gcsnap-agent --connect) and times `gcsnap capture --wait`, which returns
# once the snapshot is validated, compressed, synced and in the catalog.
# Sizes and figures: README.md beside this script.
set -eu

usage() {
  cat <<'USAGE'
usage: tests/bench/collector.sh [BUILD_DIR]
  BUILD_DIR  build folder holding bin/gcsnapd, bin/gcsnap, bin/gcsnap-agent
             (default build)
Environment: GS_BENCH_DIR (store and logs), GS_BENCH_ONE (objects of the
single stream, default 1000000), GS_BENCH_FLEET (streams, default 50),
GS_BENCH_EACH (objects per stream, default 100000), GS_BENCH_BIG (objects
of the peak-memory run, default 5000000), GS_SHARED_DIR (for wpfapp.gclog).
USAGE
}

case ${1:-} in -h|--help) usage; exit 0 ;; -*) usage >&2; exit 2 ;; esac
[ $# -le 1 ] || { usage >&2; exit 2; }
build=${1:-build}
bin=$build/bin
one=${GS_BENCH_ONE:-1000000}
fleet=${GS_BENCH_FLEET:-50}
each=${GS_BENCH_EACH:-100000}
big=${GS_BENCH_BIG:-5000000}
root=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}
here=$(cd "$(dirname "$0")" && pwd)
shared=${GS_SHARED_DIR:-$here/../../../shared}
work=$root/collector.$$

for tool in gcsnapd gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || { echo "collector.sh: $bin/$tool not found; build first (cmake --build $build)" >&2; exit 2; }
done
command -v python3 >/dev/null || { echo "collector.sh: needs python3 (for ports and JSON)" >&2; exit 2; }
for n in "$one" "$fleet" "$each" "$big"; do
  case $n in ''|*[!0-9]*|0) echo "collector.sh: sizes must be positive numbers, not '$n'" >&2; exit 2 ;; esac
done

pids=
cleanup() {
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for p in $pids; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work"

note() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf(\"$1\", $2) }"; }
port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# json EXPR: evaluates EXPR on the JSON of stdin, bound to j.
json() { python3 -c "import json, sys; j = json.load(sys.stdin); print($1)"; }

# start_collector NAME: a fresh gcsnapd; sets cpid, url, agents.
start_collector() {
  ap=$(port) hp=$(port)
  agents=127.0.0.1:$ap
  url=http://127.0.0.1:$hp
  "$bin/gcsnapd" --listen "$agents" --http "127.0.0.1:$hp" --store "$work/$1" \
    2>"$work/$1.log" &
  cpid=$!
  pids="$pids $cpid"
  i=0
  until "$bin/gcsnap" devices --collector "$url" >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -lt 200 ] || { note "collector.sh: gcsnapd does not start; see $work/$1.log"; cat "$work/$1.log" >&2; exit 1; }
    sleep 0.05
  done
}

stop_collector() {
  kill "$cpid" 2>/dev/null || true
  wait "$cpid" 2>/dev/null || true
}

# agent SOURCE DEVICE: a connected agent (in the background).
agent() {
  "$bin/gcsnap-agent" --source "$1" --connect "$agents" --device-id "$2" 2>>"$work/agents.log" &
  pids="$pids $!"
}

# wait_devices N: until N devices are connected.
wait_devices() {
  i=0
  while :; do
    n=$("$bin/gcsnap" devices --json --collector "$url" |
        json 'sum(1 for d in j["devices"] if d["connected"])')
    [ "$n" -ge "$1" ] && return 0
    i=$((i + 1))
    [ "$i" -lt 600 ] || { note "collector.sh: only $n of $1 agents connected"; exit 1; }
    sleep 0.05
  done
}

# figures: "objects text_bytes wire_bytes" summed over complete snapshots.
figures() {
  "$bin/gcsnap" snapshots --status complete --json --collector "$url" |
    json '" ".join(str(sum(s[k] for s in j["snapshots"])) for k in ("objects", "text_bytes", "wire_bytes"))'
}

capture() {
  "$bin/gcsnap" capture "$1" --wait --timeout 600 --json --collector "$url" >"$work/capture-$1.json" ||
    { note "collector.sh: capture of $1 failed"; exit 1; }
}

rows=
row() { rows="$rows$(printf '%-26s %10s %8s %9s %12s %8s %10s' "$@")
"; }

# ---- one stream -----------------------------------------------------------
note "one stream of $one objects"
start_collector one
agent "mock:objects=$one,seed=1" one
wait_devices 1
t0=$(now); capture one; t1=$(now)
set -- $(figures)
row "1 stream x $one" "$1" "$(calc '%.2f' "$t1 - $t0")" "$(calc '%.1f' "$2 / 1e6 / ($t1 - $t0)")" \
    "$(calc '%.0f' "$1 / ($t1 - $t0)")" "$(calc '%.1f%%' "100 * $3 / $2")" -
stop_collector

# ---- many streams ---------------------------------------------------------
note "$fleet concurrent streams of $each objects"
start_collector fleet
i=0
while [ "$i" -lt "$fleet" ]; do agent "mock:objects=$each,seed=$((i + 1))" "f$i"; i=$((i + 1)); done
wait_devices "$fleet"
t0=$(now)
cap_pids= i=0
while [ "$i" -lt "$fleet" ]; do capture "f$i" & cap_pids="$cap_pids $!"; i=$((i + 1)); done
failed=0
for p in $cap_pids; do wait "$p" || failed=1; done
t1=$(now)
[ "$failed" = 0 ] || { note "collector.sh: a capture failed"; exit 1; }
set -- $(figures)
row "$fleet streams x $each" "$1" "$(calc '%.2f' "$t1 - $t0")" "$(calc '%.1f' "$2 / 1e6 / ($t1 - $t0)")" \
    "$(calc '%.0f' "$1 / ($t1 - $t0)")" "$(calc '%.1f%%' "100 * $3 / $2")" -
stop_collector

# ---- peak memory ----------------------------------------------------------
note "peak memory while ingesting $big objects"
start_collector big
agent "mock:objects=$big,seed=3" big
wait_devices 1
idle=$(awk '/^VmHWM/ { print $2 }' "/proc/$cpid/status")
t0=$(now); capture big; t1=$(now)
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$cpid/status")
set -- $(figures)
row "1 stream x $big" "$1" "$(calc '%.2f' "$t1 - $t0")" "$(calc '%.1f' "$2 / 1e6 / ($t1 - $t0)")" \
    "$(calc '%.0f' "$1 / ($t1 - $t0)")" "$(calc '%.1f%%' "100 * $3 / $2")" \
    "$(calc '%.1f MB' "$hwm / 1024")"
stop_collector

# ---- the real heap --------------------------------------------------------
if [ -f "$shared/fixtures/wpfapp.gclog" ]; then
  note "wpfapp.gclog through the file source"
  start_collector wpf
  agent "file:$shared/fixtures/wpfapp.gclog" wpf
  wait_devices 1
  t0=$(now); capture wpf; t1=$(now)
  set -- $(figures)
  row "wpfapp.gclog" "$1" "$(calc '%.2f' "$t1 - $t0")" "$(calc '%.1f' "$2 / 1e6 / ($t1 - $t0)")" \
      "$(calc '%.0f' "$1 / ($t1 - $t0)")" "$(calc '%.1f%%' "100 * $3 / $2")" -
  stop_collector
else
  note "no $shared/fixtures/wpfapp.gclog: its row is skipped"
fi

printf '%-26s %10s %8s %9s %12s %8s %10s\n' run objects seconds 'MB/s' 'objects/s' 'wire' 'peak RSS'
printf '%s' "$rows"
printf '\nMB/s: text-equivalent bytes (the .gclog size, 10^6) stored per second of\n'
printf '`gcsnap capture --wait`, all streams together; wire: wire bytes as a share\n'
printf 'of text bytes; peak RSS: VmHWM of gcsnapd after the capture (%.1f MB before).\n' \
  "$(calc '%.1f' "$idle / 1024")"
