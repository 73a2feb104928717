#!/usr/bin/env bash
# console_test.sh - the web console gcsnapd serves on its HTTP port, and
# the histogram API it pages through (GET /api/snapshots/ID/types).
#
#   console_test.sh GCSNAPD GST_AGENT GCSNAP CONSOLE_DIR FIXTURE WORKDIR
#
# Checks: "/" is the page, each asset comes with its Content-Type, ETag,
# no-cache and a Content-Security-Policy that allows only the collector;
# the served bytes are those of CONSOLE_DIR; If-None-Match gives 304;
# other methods and unknown files are refused; no asset names another
# host (no http:// or https:// at all, no protocol-relative src/href);
# the script never turns strings into markup (no innerHTML and the like);
# the histogram's pages, filter and order agree with
# "gcsnap summary --json --top 0" of the same file.
# Exit 0 when every check passed, 1 on the first failure.
set -u
GCSNAPD=$1 AGENT=$2 GCSNAP=$3 CONSOLE=$4 FIXTURE=$5 WORK=$6
rm -rf "$WORK" && mkdir -p "$WORK"
STORE=$WORK/store LOG=$WORK/gcsnapd.log
DAEMON= PIDS=()

fail() { echo "FAIL: $*" >&2; echo "--- daemon log:" >&2; tail -n 20 "$LOG" >&2; cleanup; exit 1; }
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$DAEMON" ] && kill "$DAEMON" 2>/dev/null
  wait 2>/dev/null
}
for tool in curl python3; do
  command -v $tool >/dev/null || { echo "SKIP: $tool is not installed"; exit 77; }
done
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# get PATH [CURL ARGS...] -> body in $WORK/body, headers in $WORK/headers, status echoed
get() { local p=$1; shift; rm -f "$WORK/body"; : > "$WORK/body"; curl -s -D "$WORK/headers" -o "$WORK/body" -w '%{http_code}' "$@" "$API$p"; }
header() { tr -d '\r' < "$WORK/headers" | sed -n "s/^$1: //Ip" | head -n 1; }
wait_for() {
  local desc=$1 i; shift
  for i in $(seq 100); do "$@" && return 0; sleep 0.1; done
  fail "timed out waiting for $desc"
}

"$GCSNAPD" --listen 127.0.0.1:0 --http 127.0.0.1:0 --store "$STORE" 2>"$LOG" &
DAEMON=$!
wait_for "the daemon to listen" grep -q "HTTP API on" "$LOG"
AGENTS=$(sed -n 's/.*listening for agents on \([0-9.:]*\).*/\1/p' "$LOG")
API=http://$(sed -n 's|.*HTTP API on http://\([0-9.:]*\)/api/.*|\1|p' "$LOG")

# ---- the page and its assets
for path in / /console/ /console/index.html; do
  [ "$(get $path)" = 200 ] || fail "GET $path: not 200"
  [ "$(header content-type)" = "text/html; charset=utf-8" ] || fail "GET $path: type $(header content-type)"
  cmp -s "$WORK/body" "$CONSOLE/index.html" || fail "GET $path: not the bytes of index.html"
done
grep -q '<script src="/console/console.js">' "$WORK/body" || fail "the page does not load console.js"
grep -q 'href="/console/console.css"' "$WORK/body" || fail "the page does not load console.css"
check_asset() {  # check_asset NAME TYPE
  [ "$(get "/console/$1")" = 200 ] || fail "GET /console/$1: not 200"
  [ "$(header content-type)" = "$2" ] || fail "/console/$1: type '$(header content-type)', expected '$2'"
  cmp -s "$WORK/body" "$CONSOLE/$1" || fail "/console/$1: served bytes differ from $CONSOLE/$1"
  [ "$(header cache-control)" = no-cache ] || fail "/console/$1: cache-control '$(header cache-control)'"
  [ "$(header x-content-type-options)" = nosniff ] || fail "/console/$1: no nosniff"
  header content-security-policy | grep -q "default-src 'none'; script-src 'self'" || fail "/console/$1: CSP"
  header content-security-policy | grep -q "connect-src 'self'" || fail "/console/$1: CSP connect-src"
  ETAG=$(header etag)
  [ -n "$ETAG" ] || fail "/console/$1: no ETag"
  [ "$(get "/console/$1" -H "If-None-Match: $ETAG")" = 304 ] || fail "/console/$1: If-None-Match not 304"
  [ ! -s "$WORK/body" ] || fail "/console/$1: a 304 with a body"
  [ "$(get "/console/$1" -H 'If-None-Match: "stale"')" = 200 ] || fail "/console/$1: stale ETag not 200"
}
check_asset index.html "text/html; charset=utf-8"
check_asset console.js "text/javascript; charset=utf-8"
check_asset console_tree.js "text/javascript; charset=utf-8"
check_asset console_fleet.js "text/javascript; charset=utf-8"
check_asset console_leaks.js "text/javascript; charset=utf-8"
check_asset console.css "text/css; charset=utf-8"
[ "$(get / -I)" = 200 ] || fail "HEAD / not 200"
[ "$(header content-length)" = "$(wc -c < "$CONSOLE/index.html" | tr -d ' ')" ] || fail "HEAD /: content-length"
[ "$(get / -X POST)" = 405 ] || fail "POST / not 405"
[ "$(get /console/nothing.js)" = 404 ] || fail "unknown asset not 404"
[ "$(json 'd["error"]' < "$WORK/body")" = not_found ] || fail "unknown asset: not the API's error object"
[ "$(get /favicon.ico)" = 404 ] || fail "/favicon.ico not 404"
[ "$(get /apix)" = 404 ] || fail "/apix not 404"
[ "$(get /api/nothing)" = 404 ] || fail "/api/nothing not 404"
[ "$(get /api/health)" = 200 ] || fail "/api/health after the console routes"

# ---- no other host: no absolute URL in any asset, every src/href local
for f in "$CONSOLE"/*.html "$CONSOLE"/*.js "$CONSOLE"/*.css; do
  if grep -n -i -E 'https?:' "$f"; then fail "$f names another host"; fi
  if grep -n -E '(src|href)="//' "$f"; then fail "$f has a protocol-relative URL"; fi
  if grep -n -E '@import|url\(' "$f"; then fail "$f loads something from CSS"; fi
done
# Names from the wire go in as text: the script never parses markup.
if grep -n -E 'innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function' "$CONSOLE"/*.js; then
  fail "a script builds markup from strings"
fi
grep -o -E '(src|href)="[^"]*"' "$CONSOLE/index.html" | grep -v -E '="(/console/|data:|#)' \
  && fail "index.html refers to something the collector does not serve"

# ---- the histogram API on a stored snapshot
"$AGENT" "$AGENTS" dev-c "$FIXTURE" --count 0 > "$WORK/agent.out" &
PIDS+=($!)
connected() { get /api/devices >/dev/null; grep -q '"connected":true' "$WORK/body"; }
wait_for "the agent to connect" connected
[ "$(curl -s -o "$WORK/body" -w '%{http_code}' -X POST "$API/api/devices/dev-c/capture?wait=1&timeout=30")" = 200 ] \
  || fail "capture: $(cat "$WORK/body")"
ID=$(json 'd["snapshot_id"]' < "$WORK/body")
"$GCSNAP" summary --json --top 0 "$FIXTURE" > "$WORK/summary.json" || fail "gcsnap summary"
[ "$(get "/api/snapshots/$ID/types?limit=0")" = 200 ] || fail "types: $(cat "$WORK/body")"
cp "$WORK/body" "$WORK/all.json"
[ "$(get "/api/snapshots/$ID/types?offset=1&limit=2&sort=name&order=asc&filter=SYSTEM")" = 200 ] \
  || fail "types page: $(cat "$WORK/body")"
cp "$WORK/body" "$WORK/page.json"
[ "$(get "/api/snapshots/$ID/types")" = 200 ] || fail "types default: $(cat "$WORK/body")"
python3 - "$WORK/summary.json" "$WORK/all.json" "$WORK/page.json" "$WORK/body" <<'EOF' || fail "types answers"
import json, sys
summary, every, page, default = (json.load(open(f)) for f in sys.argv[1:5])
want = {r["type"]: (r["count"], r["bytes"]) for r in summary["by_type"]}
got = {r["type"]: (r["count"], r["bytes"]) for r in every["rows"]}
assert got == want, "limit=0 rows differ from gcsnap summary --top 0"
assert every["types"] == len(want) == every["matched"], every["types"]
assert every["bytes"] == summary["bytes"] and every["objects"] == summary["objects"]
order = [r["bytes"] for r in every["rows"]]
assert order == sorted(order, reverse=True), "default order is not by bytes, largest first"
sys_rows = sorted(t for t in want if "system" in t.lower())
assert page["matched"] == len(sys_rows), (page["matched"], len(sys_rows))
assert [r["type"] for r in page["rows"]] == sys_rows[1:3], page["rows"]
assert page["matched_bytes"] == sum(want[t][1] for t in sys_rows)
assert page["sort"] == "name" and page["order"] == "asc" and page["offset"] == 1 and page["limit"] == 2
assert default["limit"] == 100 and default["offset"] == 0 and len(default["rows"]) == min(100, len(want))
for r in every["rows"]:
    assert abs(r["percent"] - 100.0 * r["bytes"] / every["bytes"]) <= 0.006, r
EOF
for q in 'sort=size' 'order=up' 'limit=x' 'offset=-1'; do
  [ "$(get "/api/snapshots/$ID/types?$q")" = 400 ] || fail "types?$q: not 400"
done
[ "$(get /api/snapshots/9999/types)" = 404 ] || fail "types of an unknown snapshot: not 404"
[ "$(get "/api/snapshots/$ID/types" -X POST)" = 405 ] || fail "POST types: not 405"

cleanup
echo "console: all checks passed"
