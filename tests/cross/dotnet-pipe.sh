#!/bin/sh
# dotnet-pipe.sh - the Win32 agent's dotnet source under Wine, on a real
# named pipe: tests/dotnet/diag.py plays a recorded .NET 10 heap walk on
# TCP (serve --tcp) and pipe-relay.exe (pipe-relay.c) puts it behind
# \\.\pipe\NAME, a name of this run's own. The agent reads it with
# --source 'dotnet:\\.\pipe\NAME': its dump and .gens.json must be
# byte-identical to the host agent's, read from diag.py on a Unix socket,
# with the same --clock; the session must have been stopped on a second
# connection while the stream's stayed open. Then: a pipe nobody made fails
# (exit 1, the message names the pipe), and so do a stream cut midway
# through the walk and one that stalls (timeout=2: within 10 s, the session
# stopped all the same), with the host agent's message and no file left.
#
# usage: dotnet-pipe.sh HOST_BIN AGENT RELAY FIXTURES_DIR WORK_DIR [CLOCK]
#
# HOST_BIN holds the host build's gcsnap and gcsnap-agent; AGENT and RELAY
# run the Win32 gcsnap-agent and pipe-relay under Wine (launchers, in one
# Wine prefix, so that they see each other's pipes); FIXTURES_DIR is
# tests/fixtures/nettrace. Needs python3 and wine64, no .NET. Exit 0 pass,
# 1 fail, 77 skipped (no host build, no python3 or no Wine).
set -u

[ $# -ge 5 ] && [ $# -le 6 ] ||
  { echo "usage: dotnet-pipe.sh HOST_BIN AGENT RELAY FIXTURES_DIR WORK_DIR [CLOCK]" >&2; exit 2; }
bin=$1 agent=$2 relay=$3 fixtures=$4 work=$5
clock=${6:-0x5eed}
diag=$(cd "$(dirname "$0")/../dotnet" && pwd)/diag.py

# printf, not echo: dash's echo would take the pipes' backslashes for escapes.
say() { printf '%s\n' "$*"; }
die() { say "FAIL: $*" >&2; exit 1; }
skip() { say "SKIP: $*" >&2; exit 77; }

for tool in gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || skip "$bin/$tool not found; configure with -DGS_HOST_BIN=<host build>/bin"
done
command -v python3 >/dev/null 2>&1 || skip "no python3 to play the recorded stream"
# Where tests/cross/wine-run.sh looks for it.
command -v wine64 >/dev/null 2>&1 || [ -x /usr/lib/wine/wine64 ] ||
  skip "no wine64 to run the Win32 agent (toolchains/install-deps.sh)"
[ -f "$diag" ] || die "$diag not found"
[ -f "$fixtures/heap-net10.nettrace" ] || die "no $fixtures/heap-net10.nettrace"

fixtures=$(cd "$fixtures" && pwd) || die "no folder $fixtures"
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
work=$(pwd)
# A socket's path holds at most 107 bytes.
sockets=$work
[ ${#work} -lt 80 ] || sockets=$(mktemp -d /tmp/gs-dotnet-pipe.XXXXXX) || die "mktemp -d"
# Pipes are machine-wide (in the Wine prefix): a name for this run alone.
name=gcsnap-test-$$-$(date +%s)
pipe='\\.\pipe\'$name

server_pid= relay_pid= port=0
stop_server() {
  [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; }
  server_pid=
}
cleanup() {
  stop_server
  [ -z "$relay_pid" ] || { kill "$relay_pid" 2>/dev/null; wait "$relay_pid" 2>/dev/null; }
  [ "$sockets" = "$work" ] || rm -rf "$sockets"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_line LOG PID WHAT: until LOG has its "listening" line (PID still running).
wait_line() {
  i=0
  until grep -q '^listening ' "$1" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -lt 600 ] || die "$3 not listening in 60 s: $(tail -3 "$1")"
    kill -0 "$2" 2>/dev/null || die "$3 exited: $(tail -3 "$1")"
    sleep 0.1
  done
}

# serve NAME TRACE [FAULTS...]: diag.py serve, once it listens; on
# 127.0.0.1:$port with NAME.tcp (the first time a free port, then the
# same, which the relay connects to), on $sockets/NAME.sock otherwise.
serve() {
  where=$1 trace=$2
  shift 2
  stop_server
  case $where in
    *.tcp) set -- --tcp "127.0.0.1:$port" "$@" ;;
    *) sock=$sockets/$where.sock; set -- --socket "$sock" "$@" ;;
  esac
  python3 "$diag" serve "$@" --trace "$fixtures/$trace" --info "$fixtures/$trace.info" \
    >"$where.serve.log" 2>&1 &
  server_pid=$!
  wait_line "$where.serve.log" "$server_pid" "$where: diag.py serve"
  case $where in
    *.tcp) port=$(sed -n 's/^listening 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$where.serve.log") ;;
  esac
}

# Wine's prefix is made on first use (seconds): before anything is timed.
"$relay" >/dev/null 2>&1
[ $? -eq 2 ] || die "pipe-relay does not start under Wine: $("$relay" 2>&1 | tail -3)"

serve heap.tcp heap-net10.nettrace
[ -n "$port" ] || die "diag.py serve printed no port: $(cat heap.tcp.serve.log)"
"$relay" "$pipe" 127.0.0.1 "$port" >relay.log 2>&1 &
relay_pid=$!
wait_line relay.log "$relay_pid" "pipe-relay"
say "$pipe relays to 127.0.0.1:$port"

# The heap: the same bytes from both agents.
t0=$(date +%s)
"$agent" --source "dotnet:$pipe" --clock "$clock" --out win.gclog --json >win.json 2>win.log ||
  die "the Win32 agent failed (exit $?): $(cat win.log)"
say "Win32 agent: $(cat win.json) in $(( $(date +%s) - t0 )) s"
stop_server
grep -q '^stop session=' heap.tcp.serve.log && grep -q '^end session=[0-9a-f]* stopped$' heap.tcp.serve.log ||
  die "the session was not stopped while its stream was open: $(cat heap.tcp.serve.log)"
serve heap heap-net10.nettrace
"$bin/gcsnap-agent" --source "dotnet:$sock" --clock "$clock" --out host.gclog --json >host.json 2>host.log ||
  die "the host agent failed (exit $?): $(cat host.log)"
stop_server
"$bin/gcsnap" validate --strict win.gclog | grep -q '(0 warnings)' ||
  die "win.gclog does not validate strictly: $("$bin/gcsnap" validate --strict win.gclog 2>&1 | tail -3)"
cmp host.gclog win.gclog || die "the Win32 agent's dump differs from the host agent's"
cmp host.gclog.gens.json win.gclog.gens.json ||
  die "the Win32 agent's generations (.gens.json) differ from the host agent's"
say "identical: $(wc -c <win.gclog) bytes and $(wc -c <win.gclog.gens.json) bytes of generations, clock $clock"

# A pipe nobody made.
missing='\\.\pipe\'$name-missing
mkdir missing
"$agent" --source "dotnet:$missing" --out missing/x.gclog 2>missing.log
rc=$?
[ "$rc" -eq 1 ] || die "missing: the Win32 agent exited $rc, not 1: $(cat missing.log)"
grep -qF "$missing" missing.log || die "missing: the message does not name $missing: $(cat missing.log)"
[ -z "$(ls -A missing)" ] || die "missing: the Win32 agent left $(ls -A missing)"
say "missing: $(cat missing.log)"

# refusal NAME [KNOBS] -- FAULTS...: both agents exit 1 with the same
# message within 10 s and leave nothing, the Win32 one through the pipe.
refusal() {
  what=$1 knobs=$2
  shift 3
  for who in win host; do
    mkdir "$what-$who"
    if [ "$who" = win ]; then
      serve "$what.tcp" heap-net10.nettrace "$@"
      t0=$(date +%s)
      "$agent" --source "dotnet:$pipe$knobs" --out "$what-$who/x.gclog" 2>"$what-$who.log"
    else
      serve "$what" heap-net10.nettrace "$@"
      t0=$(date +%s)
      "$bin/gcsnap-agent" --source "dotnet:$sock$knobs" --out "$what-$who/x.gclog" 2>"$what-$who.log"
    fi
    rc=$? took=$(( $(date +%s) - t0 ))
    stop_server
    [ "$rc" -eq 1 ] || die "$what: the $who agent exited $rc, not 1: $(cat "$what-$who.log")"
    [ "$took" -lt 10 ] || die "$what: the $who agent took $took s to fail"
    [ -z "$(ls -A "$what-$who")" ] || die "$what: the $who agent left $(ls -A "$what-$who")"
  done
  # Wine's stderr ends lines with CR LF.
  tr -d '\r' <"$what-win.log" >"$what-win.txt"
  cmp -s "$what-host.log" "$what-win.txt" ||
    die "$what: the messages differ: host '$(cat "$what-host.log")', Win32 '$(cat "$what-win.log")'"
  say "$what: both refuse: $(cat "$what-win.log")"
}

# Midway through the walk: half the stream's bytes.
half=$(( $(wc -c <"$fixtures/heap-net10.nettrace") / 2 ))
refusal cut "" -- --truncate "$half"
# Nothing more after half the stream, the connection kept open: the
# agent's bounded wait on the pipe runs out and is cancelled.
refusal stall ",timeout=2" -- --stall-after "$half"
grep -q '^stop session=' stall.tcp.serve.log || die "stall: the Win32 agent did not stop the session"
exit 0
