#!/bin/sh
# run.sh - benchmark of reading, validating and loading large dumps.
#
# usage: tests/bench/run.sh [--json] [--check] [--prepare] [BUILD_DIR] [OBJECTS]
#
# Captures mock heaps of OBJECTS objects (default 10000000) with gcsnap-agent
# once into $GS_BENCH_DIR (default $TMPDIR/gcsnap-bench), one per reference
# shape (targets=local|forward|random, and sections: random references in
# 1000 sections, as a stream of captures), then times the baselines (`wc -l`
# and a naive validator, gcsnap-bench-naive) and each phase of gcsnap-bench
# and `gcsnap dominators` in its own process, and does the same for the real
# heaps it can get: wpfapp.gclog when the shared folder is present, and V8,
# JVM and Mono heaps of about OBJECTS objects (made once), read by gcsnap
# convert or captured by the agent's mono source.
# README.md beside this script explains every figure.
set -eu

usage() {
  cat <<'EOF'
usage: tests/bench/run.sh [--json] [--check] [--prepare] [BUILD_DIR] [OBJECTS]
  BUILD_DIR  build folder holding bin/gcsnap-agent and bin/gcsnap-bench (default build)
  OBJECTS    objects in the mock heap dump (default 10000000)
  --json     print the figures as one JSON object instead of text
  --check    exit 1 when a figure misses its target
  --prepare  only make the dumps that are missing (mock and real), time nothing
Environment: GS_BENCH_DIR (where the dump is kept), GS_BENCH_SEED (default 1),
GS_BENCH_REPEAT (runs per phase, best time kept; default 3), GS_SHARED_DIR,
GS_BENCH_SHAPES (mock shapes; default "local forward random sections"),
GS_BENCH_REAL_OBJECTS (objects of the V8, JVM and Mono heaps; default OBJECTS).
EOF
}

json=0
check=0
prepare=0
made_s= conv_s=        # seconds making and converting the real heap of the row, when this run did
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=1 ;;
    --check) check=1 ;;
    --prepare) prepare=1 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ $# -le 2 ] || { usage >&2; exit 2; }

build=${1:-build}
objects=${2:-10000000}
seed=${GS_BENCH_SEED:-1}
repeat=${GS_BENCH_REPEAT:-3}
real=${GS_BENCH_REAL_OBJECTS:-$objects}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${GS_SHARED_DIR:-$repo/../shared}
[ -d "$shared" ] && shared=$(cd "$shared" && pwd)
work=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}
shapes=${GS_BENCH_SHAPES:-"local forward random sections"}
agent=$build/bin/gcsnap-agent
bench=$build/bin/gcsnap-bench
naive=$build/bin/gcsnap-bench-naive
gcsnap=$build/bin/gcsnap

# Targets. Validation: MB/s, and times the naive validator; peak RSS (MiB) for 10M
# objects. Dominators (load + tree + retained sizes): seconds and peak RSS for
# 10M objects, scaled linearly for other sizes.
target_mbps=800
target_graph_mbps=300
target_naive=8
target_val_rss_mb=200
target_dom_s=4
target_dom_rss_mb=500
target_obj_bytes=32
target_ref_bytes=4

case $objects in ''|*[!0-9]*) echo "run.sh: OBJECTS must be a number: '$objects'" >&2; exit 2 ;; esac
case $repeat in ''|*[!0-9]*|0) echo "run.sh: GS_BENCH_REPEAT must be a positive number" >&2; exit 2 ;; esac
case $real in ''|*[!0-9]*|0) echo "run.sh: GS_BENCH_REAL_OBJECTS must be a positive number" >&2; exit 2 ;; esac
for p in "$agent" "$bench" "$naive" "$gcsnap"; do
  [ -x "$p" ] || { echo "run.sh: $p not found; build first (cmake --build $build)" >&2; exit 2; }
done

say() { [ "$json" = 1 ] || printf '%s\n' "$*"; }
note() { printf '%s\n' "$*" >&2; }
now() { date +%s.%N; }
calc() { awk "BEGIN { printf(\"$1\", $2) }"; }
# field LINE KEY: the value of KEY=value in a gcsnap-bench result line.
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# ---- the mock heap dumps: made once per shape, reused while agent and knobs match
mkdir -p "$work"
command -v /usr/bin/time >/dev/null || { echo "run.sh: needs /usr/bin/time (Debian: time)" >&2; exit 2; }
# make_dump SHAPE: sets $dump, and $gen_seconds when this run made it.
make_dump() {
  dump=$work/mock-$objects-$1-seed$seed.gclog
  stamp="$(cksum < "$agent") $objects $1 $seed"
  gen_seconds=
  if [ ! -f "$dump" ] || [ "$(cat "$dump.stamp" 2>/dev/null)" != "$stamp" ]; then
    note "capturing a mock heap of $objects objects ($1 references) into $dump"
    rm -f "$dump" "$dump.stamp"
    t0=$(now)
    case $1 in
      sections) knobs=targets=random,sections=1000,types=100 ;;
      *) knobs=targets=$1 ;;
    esac
    "$agent" --source "mock:objects=$objects,seed=$seed,degree=2.8,$knobs" --clock 0 --out "$dump"
    t1=$(now)
    printf '%s\n' "$stamp" > "$dump.stamp"
    gen_seconds=$(calc '%.3f' "$t1 - $t0")
  fi
}

# ---- one input: baseline, phases, figures
json_inputs=
missed=0

# run_phase PHASE FILE: one result line of key=value figures. dominators is
# `gcsnap dominators` as a user runs it (load, tree, retained sizes), timed
# from outside.
run_phase() {
  case $1 in
    naive) "$naive" "$2" ;;
    dominators)
      t0=$(now)
      /usr/bin/time -f '%M' -o "$work/time.txt" "$gcsnap" dominators --top 5 "$2" >/dev/null || return 1
      t1=$(now)
      b=$(wc -c < "$2" | tr -d ' ')
      printf 'phase=dominators bytes=%s seconds=%s mb_per_s=%s maxrss_kb=%s\n' "$b" \
        "$(calc '%.6f' "$t1 - $t0")" "$(calc '%.1f' "$b / 1e6 / ($t1 - $t0)")" "$(cat "$work/time.txt")" ;;
    *) "$bench" "$1" "$2" ;;
  esac
}

# best_of PHASE FILE: the fastest of $repeat runs, with the largest peak RSS.
best_of() {
  best='' best_s='' max_rss=0 i=0
  while [ "$i" -lt "$repeat" ]; do
    # What a phase says about the input (a real heap's first dangling
    # references) is shown once, not once a run.
    if [ "$i" -eq 0 ]; then line=$(run_phase "$1" "$2"); else line=$(run_phase "$1" "$2" 2>/dev/null); fi ||
      { note "run.sh: phase $1 on $2 failed"; exit 1; }
    s=$(field "$line" seconds)
    rss=$(field "$line" maxrss_kb)
    [ "$rss" -gt "$max_rss" ] && max_rss=$rss
    if [ -z "$best" ] || [ "$(calc '%d' "$s < $best_s")" = 1 ]; then best=$line best_s=$s; fi
    i=$((i + 1))
  done
  printf '%s maxrss_kb=%s\n' "$(printf '%s\n' "$best" | sed 's/ maxrss_kb=[0-9-]*//')" "$max_rss"
}

time_wc() {
  best_s='' i=0
  while [ "$i" -lt "$repeat" ]; do
    t0=$(now)
    lines=$(wc -l < "$1")
    t1=$(now)
    s=$(calc '%.6f' "$t1 - $t0")
    if [ -z "$best_s" ] || [ "$(calc '%d' "$s < $best_s")" = 1 ]; then best_s=$s; fi
    i=$((i + 1))
  done
  wc_seconds=$best_s
  wc_lines=$(printf '%s' "$lines" | tr -d ' ')
}

# verdict CONDITION: "ok" or "MISSED" in $verdict; a miss is remembered for --check.
verdict() {
  if [ "$(calc '%d' "$1")" = 1 ]; then verdict=ok; else verdict=MISSED; missed=1; fi
}

run_input() { # run_input NAME FILE [ORIGINAL]: ORIGINAL, the foreign file FILE was converted from
  name=$1 file=$2 orig=${3:-}
  [ "$prepare" = 1 ] && return 0
  note "benchmarking $name: $file"
  # An input made just before is still being written back to the disk,
  # which slows every phase timed meanwhile: wait for it.
  sync
  cat "$file" > /dev/null          # warm the page cache: time parsing, not the disk
  bytes=$(wc -c < "$file" | tr -d ' ')
  time_wc "$file"
  wc_mbps=$(calc '%.1f' "$bytes / 1e6 / $wc_seconds")
  naive_line=$(best_of naive "$file")
  read_line=$(best_of read "$file")
  val_line=$(best_of validate "$file")
  graph_line=$(best_of graph "$file")
  dom_line=$(best_of dominators "$file")
  orig_line=
  [ -n "$orig" ] && orig_line=$(best_of dominators "$orig")

  objects_n=$(field "$graph_line" objects)
  refs_n=$(field "$graph_line" refs)
  memory=$(field "$graph_line" memory)
  obj_bytes=$(calc '%.1f' "($memory - 4 * $refs_n) / ($objects_n > 0 ? $objects_n : 1)")
  ref_mb=$(calc '%.1f' "4 * $refs_n / 1e6")
  v_mbps=$(field "$val_line" mb_per_s)
  n_mbps=$(field "$naive_line" mb_per_s)
  g_mbps=$(field "$graph_line" mb_per_s)
  scale=$(calc '%.6f' "$objects_n / 1e7")
  verdict "$v_mbps >= $target_mbps && $v_mbps >= $target_naive * $n_mbps"; v_ok=$verdict
  verdict "$(field "$val_line" maxrss_kb) / 1024 <= $target_val_rss_mb * ($scale > 0.1 ? $scale : 0.1)"; vm_ok=$verdict
  verdict "$g_mbps >= $target_graph_mbps"; g_ok=$verdict
  verdict "$obj_bytes <= $target_obj_bytes"; m_ok=$verdict
  verdict "$(field "$dom_line" seconds) <= $target_dom_s * ($scale > 0.1 ? $scale : 0.1)"; d_ok=$verdict
  verdict "$(field "$dom_line" maxrss_kb) / 1024 <= $target_dom_rss_mb * ($scale > 0.1 ? $scale : 0.1)"; dm_ok=$verdict

  say ""
  say "== $name: $file"
  say "$(calc '%-14s %.1f MB, %d lines, %d objects, %d references, %d sections' \
    "\"file\", $bytes / 1e6, $wc_lines, $objects_n, $refs_n, $(field "$graph_line" sections)")"
  if [ "${name#mock-}" != "$name" ] && [ -n "$gen_seconds" ]; then
    say "$(calc '%-14s %8.3f s %8.1f MB/s' "\"generate\", $gen_seconds, $bytes / 1e6 / $gen_seconds")"
  fi
  if [ "${name#mock-}" = "$name" ] && [ -n "$made_s$conv_s" ]; then
    say "$(calc '%-14s %8.1f s by the runtime, %.1f s by gcsnap convert' "\"make\", 0${made_s}, 0${conv_s}")"
  fi
  say "$(calc '%-14s %8.3f s %8.1f MB/s   (baseline)' "\"wc -l\", $wc_seconds, $wc_mbps")"
  say "$(calc '%-14s %8.3f s %8.1f MB/s %6.3fx wc   peak RSS %7.1f MiB  (baseline)' \
    "\"naive\", $(field "$naive_line" seconds), $n_mbps, $n_mbps / $wc_mbps, $(field "$naive_line" maxrss_kb) / 1024")"
  for ph in read validate graph dominators; do
    case $ph in read) l=$read_line label=read ;; validate) l=$val_line label=validate ;;
                graph) l=$graph_line label="graph load" ;; dominators) l=$dom_line label=dominators ;; esac
    extra=
    case $ph in
      validate) extra="   target >= $target_mbps MB/s and ${target_naive}x naive: $v_ok, RSS: $vm_ok   ($(field "$l" errors) errors, $(field "$l" warnings) warnings; main thread $(field "$l" main_cpu_s) s of CPU)" ;;
      graph) extra="   target >= $target_graph_mbps MB/s: $g_ok" ;;
      dominators) extra="   target <= $(calc '%.1f' "$target_dom_s * ($scale > 0.1 ? $scale : 0.1)") s: $d_ok, RSS: $dm_ok" ;;
    esac
    say "$(calc '%-14s %8.3f s %8.1f MB/s %6.3fx wc %6.2fx naive   peak RSS %7.1f MiB' \
      "\"$label\", $(field "$l" seconds), $(field "$l" mb_per_s), $(field "$l" mb_per_s) / $wc_mbps, $(field "$l" mb_per_s) / $n_mbps, $(field "$l" maxrss_kb) / 1024")$extra"
  done
  if [ -n "$orig_line" ]; then
    verdict "$(field "$orig_line" maxrss_kb) / 1024 <= $target_dom_rss_mb * ($scale > 0.1 ? $scale : 0.1)"
    say "$(calc '%-14s %8.3f s   peak RSS %7.1f MiB   (dominators of the .%s itself: converted, then analysed) RSS: %s' \
      "\"from original\", $(field "$orig_line" seconds), $(field "$orig_line" maxrss_kb) / 1024, \"${orig##*.}\", \"$verdict\"")"
  fi
  say "$(calc '%-14s %.1f MB = %.1f B/object + 4 B/reference (%.1f MB)   target <= %d B/object + %d B/reference: %s' \
    "\"graph memory\", $memory / 1e6, $obj_bytes, $ref_mb, $target_obj_bytes, $target_ref_bytes, \"$m_ok\"")"
  say "$(calc '%-14s %.1f B/object' "\"graph peak\", $(field "$graph_line" maxrss_kb) * 1024 / ($objects_n > 0 ? $objects_n : 1)") (peak RSS of the graph phase / objects)"
  say "$(calc '%-14s %8.3f s, %d of %d objects reachable' \
    "\"reachability\", $(field "$graph_line" reach_seconds), $(field "$graph_line" reachable), $objects_n")"

  phase_json() {
    printf '{"seconds":%s,"mb_per_s":%s,"ratio_to_wc":%s,"maxrss_kb":%s' \
      "$(field "$1" seconds)" "$(field "$1" mb_per_s)" \
      "$(calc '%.4f' "$(field "$1" mb_per_s) / $wc_mbps")" "$(field "$1" maxrss_kb)"
  }
  j=$(printf '{"name":"%s","path":"%s","bytes":%s,"lines":%s,"objects":%s,"references":%s,' \
        "$name" "$file" "$bytes" "$wc_lines" "$objects_n" "$refs_n")
  [ "${name#mock-}" != "$name" ] && [ -n "$gen_seconds" ] && j="$j\"generate_seconds\":$gen_seconds,"
  j="$j\"wc\":{\"seconds\":$wc_seconds,\"mb_per_s\":$wc_mbps},"
  j="$j\"naive\":$(phase_json "$naive_line")},"
  j="$j\"read\":$(phase_json "$read_line")},"
  j="$j\"dominators\":$(phase_json "$dom_line")},"
  [ -n "$orig_line" ] && j="$j\"dominators_of_original\":$(phase_json "$orig_line")},"
  j="$j\"validate\":$(phase_json "$val_line"),\"errors\":$(field "$val_line" errors),\"warnings\":$(field "$val_line" warnings)},"
  j="$j\"graph\":$(phase_json "$graph_line"),\"memory\":$memory,\"bytes_per_object\":$obj_bytes,"
  j="$j\"bytes_per_reference\":4,\"reachable\":$(field "$graph_line" reachable),"
  j="$j\"reach_seconds\":$(field "$graph_line" reach_seconds)}}"
  json_inputs="${json_inputs:+$json_inputs,}$j"
}

# ---- real heaps of other runtimes, through gcsnap's own readers
# not_available NAME WHY: a row that says so, never a figure.
not_available() {
  say ""
  say "== $1: not available ($2)"
  json_inputs="${json_inputs:+$json_inputs,}{\"name\":\"$1\",\"available\":false,\"why\":\"$2\"}"
}

# converts_from EXT: whether `gcsnap convert` reads dumps ending in EXT.
converts_from() { "$gcsnap" convert --help 2>&1 | grep -q -- "$1"; }

real_heaps() {
  made_s= conv_s=
  if ! command -v node >/dev/null; then not_available v8 "node is not installed"
  elif ! converts_from .heapsnapshot; then not_available v8 "gcsnap convert cannot read .heapsnapshot yet"
  elif v8_heap && converted v8-heap.heapsnapshot; then run_input v8 "$work/v8-heap.gclog" "$work/v8-heap.heapsnapshot"
  else not_available v8 "making or converting the heap failed (see above)"
  fi
  made_s= conv_s=
  if ! command -v jcmd >/dev/null || ! command -v javac >/dev/null; then not_available jvm "no JDK (javac, jcmd)"
  elif ! converts_from .hprof; then not_available jvm "gcsnap convert cannot read .hprof yet"
  elif jvm_heap && converted jvm-heap.hprof; then run_input jvm "$work/jvm-heap.gclog" "$work/jvm-heap.hprof"
  else not_available jvm "making or converting the heap failed (see above)"
  fi
  made_s= conv_s=
  if ! command -v mono >/dev/null; then not_available mono "mono is not installed"
  elif [ ! -f "$build/lib/libmono-profiler-gcsnap.so" ] || [ ! -f "$build/mono-apps/Churn.exe" ]; then
    not_available mono "$build has no Mono profiler module or Churn.exe (configure with Mono installed)"
  elif mono_heap; then run_input mono "$work/mono-heap.gclog"
  else not_available mono "capturing the heap failed (see above)"
  fi
}

# converted FILE: $work/FILE converted by gcsnap convert to the .gclog
# beside it, unless that was made from the same FILE already.
converted() {
  out=$work/${1%.*}.gclog
  [ -s "$out" ] && [ "$(cat "$out.stamp" 2>/dev/null)" = "$(cat "$work/$1.stamp")" ] && return 0
  rm -f "$out.stamp"
  note "converting $work/$1"
  t0=$(now)
  "$gcsnap" convert "$work/$1" "$out" || return 1
  conv_s=$(calc '%.1f' "$(now) - $t0")
  note "converted $work/$1 in $conv_s s"
  cp "$work/$1.stamp" "$out.stamp"
}

# fresh FILE WHAT: whether $work/FILE was made from WHAT (its program) and
# $real objects already; if not, removes it and starts the clock of made.
fresh() {
  stamp="$real $(printf '%s' "$2" | cksum)"
  [ -s "$work/$1" ] && [ "$(cat "$work/$1.stamp" 2>/dev/null)" = "$stamp" ] && return 0
  rm -f "$work/$1" "$work/$1.stamp"
  note "making $work/$1 of about $real objects"
  t_made=$(now)
  return 1
}

# made FILE: stamps $work/FILE, made since fresh, and says how long it took.
made() {
  [ -s "$work/$1" ] || return 1
  made_s=$(calc '%.1f' "$(now) - $t_made")
  note "made $work/$1 in $made_s s"
  printf '%s\n' "$stamp" > "$work/$1.stamp"
}

# The V8 and JVM programs hold about $real objects of a few kinds (objects
# of a class, strings, small arrays, a hash map), all of them in one array
# of $real references, as a large cache or list holds them: the record of
# that array is a line of about a hundred MB at 10 million.
v8_program='const n = Number(process.argv[1]), all = new Array(n), byName = new Map();
class Item { constructor(i, next) { this.i = i; this.next = next; } }
for (let i = 0; i < n; i++) {
  const next = all[i >> 1];
  switch (i & 3) {
    case 0: all[i] = new Item(i, next); break;
    case 1: all[i] = "item-" + i; break;
    case 2: all[i] = [i, next]; break;
    default: all[i] = { key: i, value: next };
  }
  if ((i & 63) === 0) byName.set("key-" + i, all[i]);
}
require("v8").writeHeapSnapshot(process.argv[2]);'

# v8_heap: the Node program above, written by v8.writeHeapSnapshot.
v8_heap() {
  fresh v8-heap.heapsnapshot "$v8_program" && return 0
  # Writing the snapshot takes memory beyond the heap's: room for both.
  nice -n 10 node --max-old-space-size=16384 -e "$v8_program" "$real" "$work/v8-heap.heapsnapshot" \
    >/dev/null && made v8-heap.heapsnapshot
}

jvm_program='import java.util.HashMap;
public class Fill {
  static final class Item {
    final int i; final Object next;
    Item(int i, Object next) { this.i = i; this.next = next; }
  }
  static Object[] all;
  static final HashMap<String, Object> byName = new HashMap<>();
  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    all = new Object[n];
    for (int i = 0; i < n; i++) {
      Object next = all[i >> 1];
      switch (i & 3) {
        case 0: all[i] = new Item(i, next); break;
        case 1: all[i] = "item-" + i; break;
        case 2: all[i] = new int[] { i, i + 1 }; break;
        default: all[i] = new Object[] { next, Integer.valueOf(i) };
      }
      if ((i & 63) == 0) byName.put("key-" + i, all[i]);
    }
    System.out.println("ready");
    Thread.sleep(600000);
  }
}'

# jvm_heap: the JVM program above, dumped by jcmd GC.heap_dump.
jvm_heap() {
  fresh jvm-heap.hprof "$jvm_program" && return 0
  mkdir -p "$work/jvm"
  printf '%s\n' "$jvm_program" > "$work/jvm/Fill.java"
  javac -d "$work/jvm" "$work/jvm/Fill.java" || return 1
  nice -n 10 java -Xmx16g -cp "$work/jvm" Fill "$real" > "$work/jvm/out.txt" &
  jpid=$!
  i=0
  while ! grep -q ready "$work/jvm/out.txt" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -lt 1500 ] && kill -0 "$jpid" 2>/dev/null || { kill "$jpid" 2>/dev/null; return 1; }
    sleep 0.2
  done
  jcmd "$jpid" GC.heap_dump "$work/jvm-heap.hprof" >/dev/null
  kill "$jpid"
  wait "$jpid" 2>/dev/null || true
  made jvm-heap.hprof
}

# mono_heap: Churn.exe holding $real objects (in arrays of 1000) on Mono
# with the gcsnap profiler module, captured by gcsnap-agent's mono source.
mono_heap() {
  out=$work/mono-heap.gclog
  fresh mono-heap.gclog "$(cksum < "$build/mono-apps/Churn.exe")" && return 0
  rm -f "$work/mono.sock" "$work/mono.in"
  # Churn.exe exits at the end of its standard input: a pipe held open here.
  mkfifo "$work/mono.in"
  LD_LIBRARY_PATH=$build/lib nice -n 10 mono --profile="gcsnap:socket=$work/mono.sock,ids=address" \
    "$build/mono-apps/Churn.exe" "$real" < "$work/mono.in" > "$work/mono.out" &
  mpid=$!
  exec 9> "$work/mono.in"
  i=0 ok=0
  while ! grep -q ready "$work/mono.out" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -ge 1500 ] || ! kill -0 "$mpid" 2>/dev/null; then break; fi
    sleep 0.2
  done
  grep -q ready "$work/mono.out" 2>/dev/null &&
    "$agent" --source "mono:$work/mono.sock" --clock 0 --out "$out" && ok=1
  exec 9>&-
  wait "$mpid" 2>/dev/null || true
  rm -f "$work/mono.in"
  [ "$ok" = 1 ] && made mono-heap.gclog
}

for shape in $shapes; do
  make_dump "$shape"
  run_input "mock-$shape" "$dump"
done
wpf=$shared/fixtures/wpfapp.gclog
if [ -f "$wpf" ]; then
  run_input wpfapp "$wpf"
else
  say ""
  say "(wpfapp.gclog not found under $shared/fixtures: skipped)"
fi
real_heaps

if [ "$json" = 1 ]; then
  printf '{"targets":{"validate_mb_per_s":%s,"graph_mb_per_s":%s,"graph_bytes_per_object":%s,"graph_bytes_per_reference":%s},"repeat":%s,"inputs":[%s]}\n' \
    "$target_mbps" "$target_graph_mbps" "$target_obj_bytes" "$target_ref_bytes" "$repeat" "$json_inputs"
fi
if [ "$check" = 1 ] && [ "$missed" = 1 ]; then exit 1; fi
exit 0
