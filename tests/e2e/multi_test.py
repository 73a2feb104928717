#!/usr/bin/env python3
"""multi_test.py - several collectors on one PostgreSQL catalog and one
shared store folder (label e2e), run by tests/collector/with_pg.sh, which
starts the server and gives its URL as the last argument:

    with_pg.sh python3 multi_test.py several BIN_DIR WORK_DIR

Three gcsnapd (--catalog, --identity c1..c3, one --store), a fourth with a
running one's identity refused, gcsnap keys on the catalog, 30 agents each
given the three collectors in a different order, captures through each
collector listed and fetched through the others, captures asked through a
collector that does not hold the device answered by the one that does, a
schedule run once per period, three agents spooling a snapshot every
second, then c1 killed with
SIGKILL in the middle of a snapshot: its devices move to c2 and c3, the
snapshot it was receiving is failed with a reason by a surviving
collector, its file is gone, nothing stays "receiving", and every complete
row's file is there, and every spooled snapshot is stored once or still
waiting in its spool.
"""
import datetime
import glob
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L  # noqa: E402

AGENTS = 30
SPOOLERS = 3
SPOOLED = re.compile(r"agent: spooled snapshot (\d+) ")
# The spool's bound (--spool-max) drops the oldest, logged; on a slow
# machine (sanitizers) the agents capture faster than three collectors take.
DROPPED = re.compile(r"dropped the oldest, snapshot (\d+) ")
SPOOL_NAME = re.compile(r"^(\d{20})\.gcspool$")
PG_URL = sys.argv.pop() if sys.argv[-1].startswith("postgresql://") else None


def psql(sql):
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    out = subprocess.run([found[-1] if found else "psql", "-XAtq", "-d", PG_URL, "-c", sql],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if out.returncode != 0:
        raise L.Failure("psql: %s" % out.stderr)
    return [line.split("|") for line in out.stdout.splitlines()]


def connected(cols):
    """{device: collector name} of the devices connected to cols."""
    held = {}
    for name, col in cols.items():
        status, body = col.api("/api/devices")
        for d in (body or {}).get("devices", []) if status == 200 else []:
            if d.get("connected"):
                held[d["device_id"]] = name
    return held


def start_collector(env, store, name):
    return L.Collector(env.procs, env.gcsnapd, env.work, name=name,
                       extra=["--store", store, "--catalog", PG_URL, "--identity", name])


def check_store(env, store, what, dead=None):
    """The catalog and the shared folder agree; with dead, about the rows of
    that stopped collector only (the others may be writing files now)."""
    c = env.c
    mine = " AND collector = '%s'" % dead if dead else ""
    c.equal(psql("SELECT count(*) FROM snapshots WHERE status = 'receiving'" + mine), [["0"]],
            what + "no row is left receiving")
    missing = [r for r in psql("SELECT id, device_id FROM snapshots WHERE status = 'complete'")
               if not glob.glob(os.path.join(store, "snapshots", "*", r[0] + ".gclog.zst"))]
    c.equal(missing, [], what + "every complete row's file is in the shared folder")
    ids = {r[0] for r in psql("SELECT id FROM snapshots WHERE true" + mine)}
    tmp = [p for p in glob.glob(os.path.join(store, "snapshots", "*", "*.tmp"))
           if not dead or os.path.basename(p).split(".")[0] in ids]
    c.equal(tmp, [], what + "no temporary file is left")


def fnv1a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


REQUESTED = re.compile(r"^(\S+)Z info  schedule (\d+): capture of (\S+) requested", re.M)


def periods_run_twice(env):
    """{device: [period, ...]} of the schedule's periods in which a device was
    asked for a capture more than once, by any collector (their logs), and
    the count of runs and of devices. Periods are the schedule's grid
    (gsd_schedule.c: created_ms + fnv1a(device) % every, no jitter)."""
    (sid, created, every), = [tuple(map(int, r)) for r in
                              psql("SELECT id, created_ms, every_ms FROM schedules")]
    seen, twice = set(), {}
    for name in ("c1", "c2", "c3"):
        with open(env.path(name + ".log"), errors="replace") as f:
            text = f.read()
        for stamp, schedule, dev in REQUESTED.findall(text):
            when = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc)
            ms = int(when.timestamp() * 1000)
            k = (ms - created - fnv1a(dev) % every) // every
            if int(schedule) != sid:
                continue
            if (dev, k) in seen:
                twice.setdefault(dev, []).append(k)
            seen.add((dev, k))
    return twice, len(seen), len({d for d, _ in seen})


def suite_several(env):
    c = env.c
    env.need_gcsnapd()
    if not PG_URL:
        raise L.Skip("no PostgreSQL URL (run through tests/collector/with_pg.sh)")
    store = env.path("shared-store")
    cols = {n: start_collector(env, store, n) for n in ("c1", "c2", "c3")}

    dup = L.run([env.gcsnapd, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--store", store,
                 "--catalog", PG_URL, "--identity", "c2"], timeout=20)
    c.equal(dup.returncode, 2, "a second collector with a running one's identity exits 2")
    c.ok("already running" in dup.stderr, "and says why", dup.stderr[-300:])

    key_file = env.path("k1.key")
    add = L.run([env.gcsnap, "keys", "add", "k1", "--catalog", PG_URL, "--key-file", key_file])
    lst = L.run([env.gcsnap, "keys", "list", "--catalog", PG_URL, "--json"])
    rm = L.run([env.gcsnap, "keys", "rm", "k1", "--catalog", PG_URL])
    c.ok(add.returncode == 0 and os.path.getsize(key_file) == 65, "gcsnap keys add on the catalog",
         add.stderr)
    c.ok(lst.returncode == 0 and '"k1"' in lst.stdout, "gcsnap keys list on the catalog", lst.stdout)
    c.ok(rm.returncode == 0 and psql("SELECT count(*) FROM device_keys") == [["0"]],
         "gcsnap keys rm on the catalog", rm.stderr)

    order = [cols["c1"], cols["c2"], cols["c3"]]
    devices = ["dev-%02d" % i for i in range(AGENTS)]
    for i, d in enumerate(devices):
        addrs = ",".join(col.agent_addr for col in order[i % 3:] + order[:i % 3])
        env.procs.start([env.agent, "--source", "mock:objects=2000,seed=%d" % i, "--connect", addrs,
                         "--device-id", d, "--retry-max", "0.5"], log=env.path("agent-%s.log" % d))
    # A large heap on c1, to be cut by its death.
    env.procs.start([env.agent, "--source", "mock:objects=4000000,seed=7", "--connect",
                     cols["c1"].agent_addr + "," + cols["c2"].agent_addr, "--device-id", "big",
                     "--retry-max", "0.5"], log=env.path("agent-big.log"))
    # Agents capturing on their own every second into a spool, on c1 first.
    spoolers = []
    for i in range(SPOOLERS):
        spoolers.append(env.procs.start(
            [env.agent, "--source", "mock:objects=100000,seed=%d" % (90 + i), "--connect",
             ",".join(col.agent_addr for col in order), "--device-id", "sp-%d" % i, "--retry-max",
             "0.5", "--every", "1s", "--spool", env.path("spool-%d" % i)],
            log=env.path("agent-sp-%d.log" % i)))
    total = AGENTS + 1 + SPOOLERS
    held = L.wait_until("every agent connected", lambda: (lambda h: len(h) == total and h)(
        connected(cols)), timeout=30)
    c.equal(sorted(set(held.values())), ["c1", "c2", "c3"], "the agents are spread over the three")
    c.equal(dict(psql("SELECT device_id, collector FROM devices")), held,
            "the catalog records which collector holds each device")

    # A capture through each collector of a device it holds; each listed and
    # fetched through another collector.
    stored = {}
    for name, col in cols.items():
        d = sorted(k for k, v in held.items() if v == name and k.startswith("dev-"))[0]
        r = L.run([env.gcsnap, "capture", d, "--wait", "--json", "--collector", col.url], timeout=60)
        c.equal(r.returncode, 0, "capture of %s through %s" % (d, name))
        stored[name] = d
    for name, d in stored.items():
        other = cols["c2" if name != "c2" else "c3"]
        snaps = other.snapshots("?device=" + d)
        c.ok(len(snaps) == 1 and snaps[0]["status"] == "complete",
             "%s's snapshot is listed by another collector" % d, snaps)
        if snaps:
            out = env.path("fetched-%s.gclog" % d)
            f = L.run([env.gcsnap, "fetch", str(snaps[0]["id"]), "-o", out, "--collector", other.url])
            c.ok(f.returncode == 0 and os.path.getsize(out) > 0, "and fetched through it", f.stderr)

    # A file uploaded through a collector, for a device none holds.
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                           "canonical", "generated.gclog")
    r = L.run([env.gcsnap, "upload", fixture, "--device", "uploaded", "--note", "by hand",
               "--json", "--collector", cols["c3"].url], timeout=60)
    c.equal(r.returncode, 0, "gcsnap upload through c3: " + r.stderr)
    c.equal(psql("SELECT status, source_format, note FROM snapshots WHERE device_id = 'uploaded'"),
            [["complete", "gclog", "by hand"]], "the upload is in the catalog with its format and note")

    # A capture asked through a collector that does not hold the device
    # reaches the one that does, and the answer comes back to the asker.
    for asker, holder in (("c3", "c1"), ("c1", "c2"), ("c2", "c3")):
        d = sorted(k for k, v in held.items() if v == holder and k.startswith("dev-"))[-1]
        r = L.run([env.gcsnap, "capture", d, "--wait", "--json", "--collector", cols[asker].url],
                  timeout=60)
        c.equal(r.returncode, 0, "capture of %s (on %s) through %s: %s" % (d, holder, asker, r.stderr))
        sid = json.loads(r.stdout).get("snapshot_id") if r.returncode == 0 else None
        c.equal(psql("SELECT collector, status FROM snapshots WHERE id = %d" % (sid or 0)),
                [[holder, "complete"]], "stored by %s, the snapshot the answer names" % holder)

    # A schedule added through c2 runs on every collector, each device's
    # period once.
    r = L.run([env.gcsnap, "schedule", "add", "dev-*", "--every", "2s", "--collector",
               cols["c2"].url])
    c.equal(r.returncode, 0, "a schedule added through c2: " + r.stderr)
    L.wait_until("scheduled captures through all three", lambda: len(psql(
        "SELECT DISTINCT collector FROM snapshots WHERE schedule_id IS NOT NULL")) == 3,
        timeout=20)

    # c1 dies in the middle of big's snapshot.
    status, body = cols["c1"].api("/api/devices/big/capture", method="POST")
    c.equal(status, 202, "a capture of the large heap is accepted by c1")
    L.wait_until("big's snapshot to start", lambda: psql(
        "SELECT 1 FROM snapshots WHERE device_id = 'big' AND status = 'receiving'"), timeout=20)
    time.sleep(0.3)
    env.procs.stop(cols.pop("c1").proc, sig=signal.SIGKILL)
    t0 = time.monotonic()
    L.wait_until("c1's devices on c2 and c3", lambda: len(connected(cols)) == total, timeout=30)
    L.log("every device reconnected to c2 or c3 in %.1f s" % (time.monotonic() - t0))
    L.wait_until("big's snapshot failed by a survivor", lambda: psql(
        "SELECT 1 FROM snapshots WHERE device_id = 'big' AND status = 'failed'"), timeout=20)
    rows = psql("SELECT id, reason FROM snapshots WHERE device_id = 'big'")
    c.ok(len(rows) == 1 and "stopped while receiving" in rows[0][1],
         "the cut snapshot is failed with a reason", rows)
    c.equal(glob.glob(os.path.join(store, "snapshots", "big", "*")), [],
            "and its file is gone")
    c.equal(psql("SELECT count(*) FROM sessions WHERE collector = 'c1' AND ended IS NULL"), [["0"]],
            "c1's sessions are ended")
    check_store(env, store, "after the kill: ", dead="c1")
    time.sleep(4)
    twice, runs, devs = periods_run_twice(env)
    c.equal(devs, AGENTS, "every device was captured by the schedule")
    c.equal(twice, {}, "no device was captured twice in a period, across the kill")
    L.log("scheduled snapshots: %d over %d devices" % (runs, devs))

    # Every snapshot an agent spooled is stored once, or still spooled.
    for i, p in enumerate(spoolers):
        env.procs.stop(p)
        with open(env.path("agent-sp-%d.log" % i), errors="replace") as f:
            text = f.read()
        logged = {int(m.group(1)) for m in SPOOLED.finditer(text)}
        dropped = {int(m.group(1)) for m in DROPPED.finditer(text)}
        folder = env.path("spool-%d" % i)
        left = {int(m.group(1)) for m in map(SPOOL_NAME.match, os.listdir(folder)) if m}
        got = [int(r[0]) for r in psql("SELECT agent_snapshot_id FROM snapshots WHERE device_id ="
                                       " 'sp-%d' AND status = 'complete' AND trigger = 'every'" % i)]
        c.equal(len(got), len(set(got)), "sp-%d: no spooled snapshot is stored twice" % i)
        c.equal(sorted(logged - dropped - set(got) - left), [],
                "sp-%d: every snapshot spooled (and not dropped by the spool's bound) is stored"
                " or still spooled (%d stored)" % (i, len(got)))
        c.equal(sorted(set(got) - logged), [], "sp-%d: only snapshots it spooled are stored" % i)

    cols["c1"] = start_collector(env, store, "c1")
    c.ok(True, "c1 starts again with its identity once it is gone")
    for name, col in cols.items():
        col.stop()
    check_store(env, store, "after the stop: ")


if __name__ == "__main__":
    sys.exit(L.main("multi_test.py", {"several": suite_several}, L.Env))
