#!/usr/bin/env python3
"""e2e_test.py - end-to-end tests of the collector gcsnapd, the agent's
session and the gcsnap client commands, on loopback.

usage: e2e_test.py SUITE BIN_DIR WORK_DIR

Suites:
  client    the client commands against a fake API (every refusal, cut
            downloads, unreachable collector); needs no gcsnapd
  loopback  collector + mock agent: capture on demand, the stored snapshot is
            byte-identical to the agent's --out, the catalog agrees with
            gcsnap summary
  demo      the same with the demo application's heap
  fleet     50 agents connected at once, all captured in parallel
  faults    malformed frame, oversize frame, stream cut, wrong CRC, sequence
            gap: each refused with its own error, nothing stored as
            complete, a well-behaved agent still captured
  once      gcsnap-agent --once: one snapshot uploaded, then exit

Exit status 0 when every check passed, 1 when one failed, 77 (skipped) when
the suite cannot run here (no gcsnapd built, no --connect in the agent).
"""
import json
import os
import subprocess
import sys
import threading
import time
import zlib

sys.dont_write_bytecode = True        # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L            # noqa: E402
import fake_agent              # noqa: E402
import fake_collector          # noqa: E402

CLOCK = "0x2a5f00"              # --clock for reproducible timestamps
SUMMARY_FIELDS = ("objects", "bytes", "references", "roots", "types", "unreachable",
                  "dangling_references")


class Env(L.Env):
    def need_collector(self):
        self.need_gcsnapd()
        r = L.run([self.agent, "--help"])
        if "--connect" not in r.stdout:
            raise L.Skip("gcsnap-agent has no --connect")

    def cli(self, *args, timeout=120):
        return L.run([self.gcsnap] + list(args), timeout=timeout)

    def start_agent(self, collector, source, device_id, *extra, log=None):
        return self.procs.start([self.agent, "--source", source, "--connect",
                                 collector.agent_addr, "--device-id", device_id,
                                 "--clock", CLOCK] + list(extra),
                                log=log or self.path("agent-%s.log" % device_id))

    def reference(self, source, out, *extra):
        """The agent's own --out dump of source, with the same --clock."""
        r = L.run([self.agent, "--source", source, "--clock", CLOCK, "--out", out] + list(extra))
        if r.returncode != 0:
            raise L.Failure("gcsnap-agent --out %s failed: %s" % (out, r.stderr))

    def capture(self, collector, device_id, *extra):
        """gcsnap capture DEVICE --wait --json: (exit status, JSON or None, stderr)."""
        r = self.cli("capture", device_id, "--wait", "--json", "--collector", collector.url,
                     *extra)
        try:
            body = json.loads(r.stdout) if r.stdout.strip() else None
        except ValueError:
            body = None
        return r.returncode, body, r.stderr

    def fetch(self, collector, snapshot_id, out, fmt):
        r = self.cli("fetch", str(snapshot_id), "-o", out, "--format", fmt,
                     "--collector", collector.url)
        self.c.equal(r.returncode, 0, "gcsnap fetch %s --format %s: %s" % (snapshot_id, fmt, r.stderr))
        return r.returncode == 0

    def summary(self, path):
        r = self.cli("summary", "--json", "--top", "0", path)
        if r.returncode != 0:
            raise L.Failure("gcsnap summary %s: %s" % (path, r.stderr))
        return json.loads(r.stdout)


# ---- checks shared by the suites ----------------------------------------

def check_stored(env, col, device_id, source, name, *agent_extra):
    """Captures device_id, fetches the snapshot in both forms and checks it
    against the agent's --out dump of the same source and clock. Returns
    the snapshot ID."""
    c = env.c
    rc, body, err = env.capture(col, device_id, *agent_extra)
    if not c.equal(rc, 0, "gcsnap capture %s --wait: %s" % (device_id, err)):
        return None
    sid = body["snapshot_id"]
    ref, got, gotz = env.path(name + ".ref.gclog"), env.path(name + ".gclog"), env.path(name + ".gclog.zst")
    env.reference(source, ref, *agent_extra)
    if env.fetch(col, sid, got, "gclog"):
        c.ok(L.same_file(got, ref), "%s: the stored snapshot is byte-identical to the agent's --out" % name,
             "cmp %s %s" % (got, ref))
        if source.startswith("mock:"):     # the demo's addresses change from run to run
            c.ok(os.path.exists(got + ".gens.json") and L.same_file(got + ".gens.json", ref + ".gens.json"),
                 "%s: the generation ranges fetched beside it are the agent's --out side file" % name)
    if env.fetch(col, sid, gotz, "zst"):
        unz = env.path(name + ".unzst.gclog")
        r = env.cli("convert", gotz, unz)
        c.ok(r.returncode == 0 and L.same_file(unz, ref),
             "%s: the stored .gclog.zst holds the same bytes" % name, r.stderr)
    check_catalog(env, col, sid, got)
    return sid


def check_catalog(env, col, sid, path):
    """The catalog's figures and summary agree with gcsnap summary on path."""
    c = env.c
    local = env.summary(path)
    status, snap = col.api("/api/snapshots/%d" % sid)
    if not c.equal(status, 200, "GET /api/snapshots/%d" % sid):
        return
    c.equal(snap["status"], "complete", "snapshot %d status" % sid)
    c.equal(snap.get("reason"), None, "snapshot %d reason" % sid)
    for k in SUMMARY_FIELDS:
        c.equal(snap.get(k), local[k], "catalog %s of snapshot %d vs gcsnap summary" % (k, sid))
        c.equal(snap["summary"].get(k), local[k], "API summary %s of snapshot %d" % (k, sid))
    with open(path, "rb") as f:
        data = f.read()
    c.equal(snap.get("text_bytes"), len(data), "catalog text_bytes of snapshot %d" % sid)
    c.equal(snap.get("crc32"), zlib.crc32(data), "catalog crc32 of snapshot %d" % sid)
    c.equal(snap.get("sections"), len(local["sections"]), "catalog sections of snapshot %d" % sid)
    remote = snap["summary"].get("by_type", [])
    c.ok(len(remote) > 0, "API summary of snapshot %d has by_type rows" % sid)
    c.equal(remote, local["by_type"][:len(remote)], "API by_type of snapshot %d vs gcsnap summary" % sid)
    for k in ("roots_by_kind", "roots_by_flag", "unreachable_bytes", "dangling_roots"):
        c.equal(snap["summary"].get(k), local[k], "API summary %s of snapshot %d" % (k, sid))
    listed = [s for s in col.snapshots("?device=%s" % snap["device_id"]) if s["id"] == sid]
    c.equal(len(listed), 1, "snapshot %d listed under its device" % sid)


# ---- suites ---------------------------------------------------------------

def suite_client(env):
    """The client commands against the fake API."""
    c = env.c
    fake = fake_collector.FakeCollector()
    try:
        url = fake.url

        def cli(*args):
            return env.cli(*args, "--collector", url)

        r = cli("devices")
        c.equal(r.returncode, 0, "devices: exit status")
        c.ok("dev1" in r.stdout and "capturing" in r.stdout and "127.0.0.1:40000" in r.stdout,
             "devices: the busy device is shown as capturing with its address", r.stdout)
        c.ok("old phone" in r.stdout and "offline" in r.stdout and "armv5te/32" in r.stdout,
             "devices: the offline device with its architecture", r.stdout)
        c.ok(r.stdout.splitlines()[0].split()[:3] == ["DEVICE", "STATE", "APP"], "devices: table header",
             r.stdout)
        r = cli("devices", "--json")
        c.equal(json.loads(r.stdout), fake_collector.DEVICES, "devices --json passes the API's JSON through")
        r = L.run([env.gcsnap, "devices", "--json"], env=dict(os.environ, GCSNAP_COLLECTOR=url + "/"))
        c.equal(r.returncode, 0, "devices: the collector from $GCSNAP_COLLECTOR (trailing slash)")

        r = cli("snapshots")
        lines = r.stdout.splitlines()
        c.equal(r.returncode, 0, "snapshots: exit status")
        c.ok(len(lines) == 3 and lines[1].split()[0] == "2" and "complete" in lines[1],
             "snapshots: one row per snapshot, newest first", r.stdout)
        c.ok("failed" in lines[2] and "stream cut" in lines[2], "snapshots: a failed one with its reason",
             r.stdout)
        del fake.seen[:]
        r = cli("snapshots", "--device", "old phone/ä", "--status", "failed", "--limit", "3")
        c.equal(fake.seen, [("GET", "/api/snapshots?device=old%20phone%2F%C3%A4&status=failed&limit=3")],
                "snapshots: filters passed to the API, the device ID escaped")
        c.ok("No snapshots" in r.stdout, "snapshots: an empty list says so", r.stdout)
        r = cli("snapshots", "--status", "broken")
        c.equal(r.returncode, 2, "snapshots --status broken is a usage error")

        del fake.seen[:]
        r = cli("capture", "dev1")
        c.equal(r.returncode, 0, "capture without --wait: exit status")
        c.ok("request 5" in r.stdout, "capture without --wait: prints the request", r.stdout)
        c.equal(fake.seen, [("POST", "/api/devices/dev1/capture")], "capture: the call")
        del fake.seen[:]
        r = cli("capture", "dev1", "--wait", "--timeout", "7", "--stable-ids")
        c.equal(r.returncode, 0, "capture --wait: exit status")
        c.ok("Snapshot 2 of dev1 stored" in r.stdout and "1 objects" in r.stdout,
             "capture --wait: prints the stored snapshot and its figures", r.stdout)
        c.equal(fake.seen[0], ("POST", "/api/devices/dev1/capture?wait=1&timeout=7&stable_ids=1"),
                "capture --wait --timeout --stable-ids: the query")
        r = cli("capture", "dev1", "--wait", "--json")
        c.equal(json.loads(r.stdout), {"request_id": 5, "snapshot_id": 2}, "capture --json")
        for dev, code, words in (("busy", "busy", "already capturing"),
                                 ("offline", "not_connected", "not connected"),
                                 ("nosuch", "not_found", "unknown device"),
                                 ("broken", "capture_failed", "CRC mismatch"),
                                 ("slow", "timeout", "within 1 s")):
            r = cli("capture", dev, "--wait")
            c.equal(r.returncode, 1, "capture %s: exit status 1" % dev)
            c.ok(words in r.stderr and code in r.stderr and r.stdout == "",
                 "capture %s: the API's message and code on stderr" % dev, r.stderr)
        r = cli("capture", "dev1", "--timeout", "5")
        c.equal(r.returncode, 2, "capture --timeout without --wait is a usage error")

        out = env.path("fetched.gclog")
        with open(out + ".gens.json", "w") as f:
            f.write('{"format": "gcsnap-generations/1", "dropped": 0, "ranges": []}')
        r = cli("fetch", "2", "-o", out)
        c.equal(r.returncode, 0, "fetch: exit status")
        c.ok(not os.path.exists(out + ".gens.json"),
             "fetch of a snapshot without generation ranges removes the side file of another")
        with open(out, "rb") as f:
            c.equal(f.read(), fake_collector.SNAPSHOT_TEXT, "fetch: .gclog by default for a .gclog name")
        outz = env.path("fetched.gclog.zst")
        r = cli("fetch", "2", "-o", outz)
        with open(outz, "rb") as f:
            c.equal(f.read(), fake_collector.ZST_BYTES,
                    "fetch: a .zst name gets the stored bytes, not compressed again")
        r = cli("fetch", "2", "-o", out, "--format", "zst")
        with open(out, "rb") as f:
            c.equal(f.read(), fake_collector.ZST_BYTES, "fetch --format zst whatever the name")
        r = cli("fetch", "2", "-o", "-", "--format", "gclog")
        c.equal(r.stdout.encode(), fake_collector.SNAPSHOT_TEXT, "fetch -o - writes stdout")
        with open(out, "wb") as f:
            f.write(b"old content\n")
        r = cli("fetch", "99", "-o", out)
        c.equal(r.returncode, 1, "fetch of an unknown snapshot: exit status 1")
        c.ok("no snapshot" in r.stderr and "not_found" in r.stderr, "fetch 99: the API's message",
             r.stderr)
        r = cli("fetch", "3", "-o", out)
        c.equal(r.returncode, 2, "fetch cut short: exit status 2")
        c.ok("transfer from the collector" in r.stderr and "failed" in r.stderr,
             "fetch cut short: says the transfer failed", r.stderr)
        with open(out, "rb") as f:
            c.equal(f.read(), b"old content\n", "fetch failed: FILE keeps its old content")
        c.equal(sorted(os.listdir(env.work)), ["fetched.gclog", "fetched.gclog.zst"],
                "fetch failed: no temporary file left")
        r = cli("fetch", "x2", "-o", out)
        c.equal(r.returncode, 2, "fetch of a non-numeric ID is a usage error")
        r = cli("fetch", "2")
        c.equal(r.returncode, 2, "fetch without -o is a usage error")

        r = env.cli("devices", "--collector", url + "/html")
        c.equal(r.returncode, 2, "an answer that is not the API's: exit status 2")
        c.ok("answered HTTP 404" in r.stderr, "an answer that is not the API's: said so", r.stderr)
    finally:
        fake.stop()
    dead = "http://127.0.0.1:%d" % L.free_port()
    for args in (("devices",), ("snapshots",), ("capture", "dev1", "--wait"),
                 ("fetch", "1", "-o", env.path("never.gclog"))):
        r = env.cli(*args, "--collector", dead)
        c.equal(r.returncode, 2, "%s with no collector: exit status 2" % args[0])
        c.ok("cannot reach the collector at %s" % dead in r.stderr,
             "%s with no collector: names the URL" % args[0], r.stderr)
    c.ok(not os.path.exists(env.path("never.gclog")), "fetch with no collector writes nothing")
    for cmd in ("devices", "snapshots", "capture", "fetch"):
        r = env.cli(cmd, "--help")
        c.ok(r.returncode == 0 and r.stdout.startswith("usage: gcsnap " + cmd),
             "%s --help" % cmd, r.stdout + r.stderr)


def suite_loopback(env):
    env.need_collector()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    source = "mock:objects=20000,seed=5"
    agent = env.start_agent(col, source, "dev1")
    col.wait_connected("dev1")
    r = env.cli("devices", "--collector", col.url)
    c.ok(r.returncode == 0 and any(l.split()[:2] == ["dev1", "connected"] for l in r.stdout.splitlines()),
         "gcsnap devices lists dev1 as connected", r.stdout + r.stderr)
    sid = check_stored(env, col, "dev1", source, "dev1")
    if sid is not None:
        r = env.cli("snapshots", "--device", "dev1", "--collector", col.url)
        c.ok(r.returncode == 0 and any(l.split()[:2] == [str(sid), "dev1"] for l in r.stdout.splitlines()),
             "gcsnap snapshots lists the new snapshot", r.stdout + r.stderr)
        # A second capture of the same device is a new snapshot of the same heap.
        sid2 = check_stored(env, col, "dev1", source, "dev1-again")
        c.ok(sid2 is not None and sid2 != sid, "a second capture stores a second snapshot")
        # With stable IDs.
        check_stored(env, col, "dev1", source, "dev1-stable", "--stable-ids")
    # A second request while a capture is in flight is refused (409 busy).
    big = env.start_agent(col, "mock:objects=2000000,seed=2", "big")
    col.wait_connected("big")
    r = env.cli("capture", "big", "--json", "--collector", col.url)
    first = json.loads(r.stdout) if r.returncode == 0 else {}
    c.ok(r.returncode == 0 and first.get("request_id"), "capture without --wait answers with a request",
         r.stdout + r.stderr)
    rc, body, err = env.capture(col, "big")
    c.ok(rc == 1 and "busy" in err, "a second capture while one is in flight: exit 1, busy", err)
    if first.get("request_id"):
        def stored():
            status, st = col.api("/api/captures/%d" % first["request_id"])
            return status == 200 and st["state"] in ("stored", "failed") and st
        st = L.wait_until("the first capture of big to finish", stored, timeout=60)
        c.equal(st["state"], "stored", "the capture that was not refused is stored")
    env.procs.stop(big)
    # Refusals from the real collector.
    rc, body, err = env.capture(col, "nosuch")
    c.ok(rc == 1 and "not_found" in err, "capture of an unknown device: exit 1, not_found", err)
    r = env.cli("fetch", "999999", "-o", env.path("none.gclog"), "--collector", col.url)
    c.ok(r.returncode == 1 and "not_found" in r.stderr and not os.path.exists(env.path("none.gclog")),
         "fetch of an unknown snapshot: exit 1, not_found, no file", r.stderr)
    env.procs.stop(agent)
    L.wait_until("dev1 to be shown disconnected", lambda: not col.device("dev1")["connected"])
    rc, body, err = env.capture(col, "dev1")
    c.ok(rc == 1 and "not_connected" in err, "capture of a disconnected device: exit 1, not_connected", err)
    r = env.cli("devices", "--collector", col.url)
    c.ok(any(l.split()[:2] == ["dev1", "offline"] for l in r.stdout.splitlines()),
         "gcsnap devices shows dev1 offline", r.stdout)
    col.stop()


def suite_demo(env):
    env.need_collector()
    if "demo" not in L.run([env.agent, "--help"]).stdout:
        raise L.Skip("gcsnap-agent has no demo source")
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    source = "demo:objects=50000"
    # The program runs on between captures, so each check captures a
    # program of its own once, as the --out run does.
    env.start_agent(col, source, "demo-1")
    env.start_agent(col, source, "demo-2")
    col.wait_devices(["demo-1", "demo-2"])
    # The demo heap's object IDs are addresses in an arena the runtime maps
    # wherever the system puts it, so two runs of the program give the same
    # heap at different addresses: the default dumps are not byte-identical
    # (two --out runs with the same knobs and --clock differ). Its stable
    # IDs do not depend on the addresses, and those dumps are identical.
    # So: with --stable-ids the stored snapshot must be byte-identical to
    # --out; without, it must validate strictly and have the same summary.
    check_stored(env, col, "demo-1", source, "demo-stable", "--stable-ids")
    rc, body, err = env.capture(col, "demo-2")
    if c.equal(rc, 0, "capture demo-2 (address IDs): %s" % err):
        got = env.path("demo.gclog")
        if env.fetch(col, body["snapshot_id"], got, "gclog"):
            r = env.cli("validate", "--strict", got)
            c.equal(r.returncode, 0, "the demo snapshot validates with --strict: " + r.stdout[-500:])
            ref = env.path("demo.ref.gclog")
            env.reference(source, ref)
            a, b = env.summary(got), env.summary(ref)
            for s in (a, b):
                s.pop("file")
            c.ok(a == b, "the demo snapshot's summary is that of the agent's --out dump")
            check_catalog(env, col, body["snapshot_id"], got)
    col.stop()


def suite_fleet(env, count=50):
    env.need_collector()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    ids = ["fleet-%02d" % i for i in range(count)]
    sources = {d: "mock:objects=%d,seed=%d" % (1500 + 37 * i, 100 + i) for i, d in enumerate(ids)}
    for d in ids:
        env.start_agent(col, sources[d], d)
    col.wait_devices(ids, timeout=40)
    results = {}

    def capture(d):
        results[d] = env.capture(col, d)
    threads = [threading.Thread(target=capture, args=(d,)) for d in ids]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    L.log("50 captures in parallel: %.2f s" % (time.monotonic() - t0))
    stored = {d: r[1]["snapshot_id"] for d, r in results.items() if r[0] == 0}
    for d in ids:
        c.ok(d in stored, "capture of %s" % d, results[d][2])
    snaps = col.snapshots("?status=complete&limit=1000")
    c.equal(sorted(s["device_id"] for s in snaps), sorted(stored), "every capture is stored as complete")
    c.equal(len(set(stored.values())), len(stored), "every snapshot has its own ID")
    for d, sid in sorted(stored.items()):
        got, ref = env.path(d + ".gclog"), env.path(d + ".ref.gclog")
        env.reference(sources[d], ref)
        if env.fetch(col, sid, got, "gclog"):
            c.ok(L.same_file(got, ref), "%s: snapshot %d is byte-identical to the agent's --out" % (d, sid))
            entry = [s for s in snaps if s["id"] == sid]
            if entry:
                c.equal(entry[0]["text_bytes"], os.path.getsize(ref), "%s: catalog text_bytes" % d)
        os.unlink(got)
        os.unlink(ref)
    col.stop()


# The Error.code the agent is sent (GS_WIRE_E_* in common/include/gs_wire.h);
# a cut stream has no one left to tell.
FAULT_CODES = {"garbage": 1, "oversize": 3, "crc": 5, "seq": 4}
# The reason and the log line each fault must give (lowercase regexes).
FAULT_WORDS = {
    "garbage": r"malformed|decod|unpack|garbled|invalid frame|protocol",
    "oversize": r"too (large|long|big)|oversize|exceeds|above|limit|max",
    "cut": r"cut|closed|disconnect|lost|eof|reset|gone|ended",
    "crc": r"crc",
    "seq": r"seq",
}


def suite_faults(env):
    import re
    env.need_collector()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    good_source = "mock:objects=5000,seed=9"
    env.start_agent(col, good_source, "good")
    col.wait_connected("good")

    # First the fake itself, without a fault: it must be stored as sent.
    fake = fake_agent.FakeAgent(col.agent_addr, "fake-ok")
    col.wait_connected("fake-ok")
    heap = fake_agent.Heap()
    proc = env.procs.start([env.gcsnap, "capture", "fake-ok", "--wait", "--json",
                            "--collector", col.url], log=env.path("capture-fake-ok.log"))
    fake.stream(fake.wait_capture(), heap)
    answer = fake.answer()
    proc.wait(timeout=30)
    c.equal(proc.returncode, 0, "the fake agent's valid snapshot is stored")
    c.equal(answer[0], "ack", "the fake agent's valid snapshot is acknowledged")
    fake.close()
    ok = [s for s in col.snapshots("?device=fake-ok") if s["status"] == "complete"]
    if c.equal(len(ok), 1, "one complete snapshot of fake-ok"):
        got = env.path("fake-ok.gclog")
        if env.fetch(col, ok[0]["id"], got, "gclog"):
            with open(got, "rb") as f:
                c.equal(f.read(), heap.text(), "the fake agent's snapshot is stored byte for byte")

    reasons = {}
    for fault in fake_agent.FAULTS:
        dev = "fault-" + fault
        log_before = len(col.log_text())
        fake = fake_agent.FakeAgent(col.agent_addr, dev)
        col.wait_connected(dev)
        proc = env.procs.start([env.gcsnap, "capture", dev, "--wait", "--json",
                                "--collector", col.url], log=env.path("capture-%s.log" % dev))
        try:
            fake.stream(fake.wait_capture(), heap, fault=fault)
            answer = fake.answer() if fake.sock else ("closed",)
        except OSError as e:
            answer = ("closed", str(e))
        fake.close()
        proc.wait(timeout=30)
        with open(env.path("capture-%s.log" % dev), errors="replace") as f:
            cap_out = f.read()
        c.equal(proc.returncode, 1, "%s: gcsnap capture --wait exits 1" % fault)
        c.ok("capture_failed" in cap_out, "%s: the API reports capture_failed" % fault, cap_out)
        snaps = col.snapshots("?device=" + dev)
        c.equal([s["status"] for s in snaps], ["failed"], "%s: one snapshot, failed" % fault)
        if snaps:
            reason = snaps[0].get("reason") or ""
            reasons[fault] = reason
            c.ok(re.search(FAULT_WORDS[fault], reason.lower()),
                 "%s: the failed snapshot's reason says what happened" % fault, reason)
            r = env.cli("fetch", str(snaps[0]["id"]), "-o", env.path(dev + ".gclog"),
                        "--collector", col.url)
            c.ok(r.returncode == 1 and not os.path.exists(env.path(dev + ".gclog")),
                 "%s: the failed snapshot cannot be downloaded" % fault, r.stderr)
        time.sleep(0.1)
        new_log = col.log_text()[log_before:]
        lines = [l for l in new_log.splitlines() if dev in l and re.search(FAULT_WORDS[fault], l.lower())]
        c.ok(lines, "%s: the collector logs it with the device" % fault, new_log[-2000:])
        if fault in FAULT_CODES:
            c.equal(answer[:2], ("error", FAULT_CODES[fault]),
                    "%s: the agent is sent an Error with its code before the session ends" % fault)
        # The well-behaved agent is still served.
        sid = check_stored(env, col, "good", good_source, "good-after-" + fault)
        c.ok(sid is not None, "%s: the well-behaved agent is captured afterwards" % fault)
    c.equal(len(set(reasons.values())), len(reasons), "each fault has its own reason: %r" % reasons)
    complete = {s["device_id"] for s in col.snapshots("?status=complete")}
    c.ok(not any(d.startswith("fault-") for d in complete), "no faulty stream is stored as complete",
         complete)
    col.stop()


def suite_once(env):
    env.need_collector()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    source = "mock:objects=20000,seed=7"
    agent = env.start_agent(col, source, "once-1", "--once")
    try:
        agent.wait(timeout=60)
    except subprocess.TimeoutExpired:
        c.ok(False, "gcsnap-agent --once exits after its upload")
    c.equal(agent.returncode, 0, "gcsnap-agent --once exit status")
    snaps = col.snapshots("?device=once-1")
    if c.equal([s["status"] for s in snaps], ["complete"], "--once: one complete snapshot"):
        got, ref = env.path("once.gclog"), env.path("once.ref.gclog")
        env.reference(source, ref)
        if env.fetch(col, snaps[0]["id"], got, "gclog"):
            c.ok(L.same_file(got, ref), "--once: the stored snapshot is byte-identical to --out")
            check_catalog(env, col, snaps[0]["id"], got)
        c.ok(snaps[0].get("request_id") in (0, None) and snaps[0].get("trigger") != "request",
             "--once: a snapshot no request asked for", snaps[0])
    d = col.device("once-1")
    c.ok(d is not None and not d["connected"], "--once: the device is no longer connected", d)
    col.stop()


SUITES = {"client": suite_client, "loopback": suite_loopback, "demo": suite_demo,
          "fleet": suite_fleet, "faults": suite_faults, "once": suite_once}


if __name__ == "__main__":
    sys.exit(L.main("e2e_test.py", SUITES, Env))
