#!/bin/sh
# analysis.sh - time and memory of the heap analysis: graph load, dominator
# tree and retained sizes, as `gcsnap dominators --by-type` does them.
#
# usage: tests/bench/analysis.sh [--check] [BUILD_DIR]
#
# Captures mock heaps with 2.5 references per object on average (10M
# objects -> 25M references) into $GS_BENCH_DIR once, then runs
# `gcsnap dominators --by-type` on each and prints wall time, peak RSS and
# RSS per object and reference, next to the budget: 10 s for 10M objects on
# two cores, 64 bytes per object plus 8 per reference. Sizes:
# $GS_BENCH_SIZES (default "1000000 10000000 50000000"); a size is skipped,
# and says so, when the machine lacks the memory or disk it needs.
# --check exits 1 when the 10M row misses a budget.
set -eu

check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
build=${1:-build}
sizes=${GS_BENCH_SIZES:-"1000000 10000000 50000000"}
work=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}
agent=$build/bin/gcsnap-agent
gcsnap=$build/bin/gcsnap
for p in "$agent" "$gcsnap"; do
  [ -x "$p" ] || { echo "analysis.sh: $p not found; build first" >&2; exit 2; }
done
command -v /usr/bin/time >/dev/null || { echo "analysis.sh: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
mkdir -p "$work"

kb_free() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
disk_kb() { df -Pk "$work" | awk 'NR == 2 { print $4 }'; }

printf '%-10s %-10s %9s %10s %13s %14s  %s\n' objects references seconds "peak RSS" "B/obj+8B/ref" "budget RSS" result
missed=0
for n in $sizes; do
  refs_est=$((n * 5 / 2))
  need_kb=$(( (n * 64 + refs_est * 8) / 1024 ))
  dump=$work/mock-$n-deg2.5.gclog
  if [ ! -s "$dump" ] && [ "$(disk_kb)" -lt $((n * 45 / 1024 + 1048576)) ]; then
    printf '%-10s skipped: not enough disk for the dump\n' "$n"; continue
  fi
  if [ "$(kb_free)" -lt $((need_kb * 3 / 2)) ]; then
    printf '%-10s skipped: %s MB of memory available, about %s MB needed\n' "$n" $(($(kb_free) / 1024)) $((need_kb * 3 / 2 / 1024)); continue
  fi
  if [ ! -s "$dump" ]; then
    "$agent" --source "mock:objects=$n,seed=1,degree=2.5" --clock 0 --out "$dump" >/dev/null
  fi
  refs=$(awk '$1 == "o" { r += NF - 4 } END { print r }' "$dump")
  /usr/bin/time -f '%e %M' -o "$work/time.txt" "$gcsnap" dominators --by-type --top 5 "$dump" >/dev/null
  read -r secs rss_kb <"$work/time.txt"
  budget_kb=$(( (n * 64 + refs * 8) / 1024 ))
  per=$(awk -v r="$rss_kb" -v n="$n" -v e="$refs" 'BEGIN { printf "%.1f", (r * 1024 - 8 * e) / n }')
  verdict=ok
  if [ "$rss_kb" -gt "$budget_kb" ]; then verdict="over memory budget"; fi
  if [ "$n" -eq 10000000 ] && awk -v s="$secs" 'BEGIN { exit !(s > 10) }'; then verdict="over 10 s"; fi
  [ "$verdict" = ok ] || { [ "$n" -eq 10000000 ] && missed=1; }
  printf '%-10s %-10s %9s %7s MB %13s %11s MB  %s\n' "$n" "$refs" "$secs" $((rss_kb / 1024)) "$per" \
    $((budget_kb / 1024)) "$verdict"
done
[ "$check" -eq 1 ] && [ "$missed" -eq 1 ] && exit 1
exit 0
