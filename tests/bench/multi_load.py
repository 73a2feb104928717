#!/usr/bin/env python3
"""multi_load.py - the load of tests/bench/load.sh on three collectors that
share a PostgreSQL catalog and one store folder, beside the same load on one
collector with its SQLite catalog, in one run (not part of ctest):

    tests/collector/with_pg.sh python3 tests/bench/multi_load.py [BUILD_DIR]

Agents on small mock heaps (each given the three collectors in a different
order) are captured by one schedule. For each run it prints the captures
asked, stored and lost (asked, never stored), the periods captured twice,
the throughput of stored snapshots, the latency from a schedule's request
to the snapshot stored (p50, p90, p99, max, from the collectors' logs) and
the ratios of the three-collector run to the single one.
Environment: GS_LOAD_AGENTS (default 1000), GS_LOAD_SECONDS (how long the
schedule runs, default 60), GS_LOAD_EVERY (default 5s), GS_LOAD_OBJECTS
(objects per mock heap, default 200).
"""
import datetime
import json
import os
import re
import resource
import shutil
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
LINE = re.compile(r"^(\S+)Z info  (?:schedule \d+: capture of (\S+) requested"
                  r"|device (\S+): stored snapshot (\d+))", re.M)


def stamp_ms(text):
    t = datetime.datetime.fromisoformat(text).replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() * 1000


def fnv1a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def figures(logs, created_ms, every_ms):
    """Asked, stored, lost, twice (periods of the schedule's grid, as in
    gsd_schedule.c, asked more than once) and latencies (ms) from the
    collectors' logs."""
    events = []
    for log in logs:
        with open(log, errors="replace") as f:
            for m in LINE.finditer(f.read()):
                events.append((stamp_ms(m.group(1)), m.group(2), m.group(3)))
    events.sort(key=lambda e: e[0])
    waiting, lat, asked, stored, periods = {}, [], 0, 0, set()
    twice = 0
    for t, req_dev, stored_dev in events:
        if req_dev:
            asked += 1
            k = (int(t) - created_ms - fnv1a(req_dev) % every_ms) // every_ms
            twice += (req_dev, k) in periods
            periods.add((req_dev, k))
            waiting[req_dev] = t
        elif stored_dev in waiting:
            stored += 1
            lat.append(t - waiting.pop(stored_dev))
    lat.sort()
    return asked, stored, len(waiting), twice, lat


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
        sid, created_ms, every_ms = str(sched["id"]), sched["created_ms"], sched["every_ms"]
        time.sleep(SECONDS)
        L.run([os.path.join(bin_dir, "gcsnap"), "schedule", "rm", sid, "--collector", cols[0].url])
        time.sleep(5)
        asked, stored, lost, twice, lat = figures([c.log for c in cols], created_ms, every_ms)
        print("%-22s agents %d, asked %d, stored %d, lost %d, twice %d, %.1f snapshots/s,"
              " latency ms p50 %.0f p90 %.0f p99 %.0f max %.0f" %
              (name, AGENTS, asked, stored, lost, twice, stored / SECONDS, pct(lat, 0.5),
               pct(lat, 0.9), pct(lat, 0.99), lat[-1] if lat else float("nan")), flush=True)
        return stored / SECONDS, pct(lat, 0.99)
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
        print("ratio (3 on PostgreSQL / 1 on SQLite): throughput %.2f, p99 latency %.2f" %
              (three[0] / base[0] if base[0] else float("nan"),
               three[1] / base[1] if base[1] else float("nan")))
        return 0
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
