#!/bin/sh
# main-job.sh - the main job end to end, as the Quick start runs it: a
# collector on an embedded store, the demo application's agent connected to
# it, a capture on demand, the stored snapshot's summary; with the C#
# application (on .NET 10 or on Mono) also a few captures on a schedule and
# their leak suspects (gcsnap trend); then everything stops.
#
# usage: main-job.sh BIN_DIR OUT_DIR [SOURCE]
#
# BIN_DIR holds gcsnapd, gcsnap and gcsnap-agent; the store (demo-store/),
# the logs and the fetched snapshot (demo.gclog.zst) go to OUT_DIR. SOURCE
# is the agent's heap source: `dotnet` (the default when dotnet is
# installed and the demo application was built for it: the C# demo
# application BIN_DIR/../dotnet-demo/Contacts.dll on .NET 10, captured with
# --source dotnet:PID, device contacts-net-1), `mono` (the default else when
# Mono and the profiler module are built: the same program,
# BIN_DIR/../mono-apps/Contacts.exe, on Mono with BIN_DIR/../lib's module,
# device contacts-1), or any source spec, such as the instrumented
# runtime's demo:objects=200000,steps=500 (the default otherwise, device
# demo-1). The collector listens on free loopback ports, so a collector
# already running on the default ones is not disturbed. Exit status 0 when
# the snapshot was stored, validated and summarized (and, for dotnet and
# mono, the leak was found); 77 when the programs are not built (or the
# agent cannot connect, or has no dotnet source), which ctest reports as
# skipped.
set -eu

[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: main-job.sh BIN_DIR OUT_DIR [SOURCE]" >&2; exit 2; }
bin=$1
out=$2
lib=$bin/../lib
apps=$bin/../mono-apps
dotnet_app=$bin/../dotnet-demo/Contacts.dll
if [ $# -ge 3 ]; then
  source=$3
elif command -v dotnet >/dev/null 2>&1 && [ -f "$dotnet_app" ]; then
  source=dotnet
elif command -v mono >/dev/null 2>&1 && [ -f "$lib/libmono-profiler-gcsnap.so" ] &&
     [ -f "$apps/Contacts.exe" ]; then
  source=mono
else
  source=demo:objects=200000,steps=500
fi
mkdir -p "$out"
store=$out/demo-store
device=demo-1
case $source in
  dotnet) device=contacts-net-1 job="the C# demo application on .NET 10 (gcsnap-agent --source dotnet:PID)" ;;
  mono) device=contacts-1 job="the C# demo application on Mono (gcsnap-agent --source mono:SOCKET --stable-ids)" ;;
  demo*) job="the instrumented runtime's demo application (gcsnap-agent --source $source)" ;;
  *) job="gcsnap-agent --source $source" ;;
esac
# The C# application, on either runtime: scheduled captures and the leak.
csharp=no
[ "$source" != dotnet ] && [ "$source" != mono ] || csharp=yes

say() { printf '\n== %s\n' "$*"; }
die() { printf 'main-job: %s\n' "$*" >&2; exit 1; }

# 77: what ctest reports as skipped, for a build without these programs.
for tool in gcsnapd gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || { echo "main-job: $bin/$tool not found; build first" >&2; exit 77; }
done
"$bin/gcsnap-agent" --help | grep -q -- '--connect' ||
  { echo "main-job: this gcsnap-agent cannot connect to a collector" >&2; exit 77; }
if [ "$source" = dotnet ]; then
  command -v dotnet >/dev/null 2>&1 && [ -f "$dotnet_app" ] ||
    { echo "main-job: dotnet or $dotnet_app not found; build first (target dotnet_demo_app)" >&2; exit 77; }
  "$bin/gcsnap-agent" --help | grep -q 'dotnet:PID' ||
    { echo "main-job: this gcsnap-agent has no dotnet source" >&2; exit 77; }
fi
echo "main-job: running $job, device $device"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
    echo "$1"
}
agent_port=$(free_port 7410)
http_port=$(free_port 7411)
url=http://127.0.0.1:$http_port

collector_pid= agent_pid= app_pid=
stop_all() {
  [ -z "$agent_pid" ] || { kill "$agent_pid" 2>/dev/null || true; wait "$agent_pid" 2>/dev/null || true; }
  [ -z "$app_pid" ] || { kill "$app_pid" 2>/dev/null || true; wait "$app_pid" 2>/dev/null || true; }
  [ -z "$collector_pid" ] || { kill "$collector_pid" 2>/dev/null || true; wait "$collector_pid" 2>/dev/null || true; }
  agent_pid= collector_pid= app_pid=
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
    [ -z "$app_pid" ] || kill -0 "$app_pid" 2>/dev/null ||
      die "the application exited; see $out/demo-app.log"
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

agent_source=$source
agent_opts=
if [ "$source" = mono ]; then
  sock=$out/contacts.sock
  rm -f "$sock"
  say "Starting the C# demo application on Mono with the gcsnap module: mono --profile=gcsnap:socket=$sock,ids=stable Contacts.exe"
  LD_LIBRARY_PATH=$lib mono "--profile=gcsnap:socket=$sock,ids=stable" "$apps/Contacts.exe" \
    >"$out/demo-app.log" 2>&1 &
  app_pid=$!
  wait_for "the application's gcsnap socket" test -S "$sock"
  agent_source=mono:$sock
  agent_opts=--stable-ids
elif [ "$source" = dotnet ]; then
  say "Starting the C# demo application on .NET 10: dotnet $dotnet_app"
  # .NET opens its diagnostics socket as the runtime starts: the agent
  # finds it by the process ID. Its IDs are addresses (no --stable-ids).
  dotnet "$dotnet_app" >"$out/demo-app.log" 2>&1 &
  app_pid=$!
  wait_for "the application to start" grep -q '^ready' "$out/demo-app.log"
  agent_source=dotnet:$app_pid
fi

say "Starting the demo application's agent: gcsnap-agent --source $agent_source ${agent_opts:+$agent_opts }--connect 127.0.0.1:$agent_port --device-id $device"
# $agent_opts is empty or one word.
# shellcheck disable=SC2086
"$bin/gcsnap-agent" --source "$agent_source" $agent_opts --connect "127.0.0.1:$agent_port" \
  --device-id "$device" 2>"$out/demo-agent.log" &
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

if [ "$csharp" = yes ]; then
  say "Scheduled captures: gcsnap schedule add $device --every 2s, until 4 more are stored"
  # complete_ids N: the IDs of the device's newest N complete snapshots.
  complete_ids() {
    "$bin/gcsnap" snapshots --device "$device" --status complete --limit "$1" --json \
      --collector "$url" | sed -n 's/^ *"id": \([0-9]*\).*/\1/p'
  }
  before=$(complete_ids 1)
  schedule=$("$bin/gcsnap" schedule add "$device" --every 2s --collector "$url") ||
    die "gcsnap schedule add failed"
  echo "$schedule"
  schedule=$(echo "$schedule" | sed -n 's/^Schedule \([0-9]*\):.*/\1/p')
  stored() { [ "$(complete_ids 4 | awk -v b="${before:-0}" '$1 > b' | wc -l)" -ge 4 ]; }
  wait_for "4 scheduled captures" stored
  # The store outlives this run: the schedule does not.
  "$bin/gcsnap" schedule rm "$schedule" --collector "$url" >/dev/null
  "$bin/gcsnap" snapshots --device "$device" --limit 5 --collector "$url"

  say "Leak suspects of the last 4 snapshots: gcsnap trend --device $device --last 4 --top 3"
  "$bin/gcsnap" trend --device "$device" --last 4 --top 3 --collector "$url" | tee "$out/demo-trend.txt"
  grep -q 'DetailView' "$out/demo-trend.txt" || die "the leak (DetailView) is not among the suspects"
  # The runtime names static fields: the event that holds the leak is named.
  if [ "$source" = dotnet ]; then
    grep -q 'held by a static root field Changed ' "$out/demo-trend.txt" ||
      die "the static event that holds the leak (Contacts.Changed) is not named"
  fi
fi

say "Stopping the agent, the application and the collector"
stop_all
echo "Done: $job, device $device. The store stays in $store; logs: $out/demo-gcsnapd.log, $out/demo-agent.log"
