#!/usr/bin/env python3
"""multi_load.py - the load of tests/bench/load.sh on three collectors that
share a PostgreSQL catalog and one store folder, beside the same load on one
collector with its SQLite catalog, in one run (not part of ctest):

    tests/collector/with_pg.sh python3 tests/bench/multi_load.py [BUILD_DIR]

Agents on small mock heaps (each given the three collectors in a different
order) are captured by one schedule. For each run it prints the captures
asked, stored, lost (asked, never stored) and duplicated (stored with no
capture waiting for it: the agents send nothing unasked), the runs of the
schedule asked twice (each request names its run), the captures failed and
why, the throughput of stored snapshots, the latency from a schedule's request
to the snapshot stored (p50, p90, p99, max, from the collectors' logs), the
processor time the collectors and the catalog's server processes spent
while the schedule ran (per snapshot stored), the machine's load average,
and the ratios of the three-collector run to the single one.
Environment: GS_LOAD_AGENTS (default 1000), GS_LOAD_SECONDS (how long the
schedule runs, default 60), GS_LOAD_EVERY (default 5s), GS_LOAD_OBJECTS
(objects per mock heap, default 200).
"""
import datetime
import glob
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
PG_URL = sys.argv.pop() if sys.argv[-1].startswith("postgresql://") else None
import e2e_lib as L  # noqa: E402

AGENTS = int(os.environ.get("GS_LOAD_AGENTS", "1000"))
SECONDS = int(os.environ.get("GS_LOAD_SECONDS", "60"))
EVERY = os.environ.get("GS_LOAD_EVERY", "5s")
OBJECTS = int(os.environ.get("GS_LOAD_OBJECTS", "200"))
LINE = re.compile(r"^(\S+)Z info  (?:schedule \d+: capture of (\S+) requested \(request \d+,"
                  r" the run due at (\S+)Z\)|device (\S+): stored snapshot \d+ .*"
                  r"|capture request \d+ for \S+ failed: (.*))$", re.M)


def stamp_ms(text):
    t = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() * 1000


def figures(logs):
    """Asked, stored, lost, duplicated, twice (runs of the schedule asked
    more than once: each request names its run), latencies (ms) and the
    reasons of the captures that failed {reason: count}, from the
    collectors' logs."""
    events = []
    for log in logs:
        with open(log, errors="replace") as f:
            for m in LINE.finditer(f.read()):
                events.append((stamp_ms(m.group(1)),) + m.group(2, 3, 4, 5))
    events.sort(key=lambda e: e[0])
    waiting, lat, asked, stored, runs, failed = {}, [], 0, 0, set(), {}
    twice = duplicated = 0
    for t, req_dev, due, stored_dev, reason in events:
        if req_dev:
            asked += 1
            twice += (req_dev, due) in runs
            runs.add((req_dev, due))
            waiting[req_dev] = t
        elif reason is not None:
            failed[reason] = failed.get(reason, 0) + 1
        elif stored_dev in waiting:
            stored += 1
            lat.append(t - waiting.pop(stored_dev))
        else:
            duplicated += 1
    lat.sort()
    return asked, stored, asked - stored, duplicated, twice, lat, failed


def cpu_seconds(pids):
    """User and system time of the processes pids, in seconds (fields 14
    and 15 of /proc/PID/stat); a process gone counts 0."""
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def catalog_backends(catalog):
    """The PIDs of the catalog server's processes serving the collectors."""
    if not catalog:
        return []
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    out = subprocess.run([found[-1] if found else "psql", "-XAtq", "-d", catalog, "-c",
                          "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'"
                          " AND pid <> pg_backend_pid()"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    return [int(p) for p in out.stdout.split()]


def pct(v, p):
    return v[min(len(v) - 1, int(len(v) * p))] if v else float("nan")


def run(name, bin_dir, work, catalog):
    procs = L.Procs()
    store = os.path.join(work, "store")
    names = ["c1", "c2", "c3"] if catalog else ["c1"]
    try:
        extra = ["--max-sessions", str(AGENTS + 16), "--max-sessions-per-address", str(AGENTS + 16)]
        cols = []
        for n in names:
            more = ["--catalog", catalog, "--identity", n] if catalog else []
            cols.append(L.Collector(procs, os.path.join(bin_dir, "gcsnapd"), work, name=n,
                                    extra=["--store", store] + extra + more))
        for i in range(AGENTS):
            order = cols[i % len(cols):] + cols[:i % len(cols)]
            procs.start([os.path.join(bin_dir, "gcsnap-agent"), "--source",
                         "mock:objects=%d,seed=%d" % (OBJECTS, i), "--connect",
                         ",".join(c.agent_addr for c in order), "--device-id", "ld-%04d" % i,
                         "--retry-max", "2"])
        L.wait_until("%d agents connected" % AGENTS, lambda: sum(
            len([d for d in (c.api("/api/devices")[1] or {}).get("devices", []) if d.get("connected")])
            for c in cols) == AGENTS, timeout=120, step=0.5)
        r = L.run([os.path.join(bin_dir, "gcsnap"), "schedule", "add", "ld-*", "--every", EVERY,
                   "--json", "--collector", cols[0].url])
        if r.returncode != 0:
            raise L.Failure("schedule add: " + r.stderr)
        sched = json.loads(r.stdout)
        sid = str(sched["id"])
        pids, backends = [c.proc.pid for c in cols], catalog_backends(catalog)
        cpu0, db0, load0 = cpu_seconds(pids), cpu_seconds(backends), os.getloadavg()[0]
        time.sleep(SECONDS)
        L.run([os.path.join(bin_dir, "gcsnap"), "schedule", "rm", sid, "--collector", cols[0].url])
        time.sleep(5)
        cpu, db = cpu_seconds(pids) - cpu0, cpu_seconds(backends) - db0
        asked, stored, lost, dup, twice, lat, failed = figures([c.log for c in cols])
        print("%-22s agents %d, asked %d, stored %d, lost %d, duplicated %d, runs asked twice %d,"
              " %.1f snapshots/s, latency ms p50 %.0f p90 %.0f p99 %.0f max %.0f" %
              (name, AGENTS, asked, stored, lost, dup, twice, stored / SECONDS, pct(lat, 0.5),
               pct(lat, 0.9), pct(lat, 0.99), lat[-1] if lat else float("nan")), flush=True)
        per = 1000 / stored if stored else float("nan")
        print("%-22s processor: collectors %.1f s (%.2f ms a snapshot), catalog server %.1f s"
              " (%.2f ms a snapshot); load average %.1f at the start, %.1f at the end" %
              ("", cpu, cpu * per, db, db * per, load0, os.getloadavg()[0]), flush=True)
        for reason, n in sorted(failed.items(), key=lambda f: -f[1]):
            print("%-22s %d captures failed: %s" % ("", n, reason), flush=True)
        return stored / SECONDS, pct(lat, 0.99), (cpu + db) * per
    finally:
        procs.stop_all()


def main():
    if not PG_URL:
        print("multi_load: no PostgreSQL URL (run through tests/collector/with_pg.sh); skipped")
        return 77
    bin_dir = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "build", "bin")
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    root = tempfile.mkdtemp(prefix="gcsnap-multi-load.")
    try:
        os.makedirs(os.path.join(root, "one"))
        os.makedirs(os.path.join(root, "three"))
        base = run("1 collector, SQLite", bin_dir, os.path.join(root, "one"), None)
        three = run("3 collectors, PostgreSQL", bin_dir, os.path.join(root, "three"), PG_URL)
        print("ratio (3 on PostgreSQL / 1 on SQLite): throughput %.2f, p99 latency %.2f,"
              " processor time a snapshot %.2f" % tuple(
                  t / b if b else float("nan") for t, b in zip(three, base)))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
