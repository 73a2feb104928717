#!/bin/sh
# load.sh - load test of the collector gcsnapd: many agent processes on
# small mock heaps, captured periodically by a collector schedule, on
# loopback. Prints the collector's RSS every 10 s, capture latency (from the
# schedule's request to the snapshot stored) and the counts of snapshots the
# agents sent, the collector stored and the catalog lists.
#
# usage: tests/bench/load.sh [--check] [BUILD_DIR]
#
# With --check it exits 1 when a snapshot is lost or duplicated, a capture
# failed, or the collector's RSS grew by more than GS_LOAD_RSS_GROWTH MB
# between the first sample after the warm-up and the end. Sizes, figures
# and limits: README.md beside this script.
set -eu

usage() {
  cat <<'USAGE'
usage: tests/bench/load.sh [--check] [BUILD_DIR]
  BUILD_DIR  build folder holding bin/gcsnapd, bin/gcsnap, bin/gcsnap-agent
             (default build)
  --check    exit 1 on a lost, duplicated or failed snapshot, or RSS growth
             above GS_LOAD_RSS_GROWTH MB
Environment: GS_LOAD_AGENTS (agent processes, default 1000), GS_LOAD_SECONDS
(how long the schedule runs, default 300), GS_LOAD_EVERY (the schedule's
interval, default 5s), GS_LOAD_OBJECTS (objects per mock heap, default 200),
GS_LOAD_RSS_GROWTH (MB, default 16), GS_LOAD_WARMUP (seconds before the RSS
baseline, default 60), GS_BENCH_DIR (store and logs, removed afterwards).
USAGE
}

check=0
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --check) check=1; shift ;;
    -*) usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -le 1 ] || { usage >&2; exit 2; }
build=${1:-build}
bin=$build/bin
agents=${GS_LOAD_AGENTS:-1000}
seconds=${GS_LOAD_SECONDS:-300}
every=${GS_LOAD_EVERY:-5s}
objects=${GS_LOAD_OBJECTS:-200}
growth=${GS_LOAD_RSS_GROWTH:-16}
warmup=${GS_LOAD_WARMUP:-60}
root=${GS_BENCH_DIR:-${TMPDIR:-/tmp}/gcsnap-bench}
work=$root/load.$$

note() { printf '%s\n' "$*" >&2; }
for tool in gcsnapd gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || { note "load.sh: $bin/$tool not found; build first (cmake --build $build)"; exit 2; }
done
for n in "$agents" "$seconds" "$objects" "$growth" "$warmup"; do
  case $n in ''|*[!0-9]*|0) note "load.sh: sizes must be positive numbers, not '$n'"; exit 2 ;; esac
done
command -v python3 >/dev/null || { note "load.sh: needs python3 (ports, JSON, figures)"; exit 2; }
[ -r /proc/self/status ] || { note "load.sh: needs /proc (RSS samples); skipped"; exit 77; }

# File descriptors: gcsnapd holds one socket per agent plus its store, HTTP
# and log files and the pipes of its summary children, so 1000 agents need
# well over 1024 (the usual soft limit). The agents themselves need a few each.
need_fds=$((agents * 2 + 256))
ulimit -n "$need_fds" 2>/dev/null || ulimit -n hard 2>/dev/null || true
have_fds=$(ulimit -n)
if [ "$have_fds" != unlimited ] && [ "$have_fds" -lt "$need_fds" ]; then
  note "load.sh: needs 'ulimit -n $need_fds' for $agents agents; the hard limit is $(ulimit -Hn); skipped"
  exit 77
fi

pids=
cpid=
cleanup() {
  # Agents first (they would reconnect), then the collector.
  for p in $pids; do kill "$p" 2>/dev/null || true; done
  for p in $pids; do wait "$p" 2>/dev/null || true; done
  [ -z "$cpid" ] || { kill "$cpid" 2>/dev/null || true; wait "$cpid" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/agents"

port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
api() { python3 - "$url" "$@" <<'PY'
import json, sys, urllib.request
url, method, path = sys.argv[1:4]
req = urllib.request.Request(url + path, method=method, data=b"" if method != "GET" else None)
try:
    with urllib.request.urlopen(req, timeout=30) as r:
        print(r.read().decode())
except Exception as e:
    print(json.dumps({"error": str(e)}))
PY
}
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{ print $14 + $15 + $16 + $17 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
count_rows() {
  python3 - "$work/store/catalog.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=30)
n = dict(db.execute("SELECT status, count(*) FROM snapshots GROUP BY status").fetchall())
print(n.get("complete", 0), n.get("failed", 0))
PY
}

# ---- the collector and the agents ------------------------------------------
ap=$(port) hp=$(port)
url=http://127.0.0.1:$hp
sessions=$((agents + 16))
"$bin/gcsnapd" --listen "127.0.0.1:$ap" --http "127.0.0.1:$hp" --store "$work/store" \
  --max-sessions "$sessions" --max-sessions-per-address "$sessions" 2>"$work/gcsnapd.log" &
cpid=$!
i=0
until "$bin/gcsnap" devices --collector "$url" >/dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -lt 200 ] || { note "load.sh: gcsnapd does not start:"; cat "$work/gcsnapd.log" >&2; exit 1; }
  sleep 0.05
done
ticks_per_s=$(getconf CLK_TCK)

note "starting $agents agents (mock:objects=$objects)"
i=0
while [ "$i" -lt "$agents" ]; do
  dev=$(printf 'load-%04d' "$i")
  "$bin/gcsnap-agent" --source "mock:objects=$objects,seed=$((i + 1))" --connect "127.0.0.1:$ap" \
    --device-id "$dev" --retry-max 2 --json >"$work/agents/$dev.json" 2>"$work/agents/$dev.log" &
  pids="$pids $!"
  i=$((i + 1))
done
t0=$(date +%s)
while :; do
  n=$(api GET /api/health | python3 -c 'import json, sys; print(json.load(sys.stdin).get("devices_connected", 0))')
  [ "$n" -ge "$agents" ] && break
  [ $(($(date +%s) - t0)) -lt 120 ] || { note "load.sh: only $n of $agents agents connected after 120 s"; exit 1; }
  sleep 1
done
note "$agents agents connected in $(($(date +%s) - t0)) s; agents' RSS: $(
  for p in $pids; do rss_kb "$p"; done | awk '{ s += $1 } END { printf("%.0f MB in all, %.1f MB each", s / 1024, s / 1024 / NR) }')"

# ---- the schedule, sampled every 10 s ------------------------------------------
sch=$(api POST "/api/schedules?device=load-*&every=$every" |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
note "schedule $sch: every $every for $seconds s"
printf '%6s %9s %9s %8s %8s %9s %7s\n' t_s rss_MB hwm_MB stored failed per_s cpu_%
start=$(date +%s)
last_n=0 last_t=$start last_cpu=$(cpu_ticks "$cpid")
: >"$work/rss"
while :; do
  sleep 10
  now=$(date +%s)
  el=$((now - start))
  set -- $(count_rows)
  cpu=$(cpu_ticks "$cpid")
  rss=$(rss_kb "$cpid")
  hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$cpid/status")
  printf '%s %s\n' "$el" "$rss" >>"$work/rss"
  awk -v t="$el" -v r="$rss" -v h="$hwm" -v n="$1" -v f="$2" -v ln="$last_n" -v dt="$((now - last_t))" \
      -v c="$((cpu - last_cpu))" -v hz="$ticks_per_s" \
      'BEGIN { printf("%6d %9.1f %9.1f %8d %8d %9.1f %7.0f\n", t, r / 1024, h / 1024, n, f,
                      (n - ln) / dt, 100 * c / hz / dt) }'
  last_n=$1 last_t=$now last_cpu=$cpu
  [ "$el" -lt "$seconds" ] || break
done
api DELETE "/api/schedules/$sch" >/dev/null

# Let the captures in flight end, then stop the agents and the collector.
t0=$(date +%s)
while :; do
  busy=$(api GET /api/devices | python3 -c 'import json, sys; print(sum(1 for d in json.load(sys.stdin)["devices"] if d.get("busy")))')
  [ "$busy" -eq 0 ] && break
  [ $(($(date +%s) - t0)) -lt 60 ] || { note "load.sh: $busy captures still in flight after 60 s"; break; }
  sleep 1
done
end_rss=$(rss_kb "$cpid")
for p in $pids; do kill "$p" 2>/dev/null || true; done
for p in $pids; do wait "$p" 2>/dev/null || true; done
pids=
kill "$cpid"; wait "$cpid" || note "load.sh: gcsnapd exited with status $?"
cpid=

# ---- figures ------------------------------------------------------------------
python3 - "$work" "$check" "$growth" "$warmup" "$end_rss" <<'PY'
import datetime, glob, json, os, re, sqlite3, sys, time
work, check, growth, warmup, end_rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])

def ms(stamp):
    d = datetime.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S.%fZ")
    return d.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000

# The agents' side: what each sent (--json, one line per snapshot) and
# what the collector acknowledged.
sent, acked = {}, {}
for f in glob.glob(os.path.join(work, "agents", "*.json")):
    dev = os.path.basename(f)[:-5]
    with open(f) as fh:
        sent[dev] = [json.loads(l)["snapshot_id"] for l in fh if l.startswith("{")]
    with open(f[:-5] + ".log", errors="replace") as fh:
        acked[dev] = [int(m.group(1)) for m in re.finditer(r"snapshot (\d+) stored as \d+", fh.read())]

db = sqlite3.connect(os.path.join(work, "store", "catalog.db"))
rows = db.execute("SELECT device_id, agent_snapshot_id, status, reason FROM snapshots").fetchall()
complete, failed = {}, {}
for dev, asid, status, reason in rows:
    (complete if status == "complete" else failed).setdefault(dev, []).append((asid, reason))

lost = dup = extra = 0
for dev, ids in sent.items():
    got = [a for a, _ in complete.get(dev, [])]
    lost += len(set(ids) - set(got))
    dup += len(got) - len(set(got))
    extra += len(set(got) - set(ids))
unacked = sum(len(set(sent[d]) - set(acked[d])) for d in sent)
nfailed = sum(len(v) for v in failed.values())
reasons = sorted({r for v in failed.values() for _, r in v})

# Latency: the schedule's request to the "stored snapshot" line of the
# same device (a device has one capture in flight at a time).
asked, lat, recv, store = {}, [], [], []
req = re.compile(r"^(\S+) info  schedule \d+: capture of (\S+) requested")
done = re.compile(r"^(\S+) info  device (\S+): stored snapshot .* received in ([\d.]+) s .* stored in ([\d.]+) s")
with open(os.path.join(work, "gcsnapd.log"), errors="replace") as fh:
    for line in fh:
        m = req.match(line)
        if m:
            asked[m.group(2)] = ms(m.group(1))
            continue
        m = done.match(line)
        if m and m.group(2) in asked:
            lat.append(ms(m.group(1)) - asked.pop(m.group(2)))
            recv.append(float(m.group(3)) * 1000)
            store.append(float(m.group(4)) * 1000)

def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))] if v else float("nan")

rss = [tuple(map(int, l.split())) for l in open(os.path.join(work, "rss"))]
base = [r for t, r in rss if t >= warmup] or [r for _, r in rss]
grew = (max(base) - base[0]) / 1024.0
total_sent = sum(len(v) for v in sent.values())
print()
print("agents %d, snapshots sent %d, stored %d (catalog, complete), failed %d" %
      (len(sent), total_sent, sum(len(v) for v in complete.values()), nfailed))
print("lost %d, duplicated %d, stored but not sent %d, sent without the agent's Ack %d" %
      (lost, dup, extra, unacked))
if reasons:
    print("failure reasons: %s" % "; ".join(r or "(none)" for r in reasons[:5]))
print("latency, request to stored (ms): p50 %.0f, p99 %.0f, max %.0f (%d captures)" %
      (pct(lat, 50), pct(lat, 99), max(lat) if lat else float("nan"), len(lat)))
print("  of which received (SnapshotBegin to SnapshotEnd) p50 %.0f p99 %.0f; stored (sync,"
      " summary, catalog) p50 %.0f p99 %.0f" % (pct(recv, 50), pct(recv, 99), pct(store, 50), pct(store, 99)))
print("collector RSS: %.1f MB at %d s, at most %.1f MB after, %.1f MB at the end: grew %.1f MB"
      " (bound %g MB)" % (base[0] / 1024, warmup, max(base) / 1024, end_rss / 1024, grew, growth))
bad = []
if lost or dup or extra:
    bad.append("lost or duplicated snapshots")
if nfailed:
    bad.append("%d failed captures" % nfailed)
if grew > growth:
    bad.append("RSS grew by %.1f MB" % grew)
if not lat:
    bad.append("no capture was stored")
if bad:
    print("load: %s" % ", ".join(bad))
    sys.exit(1 if check else 0)
print("load: ok")
PY
