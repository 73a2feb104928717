#!/bin/sh
# agent.sh - benchmark of gcsnap-agent: walk and write speed, peak memory,
# and the capture pause of the runtime, as a table.
#
# usage: tests/bench/agent.sh [--json] [--check] [BUILD_DIR]
#
# For 100K, 1M and 5M objects (GS_BENCH_SIZES overrides), captures the mock
# heap and, when the agent has it, the demo application's heap on the
# instrumented runtime, each into a file in $GS_BENCH_DIR (default
# $TMPDIR/gcsnap-bench, removed afterwards). Figures come from the agent's
# own --json line. README.md beside this script explains them.
set -eu

usage() {
  cat <<'EOF'
usage: tests/bench/agent.sh [--json] [--check] [BUILD_DIR]
  BUILD_DIR  build folder holding bin/gcsnap-agent (default build)
  --json     print the figures as one JSON object instead of a table
  --check    exit 1 when the 5M-object mock walk exceeds its memory bound
Environment: GS_BENCH_DIR (where dumps are written), GS_BENCH_SIZES (object
counts, default "100000 1000000 5000000"), GS_BENCH_REPEAT (runs per row,
fastest kept; default 3).
EOF
}

json=0
check=0
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --check) check=1 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "agent.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -le 1 ] || { usage >&2; exit 2; }

build=${1:-build}
agent=$build/bin/gcsnap-agent
sizes=${GS_BENCH_SIZES:-100000 1000000 5000000}
repeat=${GS_BENCH_REPEAT:-3}
work=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}
out=$work/agent-bench.$$.gclog

# The walk streams: its peak RSS must not grow with the heap.
rss_bound_kb=16384

[ -x "$agent" ] || { echo "agent.sh: $agent not found; build first (cmake --build $build)" >&2; exit 2; }
case $repeat in ''|*[!0-9]*|0) echo "agent.sh: GS_BENCH_REPEAT must be a positive number" >&2; exit 2 ;; esac
for n in $sizes; do
  case $n in ''|*[!0-9]*) echo "agent.sh: GS_BENCH_SIZES holds '$n', not a number" >&2; exit 2 ;; esac
done
mkdir -p "$work"
trap 'rm -f "$out"' EXIT INT TERM

sources=mock
if "$agent" --help | grep -q '^  demo'; then sources="mock demo"; fi

say() { [ "$json" = 1 ] || printf '%s\n' "$*"; }
note() { printf '%s\n' "$*" >&2; }
calc() { awk "BEGIN { printf(\"$1\", $2) }"; }
# field JSON KEY: a number from the agent's --json line.
field() { printf '%s\n' "$1" | sed -n "s/.*\"$2\":\([0-9.]*\).*/\1/p"; }

# best SOURCE N: the agent's --json line of the fastest of $repeat runs,
# with the largest peak RSS of them.
best() {
  b='' b_s='' max_rss=0 i=0
  while [ "$i" -lt "$repeat" ]; do
    line=$("$agent" --source "$1:objects=$2" --out "$out" --json) ||
      { note "agent.sh: gcsnap-agent --source $1:objects=$2 failed"; exit 1; }
    s=$(field "$line" seconds)
    rss=$(field "$line" peak_rss_kb)
    [ "$rss" -gt "$max_rss" ] && max_rss=$rss
    if [ -z "$b" ] || [ "$(calc '%d' "$s < $b_s")" = 1 ]; then b=$line b_s=$s; fi
    i=$((i + 1))
  done
  printf '%s\n' "$b" | sed "s/\"peak_rss_kb\":[0-9]*/\"peak_rss_kb\":$max_rss/"
}

say "gcsnap-agent: captures written to $work (best of $repeat runs)"
say ""
say "$(printf '%-6s %10s %9s %12s %9s %8s %10s %10s' source objects seconds 'objects/s' MB 'MB/s' 'peak RSS' 'pause')"
rows=
missed=0
for src in $sources; do
  for n in $sizes; do
    note "capturing $src:objects=$n"
    line=$(best "$src" "$n")
    objs=$(field "$line" objects)
    secs=$(field "$line" seconds)
    bytes=$(field "$line" bytes)
    rss=$(field "$line" peak_rss_kb)
    pause=$(field "$line" pause_us)
    if [ "$src" = demo ]; then pause_txt=$(calc '%.1f ms' "$pause / 1000"); else pause_txt=-; fi
    verdict=
    if [ "$src" = mock ] && [ "$n" -ge 5000000 ]; then
      if [ "$rss" -lt "$rss_bound_kb" ]; then verdict="   RSS < $((rss_bound_kb / 1024)) MB: ok"
      else verdict="   RSS < $((rss_bound_kb / 1024)) MB: MISSED"; missed=1; fi
    fi
    say "$(calc '%-6s %10d %9.3f %12.0f %9.1f %8.1f %7.1f MB %10s' \
      "\"$src\", $objs, $secs, $objs / ($secs > 0 ? $secs : 1e-9), $bytes / 1e6, $bytes / 1e6 / ($secs > 0 ? $secs : 1e-9), $rss / 1024, \"$pause_txt\"")$verdict"
    rows="${rows:+$rows,}$line"
  done
done
say ""
say "objects: objects walked (the demo holds more than it was filled with);"
say "seconds: walk and write, sync included; MB: bytes written (10^6);"
say "peak RSS: of the agent process (for demo, the runtime's heap included);"
say "pause: time the demo program was stopped for the capture."

if [ "$json" = 1 ]; then
  printf '{"rss_bound_kb":%s,"repeat":%s,"rows":[%s]}\n' "$rss_bound_kb" "$repeat" "$rows"
fi
if [ "$check" = 1 ] && [ "$missed" = 1 ]; then exit 1; fi
exit 0
