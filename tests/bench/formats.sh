#!/bin/sh
# formats.sh - read throughput of the foreign heap file readers
# (collector/formats) on large real heaps, next to the record reader's on
# the same heap.
#
# usage: tests/bench/formats.sh [BUILD_DIR]
#
# Makes, once, into $GS_BENCH_DIR: a V8 heap snapshot of a Node process
# holding $GS_BENCH_OBJECTS objects (default 2,000,000: a Map of objects
# each with a string and an array) and an HPROF dump (jcmd GC.heap_dump) of
# a JVM holding as many objects, and a V8 snapshot whose edges land
# anywhere among its nodes (a mock heap of as many objects with references
# to random objects, `gcsnap export --format heapsnapshot`), since a
# converter that looks up each edge's node would be fast only on the
# neighbourly edges Node writes. For each it times `gcsnap validate` on the
# file (read, converted on the reader's thread, parsed, validated) and on
# the same heap converted to .gclog (the record reader alone), and prints
# MB/s of input, objects/s, peak RSS and the ratio of the two times.
# Needs node, javac, jcmd and /usr/bin/time; a format whose tool is missing
# is skipped and says so.
set -eu
build=${1:-build}
n=${GS_BENCH_OBJECTS:-2000000}
work=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}/formats
gcsnap=$build/bin/gcsnap
[ -x "$gcsnap" ] || { echo "formats.sh: $gcsnap not found; build first" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "formats.sh: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
mkdir -p "$work"

make_v8() {
  node --max-old-space-size=8192 -e '
    class Item { constructor(i) { this.i = i; this.name = "item" + i; this.tags = [i]; } }
    const keep = new Map();
    for (let i = 0; i < Number(process.argv[1]) / 3; i++) keep.set(i, new Item(i));
    globalThis.keep = keep;
    require("v8").writeHeapSnapshot(process.argv[2]);' "$n" "$1"
}

make_hprof() {
  cat > "$work/Big.java" <<'JAVA'
import java.util.ArrayList;
public class Big {
  static final ArrayList<Object[]> KEEP = new ArrayList<>();
  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]) / 3;
    for (int i = 0; i < n; i++) KEEP.add(new Object[] {Integer.valueOf(i), "s" + i});
    System.out.println("ready");
    System.out.flush();
    Thread.sleep(600000);
  }
}
JAVA
  javac -d "$work" "$work/Big.java"
  java -Xmx4g -XX:+UseSerialGC -cp "$work" Big "$n" > "$work/java.out" &
  pid=$!
  i=0
  while ! grep -q ready "$work/java.out" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  jcmd $pid GC.heap_dump "$1" > /dev/null
  kill $pid
  wait $pid 2>/dev/null || true
}

# time_validate FILE -> "seconds peak_kb"
time_validate() {
  /usr/bin/time -f '%e %M' -o "$work/time" "$gcsnap" validate "$1" > /dev/null 2>&1 || true
  cat "$work/time"
}

printf '%-13s %10s %8s %8s %8s %11s %9s  %s\n' input objects "MB in" seconds "MB/s" "objects/s" "peak RSS" "time / .gclog"
# measure NAME FILE OBJECTS BASE_SECONDS -> one row; sets secs
measure() {
  set -- "$1" "$2" "$3" "$4" $(time_validate "$2")
  secs=$5
  awk -v name="$1" -v o="$3" -v b="$(stat -c %s "$2")" -v s="$5" -v kb="$6" -v base="$4" 'BEGIN {
    if (s <= 0) s = 0.01
    printf "%-13s %10d %8.1f %8.2f %8.1f %11.0f %6.0f MB  %s\n", name, o, b / 1e6, s, b / 1e6 / s, o / s,
           kb / 1024, base ? sprintf("%.2fx", s / base) : "(baseline)" }'
}
row() {  # row FORMAT FILE: the record reader on the same heap first
  [ -s "$2.gclog" ] || "$gcsnap" convert "$2" "$2.gclog"
  objects=$("$gcsnap" summary --json --top 1 "$2.gclog" | sed -n 's/^  "objects": \([0-9]*\),/\1/p')
  measure ".gclog" "$2.gclog" "$objects" 0
  measure "$1" "$2" "$objects" "$secs"
}

if command -v node >/dev/null; then
  v8=$work/node-$n.heapsnapshot
  [ -s "$v8" ] || make_v8 "$v8"
  row heapsnapshot "$v8"
else
  echo "heapsnapshot  skipped: node is not installed"
fi
random=$work/random-$n.heapsnapshot
if [ ! -s "$random" ]; then
  "$build/bin/gcsnap-agent" --source "mock:objects=$n,seed=1,degree=2.8,targets=random" --clock 0 \
    --out "$work/random-$n.gclog"
  "$gcsnap" export --format heapsnapshot -o "$random" "$work/random-$n.gclog"
  rm -f "$work/random-$n.gclog"
fi
row "v8 random" "$random"
if command -v javac >/dev/null && command -v jcmd >/dev/null; then
  hprof=$work/java-$n.hprof
  [ -s "$hprof" ] || make_hprof "$hprof"
  row hprof "$hprof"
else
  echo "hprof         skipped: javac or jcmd is not installed"
fi
