#!/bin/bash
# fuzz.sh - runs the libFuzzer targets longer than CI does and reports how
# far each got.
#
# usage: tests/bench/fuzz.sh [--seconds N] [--jobs J] [--build DIR] [TARGET...]
#
#   --seconds N  how long each target runs (default 600)
#   --jobs J     how many run at once (default 2)
#   --build DIR  a tree configured with -DGS_FUZZ=ON and clang (default
#                build/fuzz); configured and built there when it has no
#                fuzz targets yet
#   TARGET       reader, collector, agent, http, gcdump, hprof, v8 (default:
#                all seven)
#
# Each target starts from its seed corpus and regression inputs
# (tests/fuzz/corpus/TARGET, tests/fuzz/regress/TARGET), which are only
# read; what it finds goes to DIR/bench-TARGET/ (corpus/, and crash-*
# inputs), its output to DIR/bench-TARGET.log. Prints per target: seconds,
# executions, executions per second, coverage (libFuzzer's cov: edges and
# ft: features, from its last status line), the corpus it ended with
# (libFuzzer's corp: inputs/bytes, seeds included) and the result. Exits 1
# when a target crashed.
set -u

usage() { sed -n '2,22s/^# \{0,1\}//p' "$0"; }

seconds=600 jobs=2 build=build/fuzz targets=()
while [ $# -gt 0 ]; do
  case $1 in
    --seconds) seconds=${2:?}; shift 2 ;;
    --jobs) jobs=${2:?}; shift 2 ;;
    --build) build=${2:?}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    reader|collector|agent|http|gcdump|hprof|v8) targets+=("$1"); shift ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(reader collector agent http gcdump hprof v8)
case $seconds$jobs in *[!0-9]*) echo "fuzz.sh: --seconds and --jobs take numbers" >&2; exit 2 ;; esac

src=$(cd "$(dirname "$0")/../.." && pwd)
fuzz=$src/tests/fuzz

if ! [ -x "$build/bin/fuzz_${targets[0]}" ]; then
  command -v clang >/dev/null || { echo "fuzz.sh: clang not found (toolchains/install-deps.sh)" >&2; exit 2; }
  cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGS_FUZZ=ON -DGS_SANITIZE=OFF >/dev/null || exit 2
fi
cmake --build "$build" -j 2 --target fuzz_targets >/dev/null || { echo "fuzz.sh: build failed" >&2; exit 2; }
build=$(cd "$build" && pwd)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Longest input per target, as in tests/fuzz/CMakeLists.txt.
max_len() {
  case $1 in reader|gcdump) echo 16384 ;; http) echo 4096 ;; hprof|v8) echo 65536 ;;
    *) echo 32768 ;; esac
}

run_one() {
  local t=$1
  sh "$fuzz/run-fuzz.sh" "$build/bin/fuzz_$t" "$seconds" "$build/bench-$t" \
    "$fuzz/corpus/$t" "$fuzz/regress/$t" -max_len="$(max_len "$t")" -timeout=10 \
    >"$build/bench-$t.log" 2>&1
  echo $? >"$build/bench-$t.rc"
}

running=0
for t in "${targets[@]}"; do
  rm -f "$build/bench-$t.rc"
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

failed=0
printf '%-10s %8s %12s %9s %7s %8s %13s  %s\n' \
  target seconds executions exec/s cov ft corpus result
for t in "${targets[@]}"; do
  log=$build/bench-$t.log rc=$(cat "$build/bench-$t.rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    failed=1
    result="FAILED ($(ls "$build/bench-$t"/crash-* "$build/bench-$t"/leak-* \
                          "$build/bench-$t"/timeout-* 2>/dev/null | head -1); see $log)"
  fi
  printf '%-10s %8s %12s %9s %7s %8s %13s  %s\n' "$t" "$seconds" "${execs:-?}" \
    "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
exit $failed
