#!/usr/bin/env python3
"""schedule_test.py - gcsnapd's schedules against real agents (the mock
source) on loopback:

  fleet      a schedule every 1 s for 3 devices stores, in 10 s, 10
             snapshots per device (within one); the devices' captures are
             spread over the second as their offsets say; the snapshots
             say trigger "schedule" and the schedule's ID
  late       a device that connects after missing two runs is captured
             once on connecting, not once per missed run
  restart    after the collector is restarted on the same store, the
             schedule goes on; gcsnap schedule rm stops it
  retention  keep 3, and at most the bytes of 2 files: exactly those stay,
             in the catalog and in the store folder

usage: schedule_test.py BIN_DIR WORK_DIR
Exit 0 when every check passed, 1 when one failed, 77 when gcsnapd or the
agent's --connect is missing.
"""
import json
import os
import re
import shutil
import sys
import time
import traceback
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402

SOURCE = "mock:objects=200,seed=3"


def fnv1a(s):
    h = 0xcbf29ce484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return h


def spread_ids(prefix, count, every_ms, gap_ms):
    """count device IDs whose offsets are at least gap_ms apart (circularly)."""
    chosen = []
    for i in range(1000):
        d = "%s%d" % (prefix, i)
        o = fnv1a(d) % every_ms
        if all(min(abs(o - p), every_ms - abs(o - p)) >= gap_ms for _, p in chosen):
            chosen.append((d, o))
        if len(chosen) == count:
            return chosen
    raise L.Failure("no spread device IDs")


class Test:
    def __init__(self, bin_dir, work):
        self.bin = bin_dir
        self.gcsnap = os.path.join(bin_dir, "gcsnap")
        self.gcsnapd = os.path.join(bin_dir, "gcsnapd")
        self.agent = os.path.join(bin_dir, "gcsnap-agent")
        self.work = work
        self.procs = L.Procs()
        self.c = L.Checks()

    def start_agent(self, col, device):
        return self.procs.start([self.agent, "--source", SOURCE, "--connect", col.agent_addr,
                                 "--device-id", device, "--clock", "0x2a5f00", "--retry-max", "1"],
                                log=os.path.join(self.work, "agent-%s.log" % device))

    def add(self, col, **fields):
        """POST /api/schedules with a JSON body: (status, body)."""
        req = urllib.request.Request(col.url + "/api/schedules", method="POST",
                                     data=json.dumps(fields).encode(),
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def cli(self, col, *args):
        return L.run([self.gcsnap] + list(args) + ["--collector", col.url])

    def complete(self, col, device):
        return [s for s in col.snapshots("?device=" + device) if s["status"] == "complete"]

    def requests(self, col, schedule_id):
        """{device: [request time in Unix s]} from the log lines of the schedule."""
        out = {}
        pat = re.compile(r"^(\S+)Z info  schedule %d: capture of (\S+) requested" % schedule_id)
        for line in col.log_text().splitlines():
            m = pat.match(line)
            if m:
                t = time.mktime(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone
                out.setdefault(m.group(2), []).append(t + float(m.group(1)[19:]))
        return out

    def restart(self, col):
        col.stop()
        col.proc = self.procs.start([self.gcsnapd, "--listen", col.agent_addr, "--http",
                                     "127.0.0.1:%d" % col.http_port, "--store", col.store],
                                    log=col.log + ".2")
        col.log = col.log + ".2"
        L.wait_until("the restarted collector's HTTP API", col._up, timeout=15)

    def run(self):
        c = self.c
        col = L.Collector(self.procs, self.gcsnapd, self.work)
        # ---- bad requests
        for bad in ({"every": "1s"}, {"device": "x", "every": "0s"}, {"device": "x", "every": "5"
                    "parsecs"}, {"device": "x", "every": "1s", "jitter": "2s"},
                    {"device": "x", "every": "1s", "keep": 0}, {"device": "x", "every": "1s",
                    "start": "2026-13-01T00:00Z"}, {"device": "x", "every": "1m", "start": 200, "end": 100},
                    # times past 9999 (start * 1000 wrapped: the first ran at once) and intervals past 366d
                    {"device": "x", "every": "1s", "start": 18446745869285539},
                    {"device": "x", "every": "1s", "start": 99999999999999999},
                    {"device": "x", "every": "1s", "start": "253402300800"},
                    {"device": "x", "every": "1s", "end": 18446744073709551},
                    {"device": "x", "every": "367d"}, {"device": "x", "every": "213503982335d"}):
            status, body = self.add(col, **bad)
            c.equal((status, body.get("error")), (400, "bad_request"), "POST %s is refused" % bad)
        status, far = self.add(col, device="x", every="366d", start="9999-12-31T23:59:59Z")
        c.equal((status, far.get("start"), far.get("devices")), (201, 253402300799, []),
                "a schedule that starts at the end of 9999 is taken, as it says")
        c.equal(col.api("/api/schedules/%s" % far.get("id"), method="DELETE")[0], 200, "and removed")
        for args in (["--start", "99999999999999999"], ["--end", "253402300800"], ["--every", "400d"]):
            r = self.cli(col, "schedule", "add", "x", *(["--every", "1s"] + args))
            c.equal(r.returncode, 2, "gcsnap schedule add %s is a usage error" % " ".join(args))
        c.equal(col.api("/api/schedules/99", method="DELETE")[0], 404, "DELETE of no schedule: 404")
        r = self.cli(col, "schedule", "add", "x", "--every", "3 weeks")
        c.equal(r.returncode, 2, "gcsnap schedule add --every '3 weeks' is a usage error")

        fleet = spread_ids("pos-", 3, 1000, 200)
        late = "late-1"
        for d, _ in fleet:
            self.start_agent(col, d)
        self.start_agent(col, "ret-k")
        self.start_agent(col, "ret-b")
        col.wait_devices([d for d, _ in fleet] + ["ret-k", "ret-b"])

        # ---- retention: a manual capture gives the size of one file
        rc = L.run([self.gcsnap, "capture", "ret-b", "--wait", "--json", "--collector", col.url])
        first = json.loads(rc.stdout)["snapshot_id"]
        size = col.api("/api/snapshots/%d" % first)[1]["file_bytes"]
        s_keep = self.add(col, device="ret-k", every="1s", keep=3)[1]["id"]
        s_bytes = self.add(col, device="ret-b", every="1s", max_bytes=str(2 * size + size // 2))[1]["id"]

        # ---- fleet and late
        status, sch = self.add(col, device="pos-*", every="1s")
        c.equal(status, 201, "POST /api/schedules: 201")
        t0 = time.time()
        late_sch = self.add(col, device=late, every="3s")[1]
        # Connect late-1 just after its third grid time: two runs missed.
        anchor = late_sch["created_ms"] + fnv1a(late) % 3000
        connect_at = (anchor + 2 * 3000) / 1000.0 + 0.2
        time.sleep(max(0, connect_at - time.time()))
        self.start_agent(col, late)
        col.wait_connected(late)
        time.sleep(max(0, connect_at + 2.0 - time.time()))
        c.equal(len(self.complete(col, late)), 1, "late-1: one capture for its missed runs")
        time.sleep(max(0, t0 + 10 - time.time()))
        r = self.cli(col, "schedule", "rm", str(sch["id"]))
        c.equal(r.returncode, 0, "gcsnap schedule rm: %s" % r.stderr)
        time.sleep(1.0)               # captures in flight end
        for d, _ in fleet:
            n = len(self.complete(col, d))
            c.ok(9 <= n <= 11, "%s: 10 snapshots in 10 s, within one" % d, "got %d" % n)
        times = self.requests(col, sch["id"])
        for d, offset in fleet:
            # Runs are at created_ms + offset + k s; the log's ms may round down.
            due = (sch["created_ms"] + offset) % 1000
            phases = [int(t * 1000) % 1000 for t in times.get(d, [])]
            c.ok(phases and all((p - due + 5) % 1000 <= 305 for p in phases),
                 "%s: captured at %d ms in each second, as its offset says (+ at most one tick)"
                 % (d, due), "phases %s" % phases)
        snap = self.complete(col, fleet[0][0])[0]
        c.equal((snap["trigger"], snap["schedule_id"]), ("schedule", sch["id"]),
                "a scheduled snapshot says trigger schedule and its schedule")
        n_before = {d: len(self.complete(col, d)) for d, _ in fleet}
        time.sleep(1.5)
        c.equal({d: len(self.complete(col, d)) for d, _ in fleet}, n_before,
                "no capture after gcsnap schedule rm")

        # ---- retention
        def check_kept(device, want):
            # The schedule goes on: a snapshot being stored has its file
            # renamed into place just before its row turns complete, and
            # retention follows it, so compare at a moment between captures.
            def look():
                snaps = self.complete(col, device)
                files = sorted(int(f.split(".")[0]) for f in
                               os.listdir(os.path.join(col.store, "snapshots", device)) if f.endswith(".zst"))
                return snaps, files
            deadline = time.time() + 5
            snaps, files = look()
            while (len(snaps) != want or files != sorted(s["id"] for s in snaps)) and time.time() < deadline:
                time.sleep(0.05)
                snaps, files = look()
            c.equal(len(snaps), want, "%s: %d complete snapshots kept" % (device, want))
            c.equal(files, sorted(s["id"] for s in snaps), "%s: the store folder holds exactly them" % device)
            return snaps
        check_kept("ret-k", 3)
        kept = check_kept("ret-b", 2)
        c.ok(sum(s["file_bytes"] for s in kept) <= 2 * size + size // 2, "ret-b: within max_bytes")

        # ---- restart: the schedule goes on from the catalog
        status, before = col.api("/api/schedules/%d" % s_keep)
        self.restart(col)
        col.wait_devices(["ret-k"])
        status, after = col.api("/api/schedules/%d" % s_keep)
        c.equal((status, after["every_ms"], after["keep"]), (200, 1000, 3), "the schedule survives the restart")
        last = max(x["last_run_ms"] or 0 for x in before["devices"])
        L.wait_until("a run after the restart", lambda: max(
            x["last_run_ms"] or 0 for x in col.api("/api/schedules/%d" % s_keep)[1]["devices"]) > last + 1500,
            timeout=10)
        time.sleep(2.5)
        n = len(self.requests(col, s_keep).get("ret-k", []))
        c.ok(n >= 2, "ret-k: captured again after the restart", "requests: %d" % n)
        check_kept("ret-k", 3)
        r = self.cli(col, "schedule", "list")
        c.ok(r.returncode == 0 and "ret-k" in r.stdout and "ret-b" in r.stdout,
             "gcsnap schedule list shows the schedules", r.stdout + r.stderr)
        for sid in (s_keep, s_bytes, late_sch["id"]):
            c.equal(col.api("/api/schedules/%d" % sid, method="DELETE")[0], 200, "DELETE schedule %d" % sid)
        c.equal(col.api("/api/schedules")[1]["schedules"], [], "no schedules left")
        col.stop()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    bin_dir, work = sys.argv[1:]
    L.install_signal_exit()
    t = Test(bin_dir, work)
    if not os.access(t.gcsnapd, os.X_OK) or "--connect" not in L.run([t.agent, "--help"]).stdout:
        print("SKIP: gcsnapd or the agent's --connect is missing")
        return L.SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    try:
        t.run()
    except L.Failure as e:
        t.c.ok(False, str(e))
    except Exception:
        t.c.ok(False, "unexpected error", traceback.format_exc())
    finally:
        t.procs.stop_all()
    print("%d checks passed, %d failed" % (t.c.passed, t.c.failures))
    return 1 if t.c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
