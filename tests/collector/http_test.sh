#!/usr/bin/env bash
# http_test.sh - gcsnapd end to end on loopback: the HTTP API routes, and
# the agent protocol with a scripted agent (gst_agent), good and broken.
#
#   http_test.sh GCSNAPD GST_AGENT GCSNAP FIXTURE WORKDIR
#
# FIXTURE must be canonical (a stored snapshot is compared to it byte for
# byte). Exit 0 when every check passed, 1 on the first failure.
set -u
GCSNAPD=$1 AGENT=$2 GCSNAP=$3 FIXTURE=$4 WORK=$5
rm -rf "$WORK" && mkdir -p "$WORK"
STORE=$WORK/store LOG=$WORK/gcsnapd.log
DAEMON= PIDS=()

fail() { echo "FAIL: $*" >&2; echo "--- daemon log:" >&2; tail -n 40 "$LOG" >&2; cleanup; exit 1; }
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null
  wait 2>/dev/null
}
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# http METHOD PATH -> body in $WORK/body, status echoed
http() { curl -s -o "$WORK/body" -w '%{http_code}' -X "$1" "$API$2"; }
expect_status() {  # expect_status WANT METHOD PATH [ERROR_CODE]
  local got; got=$(http "$2" "$3")
  [ "$got" = "$1" ] || fail "$2 $3: status $got, expected $1: $(cat "$WORK/body")"
  if [ $# -ge 4 ]; then
    local code; code=$(json 'd["error"]' < "$WORK/body")
    [ "$code" = "$4" ] || fail "$2 $3: error $code, expected $4"
  fi
}
wait_for() {  # wait_for DESCRIPTION COMMAND...
  local desc=$1 i; shift
  for i in $(seq 100); do "$@" && return 0; sleep 0.1; done
  fail "timed out waiting for $desc"
}
connected() { http GET /api/devices >/dev/null; json "[x['connected'] for x in d['devices'] if x['device_id']=='$1']==[True]" < "$WORK/body" | grep -q True; }
disconnected() { ! connected "$1"; }
in_log() { grep -q -- "$1" "$LOG"; }

"$GCSNAPD" --listen 127.0.0.1:0 --http 127.0.0.1:0 --store "$STORE" --log-level debug 2>"$LOG" &
DAEMON=$!
wait_for "the daemon to listen" grep -q "HTTP API on" "$LOG"
AGENTS=$(sed -n 's/.*listening for agents on \([0-9.:]*\).*/\1/p' "$LOG")
API=http://$(sed -n 's|.*HTTP API on http://\([0-9.:]*\)/api/.*|\1|p' "$LOG")
echo "agents on $AGENTS, API on $API"

# ---- health, unknown things
expect_status 200 GET /api/health
[ "$(json 'd["devices_connected"]' < "$WORK/body")" = 0 ] || fail "devices_connected not 0"
expect_status 404 POST /api/devices/nobody/capture not_found
expect_status 404 GET /api/snapshots/9999 not_found
expect_status 404 GET /api/snapshots/9999/download not_found
expect_status 404 GET /api/captures/9999 not_found
expect_status 404 GET /api/nothing not_found
expect_status 400 GET '/api/snapshots?status=maybe' bad_request
expect_status 400 GET '/api/snapshots?limit=x' bad_request
expect_status 405 DELETE /api/snapshots bad_request

# ---- a good agent: capture with wait, list, summary, downloads
"$AGENT" "$AGENTS" dev-a "$FIXTURE" --count 0 --batch-refs 3 > "$WORK/a.out" &
PIDS+=($!)
wait_for "dev-a to connect" connected dev-a
expect_status 200 GET /api/devices
json "[x for x in d['devices'] if x['device_id']=='dev-a'][0]" < "$WORK/body" > "$WORK/dev-a.txt"
grep -q "'busy': False" "$WORK/dev-a.txt" || fail "dev-a busy: $(cat "$WORK/dev-a.txt")"
grep -q "'architecture': 'x86_64'" "$WORK/dev-a.txt" || fail "dev-a architecture"
expect_status 200 POST '/api/devices/dev-a/capture?wait=1&timeout=30'
ID=$(json 'd["snapshot_id"]' < "$WORK/body")
REQ=$(json 'd["request_id"]' < "$WORK/body")
expect_status 200 GET "/api/captures/$REQ"
[ "$(json 'd["state"]' < "$WORK/body")" = stored ] || fail "capture $REQ not stored"
expect_status 200 GET '/api/snapshots?device=dev-a&status=complete'
[ "$(json 'len(d["snapshots"])' < "$WORK/body")" = 1 ] || fail "one complete snapshot expected"
[ "$(json 'd["snapshots"][0]["id"]' < "$WORK/body")" = "$ID" ] || fail "listed id"
expect_status 200 GET "/api/snapshots/$ID"
curl -s -o "$WORK/a.gclog" "$API/api/snapshots/$ID/download?format=gclog" || fail "download gclog"
cmp -s "$WORK/a.gclog" "$FIXTURE" || fail "downloaded .gclog differs from the canonical fixture"
curl -s -D "$WORK/headers" -o "$WORK/a.gclog.zst" "$API/api/snapshots/$ID/download" || fail "download zst"
grep -qi 'content-disposition: attachment; filename="dev-a-'"$ID"'.gclog.zst"' "$WORK/headers" \
  || fail "Content-Disposition: $(cat "$WORK/headers")"
"$GCSNAP" convert "$WORK/a.gclog.zst" "$WORK/a2.gclog" && cmp -s "$WORK/a2.gclog" "$FIXTURE" \
  || fail "downloaded .zst does not decompress to the fixture"
"$GCSNAP" summary --json "$WORK/a.gclog.zst" > "$WORK/cli-summary.json" || fail "gcsnap summary"
python3 - "$WORK/body" "$WORK/cli-summary.json" <<'PY' || fail "catalog summary differs from gcsnap summary"
import json, sys
api = json.load(open(sys.argv[1])); cli = json.load(open(sys.argv[2]))
s = api["summary"]; s.pop("file"); cli.pop("file")
assert s == cli, (s, cli)
for k in ("objects", "bytes", "references", "roots", "types", "unreachable", "dangling_references"):
    assert api[k] == cli[k], k
PY
expect_status 400 GET "/api/snapshots/$ID/download?format=tar" bad_request

# ---- analyses: the same JSON as the gcsnap commands
expect_status 200 POST '/api/devices/dev-a/capture?wait=1&timeout=30'
ID2=$(json 'd["snapshot_id"]' < "$WORK/body")
same_as_cli() {  # same_as_cli API_PATH GCSNAP_ARGS...
  local path=$1; shift
  expect_status 200 GET "$path"
  "$GCSNAP" "$@" > "$WORK/cli.json" || fail "gcsnap $*"
  python3 - "$WORK/body" "$WORK/cli.json" <<'PY' || fail "$path differs from gcsnap $*"
import json, sys
def strip(d):
    d.pop("file", None)
    for part in ("old", "new"):
        if part in d: d[part].pop("file", None)
    for f in d.get("files", []): f.pop("file", None)
    return d
assert strip(json.load(open(sys.argv[1]))) == strip(json.load(open(sys.argv[2])))
PY
}
same_as_cli "/api/snapshots/$ID/dominators?top=3&by_type=1" dominators --json --top 3 --by-type "$FIXTURE"
OBJ=$(awk '$1 == "o" { print $2; exit }' "$FIXTURE")
same_as_cli "/api/snapshots/$ID/paths?object=$OBJ&max=2" paths --json --object "$OBJ" --max 2 "$FIXTURE"
same_as_cli "/api/diff?old=$ID&new=$ID2" diff --json --top 30 "$FIXTURE" "$FIXTURE"
same_as_cli "/api/devices/dev-a/trend?last=2" trend --json --top 10 --threshold 20 "$FIXTURE" "$FIXTURE"
expect_status 200 GET "/api/devices/dev-a/trend?last=2"
"$GCSNAP" trend --device dev-a --last 2 --json --collector "$API" > "$WORK/trend-device.json" \
  || fail "gcsnap trend --device"
python3 - "$WORK/body" "$WORK/trend-device.json" <<'PY' || fail "trend --device differs from the API's trend"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for f in d["files"]: f.pop("file")
assert a == b, (a, b)
PY
# Answers and errors name files as the store does, never by a path of the host.
expect_status 200 GET "/api/snapshots/$ID/dominators?top=1"
json 'd["file"]' < "$WORK/body" | grep -Eq '^snapshots/dev-a/[0-9]+\.gclog\.zst$' || fail "dominators names its file $(json 'd["file"]' < "$WORK/body")"
expect_status 422 GET "/api/snapshots/$ID/paths?object=123456789abc" bad_request
! grep -qF "$STORE" "$WORK/body" || fail "an analysis error shows the store's path: $(cat "$WORK/body")"
expect_status 200 GET "/api/diff?old=$ID&new=$ID2"
! grep -qF "$STORE" "$WORK/body" || fail "the diff shows the store's path"
expect_status 400 GET "/api/snapshots/$ID/paths?object=zz" bad_request
# 17 significant hex digits do not fit 64 bits: refused, not read as ffffffffffffffff
expect_status 400 GET "/api/snapshots/$ID/paths?object=1ffffffffffffffff" bad_request
expect_status 400 GET "/api/snapshots/$ID/paths?object=1x2" bad_request
"$GCSNAP" paths --object 1ffffffffffffffff "$FIXTURE" >/dev/null 2>&1; [ $? = 2 ] || fail "paths --object past 64 bits is not a usage error"
same_as_cli "/api/snapshots/$ID/paths?object=0x0000$OBJ&max=2" paths --json --object "$OBJ" --max 2 "$FIXTURE"
# HEAD is GET without a body, on the API as on the console
for p in /api/health "/api/snapshots/$ID" "/api/snapshots/$ID/download"; do
  got=$(curl -s -I -o "$WORK/head" -w '%{http_code}' "$API$p")
  [ "$got" = 200 ] || fail "HEAD $p: status $got: $(cat "$WORK/head")"
done
expect_status 422 GET "/api/snapshots/$ID/paths?type=No.Such.Type" bad_request
expect_status 400 GET "/api/diff?old=$ID" bad_request
expect_status 404 GET "/api/snapshots/9999/dominators" not_found
expect_status 404 GET "/api/devices/nobody/trend" not_found

# ---- busy: refused while a capture is in flight (long enough for a loaded
# machine to ask twice before it ends)
"$AGENT" "$AGENTS" dev-slow "$FIXTURE" --delay-ms 5000 > "$WORK/slow.out" &
PIDS+=($!)
wait_for "dev-slow to connect" connected dev-slow
expect_status 202 POST /api/devices/dev-slow/capture
SLOWREQ=$(json 'd["request_id"]' < "$WORK/body")
expect_status 409 POST /api/devices/dev-slow/capture busy
http GET /api/devices >/dev/null
json "[x['busy'] for x in d['devices'] if x['device_id']=='dev-slow']" < "$WORK/body" | grep -q True \
  || fail "dev-slow not busy"
stored() { http GET "/api/captures/$1" >/dev/null; [ "$(json 'd["state"]' < "$WORK/body")" = stored ]; }
wait_for "the slow capture" stored "$SLOWREQ"

# ---- broken streams: each fails with its reason, nothing complete stored
broken() {  # broken DEVICE MODE WORDS
  "$AGENT" "$AGENTS" "$1" "$FIXTURE" "$2" > "$WORK/$1.out" &
  PIDS+=($!)
  wait_for "$1 to connect" connected "$1"
  expect_status 502 POST "/api/devices/$1/capture?wait=1&timeout=30" capture_failed
  json 'd["reason"]' < "$WORK/body" | grep -q -- "$3" || fail "$1: reason lacks '$3': $(cat "$WORK/body")"
  expect_status 200 GET "/api/snapshots?device=$1"
  [ "$(json '[s["status"] for s in d["snapshots"]]' < "$WORK/body")" = "['failed']" ] \
    || fail "$1: $(cat "$WORK/body")"
  in_log "device $1.*$3" || fail "$1: no log line with '$3'"
}
broken dev-crc crc "CRC-32 mismatch"
broken dev-gap gap "a gap"
broken dev-count counts "objects"
broken dev-cut cut "disconnected during a snapshot"
wait_for "dev-crc to be dropped" disconnected dev-crc
expect_status 409 POST /api/devices/dev-crc/capture not_connected
grep -q "^error 5 " "$WORK/dev-crc.out" || fail "dev-crc got no CRC Error: $(cat "$WORK/dev-crc.out")"
grep -q "^error 4 " "$WORK/dev-gap.out" || fail "dev-gap got no sequence Error"
expect_status 200 GET '/api/snapshots?status=failed'
FAILED=$(json 'd["snapshots"][0]["id"]' < "$WORK/body")
expect_status 404 GET "/api/snapshots/$FAILED/download" not_found

for mode in oversize garbage unexpected; do
  "$AGENT" "$AGENTS" "dev-$mode" "$FIXTURE" "$mode" > "$WORK/$mode.out" || true
done
grep -q "^error 3 " "$WORK/oversize.out" || fail "oversize: $(cat "$WORK/oversize.out")"
grep -q "^error 1 .*undecodable" "$WORK/garbage.out" || fail "garbage: $(cat "$WORK/garbage.out")"
grep -q "^error 1 .*unexpected SectionEnd" "$WORK/unexpected.out" || fail "unexpected: $(cat "$WORK/unexpected.out")"
in_log "device dev-oversize.*above the maximum" || fail "no log line for the oversize frame"

# ---- a second session for a connected device is refused
"$AGENT" "$AGENTS" dev-a "$FIXTURE" > "$WORK/dup.out" || true
grep -q "^error 14 " "$WORK/dup.out" || fail "duplicate device: $(cat "$WORK/dup.out")"

# ---- the first agent was never disturbed
expect_status 200 POST '/api/devices/dev-a/capture?wait=1&timeout=30'

# ---- dedupe: the same agent snapshot sent twice is stored once
"$AGENT" "$AGENTS" dev-d "$FIXTURE" --unsolicited --snapshot-id 42 > "$WORK/d1.out" || fail "dev-d 1"
"$AGENT" "$AGENTS" dev-d "$FIXTURE" --unsolicited --snapshot-id 42 > "$WORK/d2.out" || fail "dev-d 2"
S1=$(awk '/^ack/ {print $4}' "$WORK/d1.out") S2=$(awk '/^ack/ {print $4}' "$WORK/d2.out")
[ -n "$S1" ] && [ "$S1" = "$S2" ] || fail "dedupe: acks '$S1' and '$S2'"
expect_status 200 GET '/api/snapshots?device=dev-d'
[ "$(json 'len(d["snapshots"])' < "$WORK/body")" = 1 ] || fail "dedupe: $(cat "$WORK/body")"

# ---- no temporary file is left; a clean stop
[ -z "$(find "$STORE" -name '*.tmp')" ] || fail "temporary files left: $(find "$STORE" -name '*.tmp')"
kill -TERM "$DAEMON"
for i in $(seq 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
kill -0 "$DAEMON" 2>/dev/null && fail "gcsnapd did not stop on SIGTERM"
wait "$DAEMON"; rc=$?
DAEMON=
[ "$rc" = 0 ] || fail "gcsnapd exited $rc"
grep -q "stopped" "$LOG" || fail "no 'stopped' line"
[ -z "$(find "$STORE" -name '*.tmp')" ] || fail "temporary files left after stop"
cleanup
echo "all collector HTTP checks passed"
