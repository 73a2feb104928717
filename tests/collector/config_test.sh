#!/usr/bin/env bash
# config_test.sh - gcsnapd's settings: a config file, flags that win over
# it, and clear errors (exit 2) for bad keys, values and files.
#
#   config_test.sh GCSNAPD WORKDIR
set -u
GCSNAPD=$1 WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"
fail() { echo "FAIL: $*" >&2; exit 1; }
LOG=$WORK/log

# A file sets every key; the daemon listens where the file says, and a flag
# given too wins over the file.
cat >"$WORK/good.conf" <<CONF
# comments and blank lines are fine

listen   = 127.0.0.1:0    # agents
http     = 127.0.0.1:0
store    = $WORK/from-file
CONF
"$GCSNAPD" --config "$WORK/good.conf" --store "$WORK/from-flag" 2>"$LOG" &
PID=$!
for i in $(seq 100); do grep -q "HTTP API on" "$LOG" && break; sleep 0.1; done
kill "$PID"; wait "$PID"
grep -q "HTTP API on http://127.0.0.1:" "$LOG" || fail "no HTTP API from the file's address: $(cat "$LOG")"
grep -q "store $WORK/from-flag" "$LOG" || fail "the --store flag did not win over the file"
[ -d "$WORK/from-flag" ] && [ ! -e "$WORK/from-file" ] || fail "store folder"

# log-level from the file: at "error", the start-up lines are not logged.
printf 'listen = 127.0.0.1:0\nhttp = 127.0.0.1:0\nstore = %s/quiet\nlog-level = error\n' "$WORK" >"$WORK/quiet.conf"
"$GCSNAPD" --config "$WORK/quiet.conf" 2>"$LOG" &
PID=$!
for i in $(seq 100); do [ -e "$WORK/quiet/catalog.db" ] && break; sleep 0.1; done
sleep 0.3
kill "$PID"; wait "$PID"
[ -e "$WORK/quiet/catalog.db" ] || fail "the quiet daemon did not start: $(ls "$WORK/quiet" 2>&1)"
! grep -q "info" "$LOG" || fail "log-level from the file not applied: $(cat "$LOG")"

# bad_config NAME CONTENT MESSAGE: exit 2 with MESSAGE (and FILE:LINE).
bad_config() {
  printf '%b' "$2" >"$WORK/$1.conf"
  "$GCSNAPD" --config "$WORK/$1.conf" >"$WORK/$1.out" 2>&1
  rc=$?
  [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
  grep -q -- "$3" "$WORK/$1.out" || fail "$1: no '$3' in: $(cat "$WORK/$1.out")"
}
bad_config unknown-key 'listen = 127.0.0.1:0\nwhatever = 1\n' "$WORK/unknown-key.conf:2: unknown key 'whatever'"
bad_config no-equals 'listen 127.0.0.1:0\n' "no-equals.conf:1: expected 'key = value'"
bad_config bad-address 'http = 999.1.1.1:80\n' "bad-address.conf:1: bad --http address"
bad_config bad-level 'log-level = loud\n' "bad-level.conf:1: --log-level must be"
"$GCSNAPD" --config "$WORK/missing.conf" >"$WORK/missing.out" 2>&1
[ $? = 2 ] && grep -q "cannot open config file" "$WORK/missing.out" || fail "missing config file"
"$GCSNAPD" --listen nowhere >"$WORK/flag.out" 2>&1
[ $? = 2 ] && grep -q "bad --listen address" "$WORK/flag.out" || fail "bad --listen flag"
echo "config: all checks passed"
