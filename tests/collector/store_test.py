#!/usr/bin/env python3
"""store_test.py - the collector's store against a damaged file:

  corrupt   a stored .gclog.zst cut to half, with one byte flipped, or
            replaced by another snapshot's valid file: no route serves it
            as the snapshot (500 "corrupt" before anything is sent when the
            size disagrees with the catalog, else a download that ends in
            error), gcsnap fetch exits 1 and writes no file, the log says
            so and the catalog marks the snapshot "damaged"; an intact
            snapshot is still served whole.
  catalog   the catalog deleted or replaced while gcsnapd runs: the next
            snapshot is refused with Error 8 and a log line, never acked
            into the lost file; after a restart the files without a row are
            reported and kept, and new IDs do not meet them.
  second    a second gcsnapd on a store in use exits 1 naming the first
            one's PID, before its start-up recovery touches anything: the
            first one's snapshot in flight is stored whole.

usage: store_test.py SUITE BIN_DIR WORK_DIR
Exit 0 when every check passed, 1 when one failed, 77 when gcsnapd is missing.
"""
import http.client
import os
import sys
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402
import fake_agent as F         # noqa: E402


class Env(L.Env):
    def __init__(self, bin_dir, work):
        super().__init__(bin_dir, work)
        self.need_gcsnapd()


def get(url):
    """("ok", status, body) when the whole body came, ("broken", status) when
    the transfer ended in error."""
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.request("GET", u.path + ("?" + u.query if u.query else ""))
        r = conn.getresponse()
        try:
            return ("ok", r.status, r.read())
        except (http.client.IncompleteRead, ConnectionError, OSError):
            return ("broken", r.status)
    finally:
        conn.close()


def store_snapshots(col, dev, heaps):
    a = F.FakeAgent(col.agent_addr, dev)
    ids = []
    for i, heap in enumerate(heaps):
        a.stream(0, heap, snapshot_id=i + 1)
        got = a.answer()
        if got[0] != "ack":
            raise L.Failure("snapshot %d of %s not stored: %s" % (i + 1, dev, got))
        ids.append(got[1])
    a.close()
    return ids


def suite_corrupt(env):
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    good, cut, flip, swap, other = store_snapshots(col, "dmg", [F.Heap(objects=3000 + 100 * i)
                                                                for i in range(5)])
    folder = os.path.join(col.store, "snapshots", "dmg")

    def path(i):
        return os.path.join(folder, "%d.gclog.zst" % i)
    with open(path(cut), "r+b") as f:
        f.truncate(os.path.getsize(path(cut)) // 2)
    with open(path(flip), "r+b") as f:
        f.seek(os.path.getsize(path(flip)) // 2)
        b = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([b[0] ^ 0x40]))
    with open(path(other), "rb") as src, open(path(swap), "wb") as dst:
        dst.write(src.read())
    os.unlink(path(other))

    for sid, how in ((cut, "cut to half"), (flip, "with a byte flipped"), (swap, "replaced")):
        for route in ("download", "download?format=gclog"):
            got = get(col.url + "/api/snapshots/%d/%s" % (sid, route))
            c.ok(got[0] == "broken" or got[1] == 500,
                 "%s %s: not served as the snapshot" % (route, how), got[:2])
            if how != "with a byte flipped":
                c.ok(got[0] == "ok" and got[1] == 500 and b'"corrupt"' in got[2],
                     "%s %s: 500 corrupt before anything is sent" % (route, how), got[:2])
        for route in ("types", "dominators"):
            got = get(col.url + "/api/snapshots/%d/%s" % (sid, route))
            c.ok(got[0] == "ok" and got[1] >= 400, "%s %s: an error" % (route, how), got)
        out = env.path("fetched-%d.gclog.zst" % sid)
        for fmt in ("zst", "gclog"):
            r = L.run([env.gcsnap, "fetch", str(sid), "-o", out, "--format", fmt,
                       "--collector", col.url])
            c.ok(r.returncode != 0 and not os.path.exists(out) and "written" not in r.stdout,
                 "gcsnap fetch --format %s of a file %s exits %d and writes nothing"
                 % (fmt, how, r.returncode), r.stdout + r.stderr)
        row = col.api("/api/snapshots/%d" % sid)[1]
        c.ok(row.get("damaged"), "the catalog marks the snapshot %s as damaged" % how, row.get("damaged"))
        c.ok("snapshot %d: the stored file" % sid in col.log_text(), "the log says the file %s is damaged" % how)
    got = get(col.url + "/api/snapshots/%d/download" % good)
    c.ok(got[0] == "ok" and got[1] == 200 and len(got[2]) == os.path.getsize(path(good)),
         "an intact snapshot is served whole", got[:2])
    r = L.run([env.gcsnap, "fetch", str(good), "-o", env.path("good.gclog"), "--collector", col.url])
    c.equal(r.returncode, 0, "gcsnap fetch of an intact snapshot: " + r.stderr)
    c.equal(col.api("/api/snapshots/%d" % good)[1].get("damaged", "absent"), None,
            "an intact snapshot is not marked")


def begin_without_end(agent, heap, snapshot_id):
    """Streams all of heap but SnapshotEnd; returns the seq of the end."""
    begin = F.f_uint(1, 0) + F.f_uint(2, snapshot_id) + F.f_bytes(4, "test") + F.f_uint(5, 1000)
    agent.send(F.frame(F.envelope(F.SNAPSHOT_BEGIN, begin)))
    seq = 0
    for kind, body in heap.data_messages():
        seq += 1
        agent.send(F.frame(F.envelope(kind, body(seq))))
    return seq + 1


def suite_second(env):
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    a = F.FakeAgent(col.agent_addr, "first")
    heap = F.Heap(objects=500)
    end_seq = begin_without_end(a, heap, 1)
    folder = os.path.join(col.store, "snapshots", "first")
    tmp = L.wait_until("the snapshot's temporary file", lambda: [n for n in os.listdir(folder)
                                                                  if n.endswith(".tmp")] if
                       os.path.isdir(folder) else None, timeout=10)
    r = L.run([env.gcsnapd, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--store", col.store],
              timeout=20)
    out = r.stdout + r.stderr
    c.ok(r.returncode == 1 and "in use by another gcsnapd (pid %d" % col.proc.pid in out,
         "a second gcsnapd on the store is refused, naming the first one's PID", "exit %s: %s"
         % (r.returncode, out))
    c.equal(sorted(n for n in os.listdir(folder) if n.endswith(".tmp")), tmp,
            "the first one's temporary file is left alone")
    a.send(F.frame(F.envelope(F.SNAPSHOT_END, heap.end(end_seq))))
    got = a.answer()
    c.ok(got[0] == "ack", "the first one's snapshot is stored", got)
    if got[0] == "ack":
        row = col.api("/api/snapshots/%d" % got[1])[1]
        c.equal((row["status"], row["objects"]), ("complete", 500), "complete, whole")
    a.close()
    col.stop()
    again = L.Collector(env.procs, env.gcsnapd, env.work)
    c.ok(again.api("/api/health")[0] == 200, "once the first has stopped, the store opens again")


def push(agent, heap, snapshot_id):
    agent.stream(0, heap, snapshot_id=snapshot_id)
    return agent.answer()


def read(path):
    with open(path, "rb") as f:
        return f.read()


def suite_catalog(env):
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    catalog = os.path.join(col.store, "catalog.db")
    first = os.path.join(col.store, "snapshots", "c1", "1.gclog.zst")
    a = F.FakeAgent(col.agent_addr, "c1")
    c.equal(push(a, F.Heap(objects=100), 1), ("ack", 1), "snapshot 1 is stored")
    kept = read(first)
    os.unlink(catalog)
    got = push(a, F.Heap(objects=120), 2)
    c.ok(got[0] == "error" and got[1] == 8 and "removed while gcsnapd ran" in got[2],
         "with its catalog deleted, the collector stores nothing more and says why", got)
    c.ok("catalog.db was removed while gcsnapd ran" in col.log_text(), "and logs it")
    a.close()
    col.stop()

    col = L.Collector(env.procs, env.gcsnapd, env.work)
    c.ok("snapshots/c1/1.gclog.zst is in the store but in no catalog row" in col.log_text(),
         "on start-up, a snapshot file without a row is reported", col.log_text()[-2000:])
    c.equal(col.snapshots(), [], "the new catalog lists nothing")
    a = F.FakeAgent(col.agent_addr, "c1")
    got = push(a, F.Heap(objects=140), 3)
    c.ok(got[0] == "ack" and got[1] > 1, "the next snapshot is stored under a new ID, not 1", got)
    c.ok(read(first) == kept, "the file without a row is never overwritten")
    # A catalog replaced (a copy moved over it) is noticed as well.
    copy = catalog + ".copy"
    with open(copy, "wb") as f:
        f.write(read(catalog))
    os.replace(copy, catalog)
    got = push(a, F.Heap(objects=160), 4)
    c.ok(got[0] == "error" and got[1] == 8 and "replaced while gcsnapd ran" in got[2],
         "a replaced catalog stops the storing too", got)
    a.close()


SUITES = {"corrupt": suite_corrupt, "second": suite_second, "catalog": suite_catalog}

if __name__ == "__main__":
    sys.exit(L.main("store_test.py", SUITES, Env))
