#!/bin/sh
# dotnet-replay.sh - the cross-built agent's dotnet source under qemu-arm,
# against a recorded .NET 10 heap walk played by tests/dotnet/diag.py: its
# dump (and .gens.json) must be byte-identical to the host agent's with the
# same --clock, and on streams it must refuse (a real one whose runtime
# dropped events, one corrupted in its first event) it must fail as the
# host agent does, with the same message, leaving no file. The stream is
# of a 64-bit program: a 32-bit agent reads its 64-bit addresses.
#
# usage: dotnet-replay.sh HOST_BIN AGENT FIXTURES_DIR WORK_DIR [CLOCK]
#
# HOST_BIN holds the host build's gcsnap and gcsnap-agent; AGENT runs the
# cross-built agent (a launcher through qemu-arm); FIXTURES_DIR is
# tests/fixtures/nettrace. Needs python3, no .NET. Exit 0 pass, 1 fail, 77
# skipped (no host build or no python3).
set -u

[ $# -ge 4 ] && [ $# -le 5 ] ||
  { echo "usage: dotnet-replay.sh HOST_BIN AGENT FIXTURES_DIR WORK_DIR [CLOCK]" >&2; exit 2; }
bin=$1 agent=$2 fixtures=$3 work=$4
clock=${5:-0x5eed}
diag=$(cd "$(dirname "$0")/../dotnet" && pwd)/diag.py

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || skip "$bin/$tool not found; configure with -DGS_HOST_BIN=<host build>/bin"
done
command -v python3 >/dev/null 2>&1 || skip "no python3 to play the recorded stream"
[ -f "$diag" ] || die "$diag not found"
[ -f "$3/heap-net10.nettrace" ] || die "no $3/heap-net10.nettrace"

fixtures=$(cd "$fixtures" && pwd) || die "no folder $fixtures"
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
work=$(pwd)
# A socket's path holds at most 107 bytes.
sockets=$work
[ ${#work} -lt 80 ] || sockets=$(mktemp -d /tmp/gs-dotnet-replay.XXXXXX) || die "mktemp -d"

server_pid=
stop_server() {
  [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
  server_pid=
}
cleanup() {
  stop_server
  [ "$sockets" = "$work" ] || rm -rf "$sockets"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# serve NAME TRACE [FAULTS...]: diag.py serve on $sockets/NAME.sock, once it listens.
serve() {
  name=$1 trace=$2
  shift 2
  stop_server
  sock=$sockets/$name.sock
  python3 "$diag" serve --socket "$sock" --trace "$fixtures/$trace" \
    --info "$fixtures/${trace%.gz}.info" "$@" >"$name.serve.log" 2>&1 &
  server_pid=$!
  i=0
  until grep -q '^listening ' "$name.serve.log" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || die "$name: diag.py serve not listening in 30 s: $(tail -3 "$name.serve.log")"
    kill -0 "$server_pid" 2>/dev/null || die "$name: diag.py serve exited: $(tail -3 "$name.serve.log")"
    sleep 0.1
  done
}

# The heap: the same bytes from both agents.
serve heap heap-net10.nettrace
"$bin/gcsnap-agent" --source "dotnet:$sock" --clock "$clock" --out host.gclog --json >host.json 2>host.log ||
  die "the host agent failed (exit $?): $(cat host.log)"
t0=$(date +%s)
"$agent" --source "dotnet:$sock" --clock "$clock" --out arm.gclog --json >arm.json 2>arm.log ||
  die "the cross agent failed (exit $?): $(cat arm.log)"
echo "cross agent: $(cat arm.json) in $(( $(date +%s) - t0 )) s"
stop_server
"$bin/gcsnap" validate --strict arm.gclog | grep -q '(0 warnings)' ||
  die "arm.gclog does not validate strictly: $("$bin/gcsnap" validate --strict arm.gclog 2>&1 | tail -3)"
cmp host.gclog arm.gclog || die "the cross agent's dump differs from the host agent's"
cmp host.gclog.gens.json arm.gclog.gens.json ||
  die "the cross agent's generations (.gens.json) differ from the host agent's"
echo "identical: $(wc -c <arm.gclog) bytes and $(wc -c <arm.gclog.gens.json) bytes of generations, clock $clock"

# refusal NAME TRACE [FAULTS...]: both agents exit 1 with the same message and leave nothing.
refusal() {
  name=$1
  serve "$@"
  for who in host arm; do
    mkdir "$name-$who"
    if [ "$who" = host ]; then
      "$bin/gcsnap-agent" --source "dotnet:$sock" --out "$name-$who/x.gclog" 2>"$name-$who.log"
    else
      "$agent" --source "dotnet:$sock" --out "$name-$who/x.gclog" 2>"$name-$who.log"
    fi
    rc=$?
    [ "$rc" -eq 1 ] || die "$name: the $who agent exited $rc, not 1: $(cat "$name-$who.log")"
    [ -z "$(ls -A "$name-$who")" ] || die "$name: the $who agent left $(ls -A "$name-$who")"
  done
  stop_server
  cmp -s "$name-host.log" "$name-arm.log" ||
    die "$name: the messages differ: host '$(cat "$name-host.log")', cross '$(cat "$name-arm.log")'"
  echo "$name: both refuse: $(cat "$name-arm.log")"
}

refusal lossy alloc-lossy.nettrace.gz
grep -q "buffer-mb=" lossy-arm.log || die "lossy: the message gives no buffer-mb= to use"
# 16 bytes of garbage at the first event's header, past the 20-byte header
# of the first event block.
at=$(python3 "$diag" blocks "$fixtures/heap-net10.nettrace" | awk '$1 == "EventBlock" { print $3 + 20; exit }')
[ -n "$at" ] || die "no event block in heap-net10.nettrace"
refusal garbage heap-net10.nettrace --garbage-at "$at"
grep -q "the event stream: byte " garbage-arm.log || die "garbage: the message names no byte"
exit 0
