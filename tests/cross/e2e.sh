#!/bin/sh
# e2e.sh - a cross-built agent streams a snapshot to a host collector, and
# the collector stores exactly the bytes the host agent writes.
#
# usage: e2e.sh HOST_BIN AGENT WORK_DIR [SOURCE] [CLOCK]
#
# HOST_BIN holds the host build's gcsnapd, gcsnap and gcsnap-agent; AGENT
# runs the cross-built agent (a launcher through qemu-arm or wine). The host
# agent writes SOURCE (default mock:objects=20000,seed=7) stamped with
# CLOCK (default 5000) with --out; the cross agent sends the same capture
# once to a gcsnapd on free loopback ports; the snapshot fetched back as
# .gclog text must be byte-identical. Exit 0 identical, 1 different or a
# step failed, 77 when HOST_BIN lacks the host programs (reported skipped).
set -u

[ $# -ge 3 ] && [ $# -le 5 ] || { echo "usage: e2e.sh HOST_BIN AGENT WORK_DIR [SOURCE] [CLOCK]" >&2; exit 2; }
bin=$1 agent=$2 work=$3
source=${4:-mock:objects=20000,seed=7}
clock=${5:-5000}
device=cross-e2e

die() { echo "FAIL: $*" >&2; exit 1; }

for tool in gcsnapd gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] ||
    { echo "SKIP: $bin/$tool not found; configure with -DGS_HOST_BIN=<host build>/bin" >&2; exit 77; }
done

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo "$1"
}
agent_port=$(free_port 17410)
http_port=$(free_port 17411)
url=http://127.0.0.1:$http_port

collector_pid=
stop_collector() {
  [ -z "$collector_pid" ] || { kill "$collector_pid" 2>/dev/null; wait "$collector_pid" 2>/dev/null; }
  collector_pid=
}
trap stop_collector EXIT
trap 'exit 130' INT TERM

"$bin/gcsnap-agent" --source "$source" --clock "$clock" --out host.gclog ||
  die "the host agent could not write host.gclog"

"$bin/gcsnapd" --listen "127.0.0.1:$agent_port" --http "127.0.0.1:$http_port" --store store \
  2>gcsnapd.log &
collector_pid=$!
i=0
until "$bin/gcsnap" devices --collector "$url" >/dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -lt 300 ] || die "gcsnapd did not answer within 30 s (gcsnapd.log: $(tail -3 gcsnapd.log))"
  kill -0 "$collector_pid" 2>/dev/null || die "gcsnapd exited: $(tail -3 gcsnapd.log)"
  sleep 0.1
done

# --once: connect, send one snapshot unasked, wait for the verdict, exit.
t0=$(date +%s)
"$agent" --source "$source" --clock "$clock" --connect "127.0.0.1:$agent_port" \
  --device-id "$device" --once --connect-timeout 30 2>agent.log ||
  die "the cross agent failed (exit $?): $(tail -5 agent.log)"
echo "cross agent: sent and acknowledged in $(( $(date +%s) - t0 )) s"

id=$("$bin/gcsnap" snapshots --device "$device" --status complete --limit 1 --json --collector "$url" |
     sed -n 's/^ *"id": \([0-9]*\).*/\1/p' | head -n 1)
[ -n "$id" ] || die "no complete snapshot of $device at the collector"
"$bin/gcsnap" fetch "$id" -o stored.gclog --format gclog --collector "$url" ||
  die "gcsnap fetch $id failed"
stop_collector

if cmp host.gclog stored.gclog; then
  echo "identical: $(wc -c <host.gclog) bytes, $source, clock $clock"
  exit 0
fi
diff host.gclog stored.gclog | head -10
die "the stored snapshot differs from the host agent's output"
