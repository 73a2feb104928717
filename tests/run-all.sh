#!/bin/bash
# run-all.sh - builds gcsnap six ways and runs every test; the one test command.
#
#   build/release  -Werror, optimised: unit, runtime, agent, CLI and benchmark tests
#   build/asan     -Werror, AddressSanitizer + UndefinedBehaviorSanitizer: the same tests
#   build/fuzz     clang + libFuzzer: each fuzz target for GS_FUZZ_SECONDS (default 60),
#                  two at a time (tests/fuzz/README.md)
#   build/arm      cross: the agent for ARMv5TE Linux, its tests under qemu-arm
#   build/win      cross: the Win32 agent (mingw-w64), its tests under wine64
#                  (both stream to the release tree's gcsnapd; toolchains/README.md)
#   build/wince    cross: the Windows CE API guard, linked and inspected, not run
#
# Usage: tests/run-all.sh [--quick]
#   --quick  release tree only, for quick local iteration (no asan, fuzz, cross)
# Environment: GS_BUILD_ROOT (default build) puts the trees elsewhere;
# GS_FUZZ_SECONDS (default 60) sets how long each fuzz target runs.
# Exits non-zero when any configure, build or test step fails.
set -u

usage() { sed -n '2,17s/^# \{0,1\}//p' "$0"; }

quick=0
for arg in "$@"; do
  case $arg in
    --quick) quick=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run-all: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/.." || exit 1
JOBS=2
BUILD_ROOT=${GS_BUILD_ROOT:-build}
FUZZ_SECONDS=${GS_FUZZ_SECONDS:-60}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

summary=()          # one line per step
steps_failed=0      # configure and build steps that failed
tests_passed=0 tests_failed=0 tests_skipped=0
started=$SECONDS

note() { printf '\n==== %s\n' "$*"; }
record() { summary+=("$(printf '%-8s %-10s %-8s %4ds' "$1" "$2" "$3" "$4")"); }

# run_step TREE STEP COMMAND...: runs and records one configure or build step.
run_step() {
  local tree=$1 step=$2 t0=$SECONDS
  shift 2
  note "$tree: $step: $*"
  if "$@"; then
    record "$tree" "$step" ok $((SECONDS - t0))
    return 0
  fi
  record "$tree" "$step" FAILED $((SECONDS - t0))
  steps_failed=$((steps_failed + 1))
  return 1
}

# run_ctest TREE CTEST-ARGS...: runs ctest in $BUILD_ROOT/TREE and counts its results
# from the per-test lines ("Passed", "***Failed", "***Skipped", ...).
run_ctest() {
  local tree=$1 t0=$SECONDS log="$BUILD_ROOT/$1/ctest-output.log" rc passed failed skipped
  shift
  note "$tree: test: ctest $*"
  (cd "$BUILD_ROOT/$tree" && ctest --output-on-failure --no-tests=error "$@") 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  passed=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed +[0-9.]+ sec' "$log")
  skipped=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*Skipped' "$log")
  failed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*\*\*\*' "$log" | grep -vc '\*\*\*Skipped')
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi  # ctest itself failed
  tests_passed=$((tests_passed + passed))
  tests_failed=$((tests_failed + failed))
  tests_skipped=$((tests_skipped + skipped))
  record "$tree" test "$([ "$rc" -eq 0 ] && echo ok || echo FAILED)" $((SECONDS - t0))
  summary[${#summary[@]} - 1]+="  $passed passed, $failed failed, $skipped skipped"
}

skip_tree() {
  record "$1" all skipped 0
  summary[${#summary[@]} - 1]+="  ($2)"
}

# build_and_test NAME BUILD-TARGET CTEST-ARGS -- CMAKE-ARGS...: configure, build, test.
build_and_test() {
  local name=$1 target=$2 ctest_args=() cmake_args=()
  shift 2
  while [ $# -gt 0 ] && [ "$1" != -- ]; do ctest_args+=("$1"); shift; done
  shift
  cmake_args=("$@")
  run_step "$name" configure cmake -S . -B "$BUILD_ROOT/$name" "${cmake_args[@]}" || return
  run_step "$name" build cmake --build "$BUILD_ROOT/$name" -j "$JOBS" --target "$target" || return
  run_ctest "$name" "${ctest_args[@]}"
}

build_and_test release all -j "$JOBS" -- \
  -DCMAKE_BUILD_TYPE=Release -DGS_WERROR=ON -DGS_SANITIZE=OFF -DGS_FUZZ=OFF

# cross_trees: each toolchain of toolchains/, configured, built and tested
# (all its tests run under the emulator; `ctest -L cross` in a tree runs the
# end-to-end and size tests alone). A missing compiler or emulator fails.
cross_trees() {
  local host_bin common
  host_bin=$(cd "$BUILD_ROOT/release/bin" 2>/dev/null && pwd) || host_bin=
  common=(-DGS_HOST=OFF -DCMAKE_BUILD_TYPE=Release -DGS_WERROR=ON -DGS_HOST_BIN="$host_bin")
  build_and_test arm all -j "$JOBS" -- "${common[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/arm-linux-gnueabi.cmake"
  build_and_test win all -j "$JOBS" -- "${common[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/mingw-w64-x86_64.cmake"
  # Only the device build links against CE's exports; nothing runs there.
  build_and_test wince gcsnap-agent-min -L wince -- "${common[@]}" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/toolchains/arm-wince.cmake"
  # Wine leaves its server running for a while; stop it now.
  local prefix
  prefix=$(cd "$BUILD_ROOT/win" 2>/dev/null && pwd)/wineprefix
  WINEPREFIX=$prefix /usr/lib/wine/wineserver -k 2>/dev/null || true
}

if [ "$quick" -eq 1 ]; then
  skip_tree asan "--quick"
  skip_tree fuzz "--quick"
  skip_tree cross "--quick"
else
  cross_trees
  build_and_test asan all -j "$JOBS" -- \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGS_WERROR=ON -DGS_SANITIZE=ON -DGS_FUZZ=OFF
  if command -v clang >/dev/null 2>&1; then
    # Two targets at a time: each runs on one core for GS_FUZZ_SECONDS.
    build_and_test fuzz fuzz_targets -L fuzz -j "$JOBS" -- \
      -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGS_WERROR=ON \
      -DGS_SANITIZE=OFF -DGS_FUZZ=ON -DGS_FUZZ_SECONDS="$FUZZ_SECONDS"
  else
    skip_tree fuzz "clang not found; run toolchains/install-deps.sh"
    tests_skipped=$((tests_skipped + 1))
  fi
fi

note "summary ($((SECONDS - started))s in all)"
printf '%s\n' "${summary[@]}"
failed=$((tests_failed + steps_failed))
echo "run-all: $tests_passed passed, $failed failed, $tests_skipped skipped"
[ "$failed" -eq 0 ]
