#!/bin/sh
# run-fuzz.sh - runs one libFuzzer target for a while from the committed
# seeds and regression inputs, keeping what it finds out of the source tree.
#
#   run-fuzz.sh BINARY SECONDS WORK_DIR SEED_DIR REGRESS_DIR [LIBFUZZER_ARGS...]
#
# WORK_DIR is emptied and made the output corpus (libFuzzer writes new
# inputs into its first corpus folder only); SEED_DIR and REGRESS_DIR (when
# it exists) are only read. A crashing input is written as WORK_DIR/crash-*
# (leak-*, timeout-*): copy it into REGRESS_DIR once the bug is fixed.
# The exit status is libFuzzer's: 0 when nothing broke.
set -eu
[ $# -ge 5 ] || { sed -n '2,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
bin=$1 seconds=$2 work=$3 seeds=$4 regress=$5
shift 5
rm -rf "$work"
mkdir -p "$work/corpus"
set -- -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$work/" "$@" \
  "$work/corpus" "$seeds"
[ -d "$regress" ] && set -- "$@" "$regress"
exec "$bin" "$@"
