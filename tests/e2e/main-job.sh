#!/bin/sh
# main-job.sh - the main job end to end, as the Quick start runs it: a
# collector on an embedded store, the demo application's agent connected to
# it, a capture on demand, the stored snapshot's summary; then both stop.
#
# usage: main-job.sh BIN_DIR OUT_DIR [SOURCE]
#
# BIN_DIR holds gcsnapd, gcsnap and gcsnap-agent; the store (demo-store/),
# the logs and the fetched snapshot (demo.gclog.zst) go to OUT_DIR. SOURCE
# is the agent's heap source (default
# demo:objects=200000,steps=500). The collector listens on free loopback
# ports, so a collector already running on the default ones is not
# disturbed. Exit status 0 when the snapshot was stored, validated and
# summarized; 77 when the programs are not built (or the agent cannot
# connect), which ctest reports as skipped.
set -eu

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: main-job.sh BIN_DIR OUT_DIR [SOURCE]" >&2; exit 2; }
bin=$1
out=$2
source=${3:-demo:objects=200000,steps=500}
mkdir -p "$out"
store=$out/demo-store
device=demo-1

say() { printf '\n== %s\n' "$*"; }
die() { printf 'main-job: %s\n' "$*" >&2; exit 1; }

# 77: what ctest reports as skipped, for a build without these programs.
for tool in gcsnapd gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || { echo "main-job: $bin/$tool not found; build first" >&2; exit 77; }
done
"$bin/gcsnap-agent" --help | grep -q -- '--connect' ||
  { echo "main-job: this gcsnap-agent cannot connect to a collector" >&2; exit 77; }

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo "$1"
}
agent_port=$(free_port 7410)
http_port=$(free_port 7411)
url=http://127.0.0.1:$http_port

collector_pid= agent_pid=
stop_all() {
  [ -z "$agent_pid" ] || { kill "$agent_pid" 2>/dev/null || true; wait "$agent_pid" 2>/dev/null || true; }
  [ -z "$collector_pid" ] || { kill "$collector_pid" 2>/dev/null || true; wait "$collector_pid" 2>/dev/null || true; }
  agent_pid= collector_pid=
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# wait_for WHAT CMD...: retries CMD for up to 30 s.
wait_for() {
  what=$1
  shift
  i=0
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || die "timed out waiting for $what"
    [ -z "$collector_pid" ] || kill -0 "$collector_pid" 2>/dev/null ||
      die "gcsnapd exited; see $out/demo-gcsnapd.log"
    sleep 0.1
  done
}

connected() {
  "$bin/gcsnap" devices --collector "$url" | awk -v d="$device" '$1 == d && $2 == "connected" { ok = 1 } END { exit !ok }'
}

say "Starting the collector: gcsnapd --listen 127.0.0.1:$agent_port --http 127.0.0.1:$http_port --store $store"
"$bin/gcsnapd" --listen "127.0.0.1:$agent_port" --http "127.0.0.1:$http_port" --store "$store" \
  2>"$out/demo-gcsnapd.log" &
collector_pid=$!
wait_for "the collector's HTTP API" "$bin/gcsnap" devices --collector "$url"

say "Starting the demo application's agent: gcsnap-agent --source $source --connect 127.0.0.1:$agent_port --device-id $device"
"$bin/gcsnap-agent" --source "$source" --connect "127.0.0.1:$agent_port" --device-id "$device" \
  2>"$out/demo-agent.log" &
agent_pid=$!
wait_for "the agent to connect" connected
"$bin/gcsnap" devices --collector "$url"

say "Capturing on demand: gcsnap capture $device --wait"
"$bin/gcsnap" capture "$device" --wait --collector "$url"

say "Stored snapshots: gcsnap snapshots --device $device"
"$bin/gcsnap" snapshots --device "$device" --collector "$url"
id=$("$bin/gcsnap" snapshots --device "$device" --status complete --limit 1 --json --collector "$url" |
     sed -n 's/^ *"id": \([0-9]*\).*/\1/p' | head -n 1)
[ -n "$id" ] || die "no complete snapshot of $device"

say "The stored snapshot: gcsnap fetch $id -o $out/demo.gclog.zst, then validate --strict and summary"
"$bin/gcsnap" fetch "$id" -o "$out/demo.gclog.zst" --collector "$url"
"$bin/gcsnap" validate --strict "$out/demo.gclog.zst"
"$bin/gcsnap" summary --top 15 "$out/demo.gclog.zst"

say "Stopping the agent and the collector"
stop_all
echo "Done. The store stays in $store; logs: $out/demo-gcsnapd.log, $out/demo-agent.log"
