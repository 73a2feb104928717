#!/usr/bin/env python3
"""multi_test.py - several collectors on one PostgreSQL catalog and one
shared store folder (label e2e), run by tests/collector/with_pg.sh, which
starts the server and gives its URL as the last argument:

    with_pg.sh python3 multi_test.py several BIN_DIR WORK_DIR

Three gcsnapd (--catalog, --identity c1..c3, one --store), a fourth with a
running one's identity refused, gcsnap keys on the catalog, and 210 agents,
each given the three collectors in a different order: 200 scheduled
devices, 6 captured on demand only, 3 spooling a snapshot of their own
every second and one large heap. Captures asked through each collector of
devices the others hold are stored by the holder, and every collector
tells their state (GET /api/captures/ID). A schedule runs every 3 s on all
three; c1 is killed with SIGKILL in the middle of a forwarded capture of
the large heap: its devices move to c2 and c3 and their schedules go on
there, the cut snapshot is failed with a reason and its file is gone,
nothing stays "receiving". Then: every period of every scheduled device
was asked once (each request names its run) (none twice; only the periods of c1's devices around the
kill may be missing), every capture asked was stored once (only c1's last
ones may be cut), every spooled snapshot is stored once or still waiting
in its spool, and the catalog's complete rows and the shared folder's
files are the same set.
"""
import datetime
import glob
import json
import os
import re
import resource
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L  # noqa: E402

AGENTS = 200          # dev-000 ... dev-199, captured by the schedule
ON_DEMAND = 6         # od-0 ... od-5, captured on demand only
SPOOLERS = 3
EVERY_MS = 3000
NAMES = ("c1", "c2", "c3")
SPOOLED = re.compile(r"agent: spooled snapshot (\d+) ")
# The spool's bound (--spool-max) drops the oldest, logged; on a slow
# machine (sanitizers) the agents capture faster than three collectors take.
DROPPED = re.compile(r"dropped the oldest, snapshot (\d+) ")
SPOOL_NAME = re.compile(r"^(\d{20})\.gcspool$")
REQUESTED = re.compile(r"^(\S+)Z info  schedule (\d+): capture of (\S+) requested"
                       r" \(request (\d+), the run due at (\S+)Z\)", re.M)
PG_URL = sys.argv.pop() if sys.argv[-1].startswith("postgresql://") else None


def psql(sql):
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/psql"))
    out = subprocess.run([found[-1] if found else "psql", "-XAtq", "-d", PG_URL, "-c", sql],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    if out.returncode != 0:
        raise L.Failure("psql: %s" % out.stderr)
    return [line.split("|") for line in out.stdout.splitlines()]


def now_ms():
    return int(time.time() * 1000)


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


def start_agents(env, cols):
    """The agents, each given the collectors in turn first; the spoolers'
    processes and the count of devices."""
    order = [cols[n] for n in NAMES]

    def addrs(i):
        return ",".join(col.agent_addr for col in order[i % 3:] + order[:i % 3])
    for i in range(AGENTS):
        env.procs.start([env.agent, "--source", "mock:objects=200,seed=%d" % i, "--connect",
                         addrs(i), "--device-id", "dev-%03d" % i, "--retry-max", "0.5"],
                        log=env.path("agent-dev-%03d.log" % i))
    for i in range(ON_DEMAND):
        env.procs.start([env.agent, "--source", "mock:objects=2000,seed=%d" % i, "--connect",
                         addrs(i), "--device-id", "od-%d" % i, "--retry-max", "0.5"],
                        log=env.path("agent-od-%d.log" % i))
    # A large heap on c1, to be cut by its death.
    env.procs.start([env.agent, "--source", "mock:objects=4000000,seed=7", "--connect",
                     addrs(0), "--device-id", "big", "--retry-max", "0.5"],
                    log=env.path("agent-big.log"))
    # Agents capturing on their own every second into a spool, on c1 first.
    spoolers = [env.procs.start(
        [env.agent, "--source", "mock:objects=20000,seed=%d" % (90 + i), "--connect", addrs(0),
         "--device-id", "sp-%d" % i, "--retry-max", "0.5", "--every", "1s", "--spool",
         env.path("spool-%d" % i)], log=env.path("agent-sp-%d.log" % i)) for i in range(SPOOLERS)]
    return spoolers, AGENTS + ON_DEMAND + 1 + SPOOLERS


def complete_files(store):
    """{snapshot ID} of the snapshot files in the shared folder, and the
    files that are not one (temporary, or ranges without their snapshot)."""
    ids, other = set(), []
    for p in glob.glob(os.path.join(store, "snapshots", "*", "*")):
        name = os.path.basename(p)
        m = re.match(r"^(\d+)\.gclog\.zst$", name)
        if m:
            ids.add(int(m.group(1)))
        elif not re.match(r"^\d+\.gclog\.zst\.gens\.json$", name) or \
                not os.path.exists(p[:-len(".gens.json")]):
            other.append(name)
    return ids, other


def check_store(env, store, what, dead=None):
    """The catalog and the shared folder agree; with dead, about the rows of
    that stopped collector only (the others may be writing files now), else
    exactly: the complete rows are the files."""
    c = env.c
    mine = " AND collector = '%s'" % dead if dead else ""
    c.equal(psql("SELECT count(*) FROM snapshots WHERE status = 'receiving'" + mine), [["0"]],
            what + "no row is left receiving")
    rows = {int(r[0]) for r in psql("SELECT id FROM snapshots WHERE status = 'complete'")}
    files, other = complete_files(store)
    c.equal(sorted(rows - files), [], what + "every complete row's file is in the shared folder")
    if dead:
        ids = {r[0] for r in psql("SELECT id FROM snapshots WHERE true" + mine)}
        other = [n for n in other if n.split(".")[0] in ids]
    else:
        c.equal(sorted(files - rows), [], what + "every file in the shared folder has a complete row")
    c.equal(other, [], what + "no temporary or stray file is left")


def fnv1a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def utc_ms(stamp):
    when = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc)
    return round(when.timestamp() * 1000)


def schedule_requests(env, sid):
    """[(ms, device, request ID, collector, the run's due ms)] of the
    captures schedule sid asked for, from the three collectors' logs."""
    out = []
    for name in NAMES:
        with open(env.path(name + ".log"), errors="replace") as f:
            for stamp, schedule, dev, rid, due in REQUESTED.findall(f.read()):
                if int(schedule) == sid:
                    out.append((utc_ms(stamp), dev, int(rid), name, utc_ms(due)))
    return out


def check_periods(env, requests, sched, moved, t_kill, t_back, t_rm):
    """Every period of every scheduled device was asked once, from the
    first after the collectors read the schedule (they read it again every
    2 s) to the last that ended before it was removed, across the kill.
    Periods are the schedule's grid (gsd_schedule.c: created_ms +
    fnv1a(device) % every, no jitter); each request names the run it is
    for. Only the periods of the moved devices (c1's at the kill) between
    the kill and their return may be missing: c1 may have claimed one and
    died before asking."""
    c = env.c
    _, created, every = sched
    asked, off_grid = {}, []
    for ms, dev, rid, name, due in requests:
        k, rest = divmod(due - created - fnv1a(dev) % every, every)
        if rest:
            off_grid.append((dev, rid, due))
        asked.setdefault((dev, k), []).append((rid, name))
    c.equal(off_grid, [], "every request is for a run on the schedule's grid")
    twice = {"%s#%d" % key: v for key, v in asked.items() if len(v) > 1}
    missing, excused, periods = [], 0, 0
    for i in range(AGENTS):
        dev = "dev-%03d" % i
        grid = created + fnv1a(dev) % every
        k = 1
        while grid + (k + 1) * every <= t_rm:
            periods += 1
            start = grid + k * every
            if (dev, k) in asked:
                pass
            elif dev in moved and t_kill - every <= start <= t_back + 1000:
                excused += 1
            else:
                missing.append("%s#%d" % (dev, k))
            k += 1
    c.equal(twice, {}, "no period of a device was asked twice, across the kill")
    c.equal(missing, [], "every period of every device was asked (%d periods, %d of the moved "
            "devices around the kill missing)" % (periods, excused))
    after = {dev for ms, dev, rid, name, due in requests if ms > t_back and name != "c1"}
    c.equal(sorted(set(moved) - after), [], "c1's devices are captured by the schedule on c2 or c3")
    L.log("schedule: %d requests, %d periods checked, %d excused around the kill" %
          (len(requests), periods, excused))


def check_requests(env, requests, t_kill):
    """Every capture the schedule asked for is stored once, by the
    collector that asked, except c1's last ones: cut by its death, failed
    with a reason, or never begun."""
    c = env.c
    rows = {}
    for rid, status, col, reason in psql("SELECT request_id, status, collector, coalesce(reason, '')"
                                         " FROM snapshots WHERE request_id > 0"):
        rows.setdefault(int(rid), []).append((status, col, reason))
    lost, cut = [], 0
    for ms, dev, rid, name, due in requests:
        got = rows.get(rid, [])
        if [r[:2] for r in got] == [("complete", name)]:
            continue
        if name == "c1" and ms >= t_kill - 3000 and all(
                r[0] == "failed" and "stopped" in r[2] for r in got):
            cut += 1
            continue
        lost.append((dev, rid, name, got))
    c.equal(lost, [], "every scheduled capture was stored once by the collector that asked (%d cut "
            "by the kill)" % cut)
    c.equal(psql("SELECT request_id FROM snapshots WHERE status = 'complete' AND request_id > 0"
                 " GROUP BY request_id HAVING count(*) > 1"), [], "no capture is stored twice")
    c.equal(psql("SELECT device_id, agent_snapshot_id FROM snapshots WHERE status = 'complete'"
                 " GROUP BY 1, 2 HAVING count(*) > 1"), [], "no agent snapshot is stored twice")


def check_capture(env, cols, rid, state, snapshot_id=None, reason=None):
    """Every collector in cols tells capture rid's state alike."""
    for name, col in cols.items():
        status, body = col.api("/api/captures/%d" % rid)
        got = (status, (body or {}).get("state"), (body or {}).get("snapshot_id"))
        env.c.equal(got, (200, state, snapshot_id), "capture %d's state through %s" % (rid, name))
        if reason:
            env.c.ok(reason in ((body or {}).get("reason") or ""), "and its reason", body)


def ended_state(cols, rid):
    status, body = cols["c3"].api("/api/captures/%d" % rid)
    return status == 200 and body["state"] in ("stored", "failed") and body


def keys_and_identity(env, store):
    c = env.c
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


def own_captures(env, cols, held):
    """A capture through each collector of a device it holds, listed and
    fetched through another; a file uploaded through one."""
    c = env.c
    for name, col in cols.items():
        d = sorted(k for k, v in held.items() if v == name and k.startswith("dev-"))[0]
        r = L.run([env.gcsnap, "capture", d, "--wait", "--json", "--collector", col.url], timeout=60)
        c.equal(r.returncode, 0, "capture of %s through %s" % (d, name))
        other = cols["c2" if name != "c2" else "c3"]
        snaps = other.snapshots("?device=" + d)
        c.ok(len(snaps) == 1 and snaps[0]["status"] == "complete",
             "%s's snapshot is listed by another collector" % d, snaps)
        if snaps:
            out = env.path("fetched-%s.gclog" % d)
            f = L.run([env.gcsnap, "fetch", str(snaps[0]["id"]), "-o", out, "--collector", other.url])
            c.ok(f.returncode == 0 and os.path.getsize(out) > 0, "and fetched through it", f.stderr)
    fixture = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                           "canonical", "generated.gclog")
    r = L.run([env.gcsnap, "upload", fixture, "--device", "uploaded", "--note", "by hand",
               "--json", "--collector", cols["c3"].url], timeout=60)
    c.equal(r.returncode, 0, "gcsnap upload through c3: " + r.stderr)
    c.equal(psql("SELECT status, source_format, note FROM snapshots WHERE device_id = 'uploaded'"),
            [["complete", "gclog", "by hand"]], "the upload is in the catalog with its format and note")


def cross_captures(env, cols, held):
    """A capture through each collector of a device each other one holds
    reaches the holder; the answer comes back to the asker, and every
    collector tells the capture's state."""
    c = env.c
    for asker in NAMES:
        for holder in NAMES:
            if asker == holder:
                continue
            d = sorted(k for k, v in held.items() if v == holder and k.startswith("dev-"))[
                -1 - NAMES.index(asker)]
            r = L.run([env.gcsnap, "capture", d, "--wait", "--json", "--collector",
                       cols[asker].url], timeout=60)
            c.equal(r.returncode, 0, "capture of %s (on %s) through %s: %s" %
                    (d, holder, asker, r.stderr))
            answer = json.loads(r.stdout) if r.returncode == 0 else {}
            sid = answer.get("snapshot_id")
            c.equal(psql("SELECT collector, status FROM snapshots WHERE id = %d" % (sid or 0)),
                    [[holder, "complete"]], "stored by %s, the snapshot the answer names" % holder)
            if sid:
                check_capture(env, cols, answer["request_id"], "stored", sid)


def on_demand(env, cols, held, what):
    """A capture of each od- device asked through a collector that does not
    hold it, not waited for: every collector tells when it is stored."""
    asked = []
    for i in range(ON_DEMAND):
        d = "od-%d" % i
        asker = [n for n in cols if n != held[d]][i % (len(cols) - 1)]
        status, body = cols[asker].api("/api/devices/%s/capture" % d, method="POST")
        env.c.equal(status, 202, "%s: a capture of %s (on %s) through %s is accepted" %
                    (what, d, held[d], asker))
        if status == 202:
            asked.append((d, body["request_id"]))
    for d, rid in asked:
        body = L.wait_until("capture %d of %s" % (rid, d), lambda: ended_state(cols, rid), timeout=30)
        row = psql("SELECT collector, status FROM snapshots WHERE id = %d" % (body["snapshot_id"] or 0))
        env.c.equal(row, [[held[d], "complete"]], "%s: %s stored by its collector" % (what, d))
        check_capture(env, cols, rid, "stored", body["snapshot_id"])


def kill_in_forwarded_capture(env, cols):
    """c1 dies in the middle of big's snapshot, asked through c2; returns
    the time of the kill."""
    c = env.c
    status, body = cols["c2"].api("/api/devices/big/capture", method="POST")
    c.equal(status, 202, "a capture of the large heap on c1 is accepted by c2")
    rid = (body or {}).get("request_id", 0)
    L.wait_until("big's snapshot to start", lambda: psql(
        "SELECT 1 FROM snapshots WHERE device_id = 'big' AND status = 'receiving'"), timeout=20)
    check_capture(env, cols, rid, "requested")
    time.sleep(0.3)
    env.procs.stop(cols.pop("c1").proc, sig=signal.SIGKILL)
    t_kill = now_ms()
    body = L.wait_until("big's capture to end", lambda: ended_state(cols, rid), timeout=30)
    c.ok(body["state"] == "failed" and "stopped" in body["reason"],
         "the capture asked through c2 fails: its holder stopped", body)
    check_capture(env, cols, rid, "failed", None, "stopped")
    return t_kill


def check_spoolers(env, spoolers):
    """Every snapshot an agent spooled is stored once, or still spooled."""
    c = env.c
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


def suite_several(env):
    c = env.c
    env.need_gcsnapd()
    if not PG_URL:
        raise L.Skip("no PostgreSQL URL (run through tests/collector/with_pg.sh)")
    # Each collector holds up to every agent's connection, the test a log each.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < 4096:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(4096, hard), hard))
    store = env.path("shared-store")
    cols = {n: start_collector(env, store, n) for n in NAMES}
    keys_and_identity(env, store)

    t0 = time.monotonic()
    spoolers, total = start_agents(env, cols)
    held = L.wait_until("every agent connected", lambda: (lambda h: len(h) == total and h)(
        connected(cols)), timeout=60, step=0.5)
    L.log("%d agents connected in %.1f s" % (total, time.monotonic() - t0))
    c.equal(sorted(set(held.values())), list(NAMES), "the agents are spread over the three")
    c.equal(dict(psql("SELECT device_id, collector FROM devices WHERE collector IS NOT NULL")), held,
            "the catalog records which collector holds each device")
    own_captures(env, cols, held)
    cross_captures(env, cols, held)

    # A schedule added through c2 runs on every collector.
    r = L.run([env.gcsnap, "schedule", "add", "dev-*", "--every", "%dms" % EVERY_MS, "--json",
               "--collector", cols["c2"].url])
    c.equal(r.returncode, 0, "a schedule added through c2: " + r.stderr)
    sched = json.loads(r.stdout)
    sched = (sched["id"], sched["created_ms"], sched["every_ms"])
    time.sleep(2 * EVERY_MS / 1000)
    c.equal(sorted(r[0] for r in psql("SELECT DISTINCT collector FROM snapshots WHERE"
                                      " schedule_id IS NOT NULL")), list(NAMES),
            "the schedule's captures are stored through all three")
    on_demand(env, cols, held, "during the schedule")

    moved = [d for d, n in connected(cols).items() if n == "c1" and d.startswith("dev-")]
    t_kill = kill_in_forwarded_capture(env, cols)
    L.wait_until("c1's devices on c2 and c3", lambda: len(connected(cols)) == total, timeout=30)
    t_back = now_ms()
    L.log("every device reconnected to c2 or c3 in %.1f s" % ((t_back - t_kill) / 1000))
    rows = psql("SELECT id, reason FROM snapshots WHERE device_id = 'big'")
    c.ok(len(rows) == 1 and "stopped while receiving" in rows[0][1],
         "the cut snapshot is failed with a reason", rows)
    c.equal(glob.glob(os.path.join(store, "snapshots", "big", "*")), [], "and its file is gone")
    c.equal(psql("SELECT count(*) FROM sessions WHERE collector = 'c1' AND ended IS NULL"), [["0"]],
            "c1's sessions are ended")
    check_store(env, store, "after the kill: ", dead="c1")
    held = connected(cols)
    on_demand(env, cols, held, "after the kill")

    # Three more periods on the survivors, then the schedule goes.
    time.sleep(max(0, t_back + 3 * EVERY_MS - now_ms()) / 1000)
    r = L.run([env.gcsnap, "schedule", "rm", str(sched[0]), "--collector", cols["c3"].url])
    c.equal(r.returncode, 0, "the schedule removed through c3: " + r.stderr)
    t_rm = now_ms()
    time.sleep(2.5)            # the others read the schedules again every 2 s
    requests = schedule_requests(env, sched[0])
    check_periods(env, requests, sched, moved, t_kill, t_back, t_rm)
    check_requests(env, requests, t_kill)
    check_spoolers(env, spoolers)

    cols["c1"] = start_collector(env, store, "c1")
    c.equal(cols["c1"].api("/api/health")[0], 200, "c1 starts again with its identity once it is gone")
    for col in cols.values():
        col.stop()
    check_store(env, store, "after the stop: ")


if __name__ == "__main__":
    sys.exit(L.main("multi_test.py", {"several": suite_several}, L.Env))
