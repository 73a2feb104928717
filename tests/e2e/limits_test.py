#!/usr/bin/env python3
"""limits_test.py - the collector's stated limits, each pushed past its
edge against a real gcsnapd on loopback (the Limits table of
collector/README.md).

usage: limits_test.py SUITE BIN_DIR WORK_DIR

Suites:
  options   every limit is in gcsnapd --help with its default, is read from
            a config file, and a bad value exits 2 naming the option
  frame     a frame of exactly 4 MiB is taken, one byte more ends the
            session with Error 3 (frame_size)
  snapshot  --max-objects and --max-references: a stream over either fails
            with Error 7 naming the option, recorded failed, no file left;
            a snapshot within both is stored; an object of 4 million
            references, streamed by the agent, is stored and reads back
  sessions  --max-sessions and --max-sessions-per-address: the connection
            over either gets Error 9 naming the limit and is closed, and
            is logged; a place freed is taken again
  timeouts  --hello-timeout and --idle-timeout at about a second: silent or
            half-Hello connections are closed, a silent session is closed,
            a stalled stream fails with "timeout"; agents that answer the
            collector's Ping (the fake and gcsnap-agent) stay connected
  disk      --min-free-bytes above the free space: the capture API answers
            507 disk_full and an agent's own snapshot fails; on a small
            tmpfs, a write that hits ENOSPC or the minimum fails the
            snapshot and removes its file at once (skipped without mount)
  line      gcsnap validate and summary on a line above the reader's
            64 MiB limit: line-too-long with FILE:LINE; an object line
            over it is read, an object over the reference limit refused

Exit status 0 when every check passed, 1 when one failed, 77 (skipped)
when the suite cannot run here.
"""
import glob
import json
import os
import random
import re
import socket
import subprocess
import sys
import time
import zlib

sys.dont_write_bytecode = True        # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L            # noqa: E402
import fake_agent as F         # noqa: E402

E_FRAME_SIZE, E_INVALID, E_STORAGE, E_BUSY, E_TIMEOUT = 3, 7, 8, 9, 12


class Env(L.Env):
    def need_collector(self):
        self.need_gcsnapd()

    def collector(self, *extra, name="gcsnapd"):
        return L.Collector(self.procs, self.gcsnapd, self.work, name=name, extra=extra)


# ---- helpers ----------------------------------------------------------------

def hello_frame(device_id):
    hello = (F.f_uint(1, 1) + F.f_bytes(2, "fake-0.1") + F.f_bytes(3, device_id) +
             F.f_bytes(4, "fake app.exe") + F.f_bytes(5, "x86_64") + F.f_uint(6, 8) +
             F.f_uint(7, 1000))
    return F.frame(F.envelope(F.HELLO, hello))


class Raw(F.FakeAgent):
    """A connection that says nothing until told (no Hello of its own)."""

    def __init__(self, addr, timeout=20, source=None):      # noqa: D401 - no Hello here
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.buf = b""


def error_of(answer):
    """(code, message) of an ("error", code, message) answer, else (None, '')."""
    return (answer[1], answer[2]) if answer[0] == "error" else (None, "")


def hello_answer(addr, device_id, source=None):
    """Says Hello; ("welcome", agent) or the answer tuple (error or closed)."""
    r = Raw(addr, source=source)
    r.device_id = device_id
    r.send(hello_frame(device_id))
    kind, body = r.recv()
    if kind == F.WELCOME:
        return ("welcome", r)
    r.close()
    if kind == F.ERROR:
        f = F.fields(body)
        return ("error", f.get(1, [0])[0], f.get(2, [b""])[0].decode(errors="replace"))
    return ("closed",)


def timed_answer(agent):
    """The collector's next Error (or end of stream) and the seconds it took."""
    t0 = time.monotonic()
    a = agent.answer()
    return a, time.monotonic() - t0


def pump(agent, seconds):
    """Reads for seconds, answering Ping; the number of Pings, or -1 when
    the collector ended the session."""
    agent.sock.settimeout(0.2)
    deadline, pings = time.monotonic() + seconds, 0
    while time.monotonic() < deadline:
        try:
            chunk = agent.sock.recv(65536)
        except socket.timeout:
            continue
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            return -1
        agent.buf += chunk
        while agent.buf:
            try:
                n, pos = F.read_varint(agent.buf, 0)
            except IndexError:
                break
            if len(agent.buf) < pos + n:
                break
            env, agent.buf = agent.buf[pos:pos + n], agent.buf[pos + n:]
            (kind, values), = F.fields(env).items()
            if kind == F.PING:
                f = F.fields(values[0])
                if not f.get(2, [0])[0]:
                    pings += 1
                    agent.send(F.frame(F.envelope(F.PING, F.f_uint(1, f.get(1, [0])[0]) + F.f_uint(2, 1))))
    agent.sock.settimeout(20)
    return pings


def push(agent, heap, snapshot_id=1):
    """Streams heap as a snapshot of the agent's own (request 0); the answer."""
    agent.stream(0, heap, snapshot_id=snapshot_id)
    return agent.answer()


def tmp_files(col):
    return glob.glob(os.path.join(col.store, "snapshots", "*", "*.tmp"))


def check_failed_only(env, col, dev, words, what):
    """One snapshot of dev, failed, its reason matching words; no file."""
    c = env.c
    snaps = col.snapshots("?device=" + dev)
    c.equal([s["status"] for s in snaps], ["failed"], "%s: one snapshot, failed" % what)
    reason = snaps[0].get("reason") or "" if snaps else ""
    c.ok(re.search(words, reason), "%s: the failed snapshot's reason says why" % what, reason)
    c.equal(tmp_files(col), [], "%s: no temporary file is left" % what)
    files = glob.glob(os.path.join(col.store, "snapshots", "*", "*.gclog.zst"))
    c.ok(not any(os.path.basename(os.path.dirname(p)) == dev for p in files),
         "%s: no snapshot file of %s" % (what, dev), files)
    return reason


def logged(col, before, *needles):
    text = col.log_text()[before:]
    return any(all(n in line for n in needles) for line in text.splitlines())


# ---- suites -----------------------------------------------------------------

LIMIT_OPTIONS = {
    "--max-sessions": "1024", "--max-sessions-per-address": "256", "--hello-timeout": "10s",
    "--idle-timeout": "90s", "--max-objects": "50000000", "--max-references": "200000000",
    "--max-object-references": "33554432",
    "--max-sections": "1000", "--max-validator-memory": "512M", "--min-free-bytes": "256M",
}


def suite_options(env):
    env.need_collector()
    c = env.c
    r = L.run([env.gcsnapd, "--help"])
    c.equal(r.returncode, 0, "gcsnapd --help exits 0")
    for opt, default in LIMIT_OPTIONS.items():
        block = r.stdout[r.stdout.find("  " + opt + " "):]
        c.ok(opt + " " in r.stdout and "default " + default in block.split("\n  --")[0],
             "--help shows %s with its default %s" % (opt, default), r.stdout)
    c.ok("4 MiB" in r.stdout, "--help states the frame limit")
    for opt, bad in (("--max-sessions", "0"), ("--max-sessions-per-address", "x"),
                     ("--hello-timeout", "soon"), ("--idle-timeout", "10ms"),
                     ("--max-objects", "-1"), ("--max-references", "1e9"), ("--max-sections", "many"),
                     ("--min-free-bytes", "lots"), ("--max-object-references", "0"),
                     ("--max-object-references", "4294967296")):
        r = L.run([env.gcsnapd, opt, bad, "--store", env.path("never")])
        c.ok(r.returncode == 2 and opt + " must be" in r.stderr and "'%s'" % bad in r.stderr,
             "%s %s: exit 2 naming the option and the value" % (opt, bad), (r.returncode, r.stderr))
    # From a config file, as the long names: the limit applies.
    conf = env.path("limits.conf")
    port = L.free_port()
    with open(conf, "w") as f:
        f.write("listen = 127.0.0.1:%d\nhttp = 127.0.0.1:%d\nstore = %s\n"
                "max-sessions-per-address = 1\nhello-timeout = 700ms\n"
                % (port, L.free_port(), env.path("conf-store")))
    p = env.procs.start([env.gcsnapd, "--config", conf], log=env.path("conf.log"))
    addr = "127.0.0.1:%d" % port
    L.wait_until("gcsnapd from the config file", lambda: p.poll() is not None or
                 "listening for agents" in open(env.path("conf.log"), errors="replace").read())
    first = hello_answer(addr, "conf-1")
    c.equal(first[0], "welcome", "config file: the first session is taken")
    code, msg = error_of(hello_answer(addr, "conf-2"))
    c.equal(code, E_BUSY, "config file: max-sessions-per-address = 1 refuses the second")
    r = Raw(addr, source="127.0.0.2")
    code, msg = error_of(r.answer())
    c.ok(code == E_TIMEOUT and "700ms" in msg, "config file: hello-timeout = 700ms applies", msg)
    r.close()
    if first[0] == "welcome":
        first[1].close()
    c.equal(env.procs.stop(p), 0, "gcsnapd from the config file stops cleanly")


def suite_frame(env):
    env.need_collector()
    c = env.c
    col = env.collector()
    a = F.FakeAgent(col.agent_addr, "frame-edge")
    col.wait_connected("frame-edge")
    # A Ping padded with an unknown field to exactly the maximum frame: the
    # collector skips the field and answers.
    pad = F.MAX_FRAME - len(F.f_uint(1, 7)) - 1 - 4 - 1 - 4
    ping = F.f_uint(1, 7) + F.f_bytes(15, b"\0" * pad)
    env_bytes = F.envelope(F.PING, ping)
    c.equal(len(env_bytes), F.MAX_FRAME, "the padded Ping is exactly the maximum frame")
    a.send(F.frame(env_bytes))
    kind, body = a.recv()
    c.ok(kind == F.PING and F.fields(body).get(2, [0])[0] == 1,
         "a frame of exactly 4 MiB is taken (answered with a Ping reply)", (kind, body))
    # One byte more is refused before it is read.
    ping = F.f_uint(1, 8) + F.f_bytes(15, b"\0" * (pad + 1))
    before = len(col.log_text())
    a.send(F.frame(F.envelope(F.PING, ping))[:1024])
    code, msg = error_of(a.answer())
    c.equal(code, E_FRAME_SIZE, "a frame of 4 MiB + 1 byte gets Error 3 (frame_size)")
    c.ok("4194305" in msg and "4194304" in msg, "the Error names the size and the maximum", msg)
    time.sleep(0.2)
    c.ok(logged(col, before, "frame-edge", "4194305"), "the oversize frame is logged",
         col.log_text()[before:])
    a.close()
    col.stop()


class Sections(F.Heap):
    """A heap of n sections, each the small heap of F.Heap."""

    def __init__(self, n, objects=5):
        super().__init__(objects=objects)
        self.n = n

    def data_messages(self, batch=100):
        return super().data_messages(batch) * self.n

    def text(self):
        return super().text() * self.n

    def end(self, seq, crc_xor=0):
        text = self.text()
        n = self.n
        refs = sum(len(o[3]) for o in self.objects) * n
        return (F.f_uint(1, seq) + F.f_uint(2, n) + F.f_uint(3, len(self.types) * n) +
                F.f_uint(4, len(self.objects) * n) + F.f_uint(5, refs) + F.f_uint(6, len(self.roots) * n) +
                F.f_uint(7, len(text)) + F.f_uint(8, (F.zlib.crc32(text) ^ crc_xor) & 0xFFFFFFFF))


def suite_snapshot(env):
    env.need_collector()
    c = env.c
    col = env.collector("--max-objects", "100", "--max-references", "40", "--max-sections", "3",
                        "--max-object-references", "5")
    # Within both limits: stored.
    small = F.Heap(objects=30)
    a = F.FakeAgent(col.agent_addr, "lim-small")
    col.wait_connected("lim-small")
    c.equal(push(a, small)[0], "ack", "a snapshot within the limits is stored")
    c.equal(push(a, Sections(3), snapshot_id=2)[0], "ack", "a snapshot of exactly 3 sections is stored")
    a.close()

    no_refs = F.Heap(objects=300)
    no_refs.objects = [(o[0], o[1], o[2], []) for o in no_refs.objects]
    wide = F.Heap(objects=10)
    wide.objects = [(o[0], o[1], o[2], []) for o in wide.objects]
    wide.objects[0] = wide.objects[0][:3] + ([o[0] for o in wide.objects[1:7]],)
    for dev, heap, words in (("lim-objects", no_refs, r"more than 100 objects.*--max-objects"),
                             ("lim-object-refs", wide,
                              r"has more than 5 references.*--max-object-references"),
                             ("lim-refs", F.Heap(objects=60), r"more than 40 references.*--max-references"),
                             ("lim-sections", Sections(4), r"more than 3 sections.*--max-sections")):
        refs = sum(len(o[3]) for o in heap.objects)
        widest = max(len(o[3]) for o in heap.objects)
        c.ok(refs > 40 or len(heap.objects) > 100 or getattr(heap, "n", 1) > 3 or widest > 5,
             "%s: the heap is over a limit" % dev)
        before = len(col.log_text())
        a = F.FakeAgent(col.agent_addr, dev)
        col.wait_connected(dev)
        # Through the capture API, so that the request's failure is seen too.
        cap = env.procs.start([env.gcsnap, "capture", dev, "--wait", "--json", "--collector", col.url],
                              log=env.path("capture-%s.log" % dev))
        try:
            a.stream(a.wait_capture(), heap)
            answer = a.answer()
        except OSError as e:
            answer = ("closed", str(e))
        cap.wait(timeout=30)
        code, msg = error_of(answer)
        c.equal(code, E_INVALID, "%s: the agent gets Error 7" % dev)
        c.ok(re.search(words, msg), "%s: the Error names the limit" % dev, msg)
        c.equal(cap.returncode, 1, "%s: gcsnap capture --wait exits 1" % dev)
        with open(env.path("capture-%s.log" % dev), errors="replace") as f:
            out = f.read()
        c.ok("capture_failed" in out and re.search(words, out), "%s: the API says why" % dev, out)
        check_failed_only(env, col, dev, words, dev)
        time.sleep(0.1)
        c.ok(logged(col, before, dev, "--max-"), "%s: the collector logs it" % dev,
             col.log_text()[before:])
        a.close()
    complete = {s["device_id"] for s in col.snapshots("?status=complete")}
    c.equal(complete, {"lim-small"}, "only the snapshot within the limits is complete")
    col.stop()
    # References to objects never sent cost the validator up to 32 bytes
    # each: counted against the session (--max-validator-memory).
    col = env.collector("--max-validator-memory", "4M", name="gcsnapd-validator")
    dangling = F.Heap(objects=200000)
    dangling.objects = [(o[0], o[1], o[2], [0x7000000000 + 8 * i]) for i, o in enumerate(dangling.objects)]
    a = F.FakeAgent(col.agent_addr, "lim-validator", timeout=60)
    code, msg = error_of(push(a, dangling))
    c.ok(code == E_INVALID and "--max-validator-memory" in msg,
         "200,000 dangling references past 4M of validator memory get Error 7 naming the limit", msg)
    a.close()
    a = F.FakeAgent(col.agent_addr, "lim-validator-ok")
    c.equal(push(a, F.Heap(objects=1000))[0], "ack", "a snapshot within it is stored")
    a.close()
    # An array of 4 million references, above the 3,947,576 the collector
    # once took (its line had to fit 64 MiB). Its references (32 MB while
    # it arrives) count against the same budget: refused past 4M; with the
    # default, the real agent streams it, the collector stores it, and the
    # stored file reads back whole.
    wide = env.path("wide.gclog")
    with open(wide, "wb") as f:
        f.write(b"a 2 wide.exe 1\nt 1 T\nt 2 T[]\no 10 1 8\no 20 2 8" + b" 10" * 4000000 +
                b"\nr 20 1 0\nc wide.exe 2\n")
    def send_wide(addr):
        return L.run([env.agent, "--source", "file:" + wide, "--connect", addr, "--device-id",
                      "lim-wide", "--once"])
    r = send_wide(col.agent_addr)
    c.ok(r.returncode != 0 and "(the references of object 20), the collector's limit "
         "(--max-validator-memory)" in r.stderr,
         "an object of 4,000,000 references past 4M of validator memory gets Error 7 naming the limit",
         r.stderr.strip())
    col.stop()
    col = env.collector(name="gcsnapd-wide")
    r = send_wide(col.agent_addr)
    c.equal(r.returncode, 0, "an object of 4,000,000 references is stored: %s" % r.stderr.strip())
    stored = glob.glob(os.path.join(col.store, "snapshots", "lim-wide", "*.gclog.zst"))
    if c.equal(len(stored), 1, "one snapshot file of lim-wide"):
        r = L.run([env.gcsnap, "summary", "--json", stored[0]])
        refs = json.loads(r.stdout).get("references") if r.returncode == 0 else r.stderr
        c.equal(refs, 4000000, "the stored snapshot reads back with its 4,000,000 references")
    col.stop()


def suite_sessions(env):
    env.need_collector()
    c = env.c
    col = env.collector("--max-sessions", "3", "--max-sessions-per-address", "2")
    kept = []
    for i, src in enumerate(("127.0.0.1", "127.0.0.1")):
        r = hello_answer(col.agent_addr, "s-%d" % i, source=src)
        c.equal(r[0], "welcome", "session %d from %s is taken" % (i, src))
        if r[0] == "welcome":
            kept.append(r[1])
    before = len(col.log_text())
    r = hello_answer(col.agent_addr, "s-2", source="127.0.0.1")
    code, msg = error_of(r)
    c.equal(code, E_BUSY, "a third session from 127.0.0.1 gets Error 9 (busy)")
    c.ok("--max-sessions-per-address" in msg, "the Error names the per-address limit", msg)
    r = hello_answer(col.agent_addr, "s-3", source="127.0.0.2")
    c.equal(r[0], "welcome", "a session from another address is taken (3 in all)")
    if r[0] == "welcome":
        kept.append(r[1])
    r = hello_answer(col.agent_addr, "s-4", source="127.0.0.3")
    code, msg = error_of(r)
    c.equal(code, E_BUSY, "a fourth session gets Error 9 (busy)")
    c.ok("--max-sessions)" in msg, "the Error names the collector's limit", msg)
    time.sleep(0.2)
    c.ok(logged(col, before, "127.0.0.1", "--max-sessions-per-address"), "the per-address refusal is logged",
         col.log_text()[before:])
    c.ok(logged(col, before, "127.0.0.3", "--max-sessions)"), "the collector-wide refusal is logged",
         col.log_text()[before:])
    status, body = col.api("/api/devices")
    connected = sorted(d["device_id"] for d in body["devices"] if d.get("connected"))
    c.equal(connected, ["s-0", "s-1", "s-3"], "the refused connections never became devices")
    # A place given back is taken again.
    kept[0].close()
    L.wait_until("s-0 to leave", lambda: not (col.device("s-0") or {}).get("connected"))
    r = hello_answer(col.agent_addr, "s-5", source="127.0.0.1")
    c.equal(r[0], "welcome", "after one leaves, a new session from 127.0.0.1 is taken")
    if r[0] == "welcome":
        kept.append(r[1])
    for k in kept:
        k.close()
    col.stop()


def suite_timeouts(env):
    env.need_collector()
    c = env.c
    col = env.collector("--hello-timeout", "1s", "--idle-timeout", "1500ms")
    # Nothing at all, then half a Hello: closed with Error 12 after ~1 s.
    for what, data in (("silent", b""), ("half-Hello", hello_frame("half")[:10])):
        before = len(col.log_text())
        r = Raw(col.agent_addr)
        if data:
            r.send(data)
        answer, secs = timed_answer(r)
        code, msg = error_of(answer)
        c.equal(code, E_TIMEOUT, "%s connection: Error 12 (timeout)" % what)
        c.ok("no Hello within 1s" in msg, "%s connection: the Error says why" % what, msg)
        c.ok(0.8 <= secs <= 4, "%s connection: closed after about 1 s" % what, "%.2f s" % secs)
        time.sleep(0.1)
        c.ok(logged(col, before, "no Hello within 1s"), "%s connection: logged" % what)
        r.close()

    # An idle agent that answers Ping stays; one that does not is closed.
    a = F.FakeAgent(col.agent_addr, "idle-answers")
    col.wait_connected("idle-answers")
    pings = pump(a, 5)
    c.ok(pings >= 2, "an idle agent is pinged while it waits (%d Pings in 5 s)" % pings)
    c.ok((col.device("idle-answers") or {}).get("connected"),
         "an idle agent that answers Ping is still connected after 5 s (idle timeout 1.5 s)")
    cap = env.procs.start([env.gcsnap, "capture", "idle-answers", "--wait", "--json",
                           "--collector", col.url], log=env.path("capture-idle.log"))
    a.stream(a.wait_capture(), F.Heap())
    c.equal(a.answer()[0], "ack", "the idle agent is then captured")
    cap.wait(timeout=30)
    c.equal(cap.returncode, 0, "gcsnap capture of the idle agent exits 0")
    a.close()

    before = len(col.log_text())
    t0 = time.monotonic()
    deaf = F.FakeAgent(col.agent_addr, "idle-deaf")
    col.wait_connected("idle-deaf")
    answer = deaf.answer()           # skips the Ping without answering it
    secs = time.monotonic() - t0
    code, msg = error_of(answer)
    c.equal(code, E_TIMEOUT, "an agent that does not answer Ping gets Error 12")
    c.ok(1.3 <= secs <= 5, "it is closed after about the idle timeout", "%.2f s" % secs)
    c.ok("timeout" in msg, "the Error says timeout", msg)
    deaf.close()
    L.wait_until("idle-deaf to leave", lambda: not (col.device("idle-deaf") or {}).get("connected"))
    c.ok(logged(col, before, "idle-deaf", "timeout"), "the idle close is logged")

    # A stream that stalls half way: the snapshot fails with "timeout".
    before = len(col.log_text())
    st = F.FakeAgent(col.agent_addr, "stall")
    col.wait_connected("stall")
    cap = env.procs.start([env.gcsnap, "capture", "stall", "--wait", "--json", "--collector", col.url],
                          log=env.path("capture-stall.log"))
    rid = st.wait_capture()
    heap = F.Heap()
    st.send(F.frame(F.envelope(F.SNAPSHOT_BEGIN, F.f_uint(1, rid) + F.f_uint(2, 1) +
                               F.f_bytes(4, "request") + F.f_uint(5, 1000))))
    for seq, (kind, body) in enumerate(heap.data_messages()[:3], 1):
        st.send(F.frame(F.envelope(kind, body(seq))))
    answer, secs = timed_answer(st)
    code, msg = error_of(answer)
    c.equal(code, E_TIMEOUT, "a stalled stream gets Error 12")
    c.ok(1.2 <= secs <= 5, "after about the idle timeout", "%.2f s" % secs)
    cap.wait(timeout=30)
    c.equal(cap.returncode, 1, "the capture of the stalled stream fails")
    check_failed_only(env, col, "stall", r"^timeout", "stalled stream")
    time.sleep(0.1)
    c.ok(logged(col, before, "stall", "timeout"), "the stall is logged")
    st.close()

    # The real agent answers the collector's Ping: it stays connected.
    if os.access(env.agent, os.X_OK):
        env.procs.start([env.agent, "--source", "mock:objects=2000,seed=3", "--connect", col.agent_addr,
                         "--device-id", "real"], log=env.path("agent-real.log"))
        col.wait_connected("real")
        time.sleep(5)
        d = col.device("real") or {}
        c.ok(d.get("connected"), "gcsnap-agent idle for 5 s (idle timeout 1.5 s) is still connected", d)
        r = L.run([env.gcsnap, "capture", "real", "--wait", "--collector", col.url])
        c.equal(r.returncode, 0, "gcsnap-agent is then captured: %s" % r.stderr)
        sessions = col.log_text().count("device real connected")
        c.equal(sessions, 1, "gcsnap-agent kept one session throughout")
    else:
        c.skip("gcsnap-agent is not built: the real agent's keepalive")
    col.stop()


class RandomHeap(F.Heap):
    """Objects whose references are random 64-bit IDs: text zstd cannot
    shrink much, so the file grows about as fast as the stream."""

    def __init__(self, objects, refs_per_object, seed=1):
        super().__init__(objects=0)
        rng = random.Random(seed)
        self.objects = [(0x100000 + i * 0x40, 1, 0x40,
                         [rng.getrandbits(63) for _ in range(refs_per_object)]) for i in range(objects)]
        self.roots = [(0x100000, 1, 0, None)]


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode == 0


def umount(path):
    subprocess.run(["umount", "-l", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def suite_disk(env):
    env.need_collector()
    c = env.c
    # The threshold above any disk: every capture is refused.
    col = env.collector("--min-free-bytes", str(1 << 62), name="full")
    a = F.FakeAgent(col.agent_addr, "disk-1")
    col.wait_connected("disk-1")
    before = len(col.log_text())
    status, body = col.api("/api/devices/disk-1/capture", method="POST")
    c.equal(status, 507, "POST capture with too little free space: HTTP 507")
    c.equal((body or {}).get("error"), "disk_full", "the API's error code is disk_full")
    c.ok("disk full" in (body or {}).get("message", "") and "--min-free-bytes" in body.get("message", ""),
         "the API's message says how much is free and the minimum", body)
    r = L.run([env.gcsnap, "capture", "disk-1", "--wait", "--collector", col.url])
    c.equal(r.returncode, 1, "gcsnap capture exits 1 when the disk is full")
    c.ok("disk_full" in r.stderr and "507" in r.stderr, "gcsnap capture shows 507 disk_full", r.stderr)
    time.sleep(0.1)
    c.ok(logged(col, before, "disk-1", "disk full"), "the refused capture is logged")
    # The agent's own snapshot: received, not written, failed with the reason.
    code, msg = error_of(push(a, F.Heap()))
    c.equal(code, E_STORAGE, "an agent's own snapshot with too little free space gets Error 8")
    c.ok("disk full" in msg, "the Error says disk full", msg)
    check_failed_only(env, col, "disk-1", r"disk full.*--min-free-bytes", "agent snapshot, disk full")
    a.close()
    col.stop()

    # A small filesystem under the snapshots: a real ENOSPC, and the minimum
    # reached half way.
    if os.geteuid() != 0:
        c.skip("not root: the tmpfs checks of ENOSPC and the minimum during a stream")
        return
    for name, size, extra, words in (
            ("enospc", "2m", ("--min-free-bytes", "0"), r"disk full: cannot write.*no space left"),
            ("floor", "6m", ("--min-free-bytes", "3M"), r"disk full.*below the minimum")):
        store = env.path(name + "-store")
        snaps = os.path.join(store, "snapshots")
        if not mount_tmpfs(snaps, size):
            c.skip("cannot mount a tmpfs: %s" % name)
            continue
        try:
            col = env.collector(*extra, name=name)
            big = RandomHeap(objects=12000, refs_per_object=60)
            dev = "disk-" + name
            a = F.FakeAgent(col.agent_addr, dev)
            col.wait_connected(dev)
            before = len(col.log_text())
            code, msg = error_of(push(a, big))
            c.equal(code, E_STORAGE, "%s: the snapshot that does not fit gets Error 8" % name)
            c.ok(re.search(words, msg.lower()), "%s: the Error says why" % name, msg)
            check_failed_only(env, col, dev, words.replace("no space", "[Nn]o space"), name)
            c.ok(logged(col, before, dev, "no longer written", "disk full"),
                 "%s: the collector logs it when the file stops being written" % name,
                 col.log_text()[before:])
            st = os.statvfs(snaps)
            c.ok(st.f_bavail * st.f_frsize > (1 << 20), "%s: the space is given back" % name,
                 st.f_bavail * st.f_frsize)
            # A snapshot that fits is stored afterwards.
            c.equal(push(a, F.Heap(), snapshot_id=2)[0], "ack",
                    "%s: a small snapshot is stored afterwards" % name)
            a.close()
            col.stop()
        finally:
            umount(snaps)


def suite_line(env):
    c = env.c
    if not os.access(env.gcsnap, os.X_OK):
        raise L.Skip("gcsnap is not built")
    limit = 64 << 20
    for name, length, bad in (("under", limit - 64, False), ("over", limit + 64, True)):
        path = env.path("line-%s.gclog" % name)
        head = b"t 2 "
        with open(path, "wb") as f:
            # A type whose name makes the third line length bytes long.
            f.write(b"a 2 long lines 0\nt 1 T\n")
            f.write(head + b"N" * (length - len(head)))
            f.write(b"\no 10 1 8\nr 10 1 0\nc long lines 0\n")
        r = L.run([env.gcsnap, "validate", path], timeout=120)
        if bad:
            c.equal(r.returncode, 1, "validate: a line above 64 MiB makes the file invalid")
            c.ok(re.search(r"line-%s\.gclog:3: error \[line-too-long\]" % name, r.stdout),
                 "validate: FILE:LINE: error [line-too-long]", r.stdout[:500])
            r = L.run([env.gcsnap, "summary", path], timeout=120)
            c.equal(r.returncode, 1, "summary: a line above 64 MiB fails")
            c.ok(re.search(r"line-%s\.gclog:3: error \[line-too-long\]" % name, r.stderr),
                 "summary: FILE:LINE of the long line", r.stderr[:500])
        else:
            c.equal(r.returncode, 0, "validate: a line just under 64 MiB is read: %s" % r.stdout[:300])
        os.remove(path)
    # Object lines have no byte limit: an array of 7.5 million elements
    # (a line of 67.5 MB) is read; one reference more than the reader takes
    # (GS_READER_DEFAULT_MAX_REFS) is refused at its line, unless the global
    # --max-refs raises the limit, which must be a count from 1.
    for name, token, refs, bad in (("array", b" 10000000", 7500000, False),
                                   ("refs", b" 1", (1 << 25) + 1, True)):
        path = env.path("object-%s.gclog" % name)
        with open(path, "wb") as f:
            f.write(b"a 2 long lines 0\nt 1 T\nt 2 T[]\no 10000000 1 8\no 20 2 8")
            f.write(token * refs)
            f.write(b"\nr 20 1 0\nc long lines 0\n")
        r = L.run([env.gcsnap, "validate", path], timeout=120)
        if bad:
            c.equal(r.returncode, 1, "validate: an object over the reference limit makes the file invalid")
            c.ok(re.search(r"object-refs\.gclog:5: error \[too-many-references\]", r.stdout),
                 "validate: FILE:LINE: error [too-many-references]", r.stdout[:500])
            c.ok("object-refs.gclog: note: 'gcsnap --max-refs N COMMAND ...'" in r.stdout,
                 "validate: the note says how to raise the limit", r.stdout[:500])
            r = L.run([env.gcsnap, "--max-refs", str((1 << 25) + 1), "summary", "--json", path],
                      timeout=120)
            c.equal(r.returncode, 0, "summary --max-refs: the object is read: %s" % r.stderr[:300])
            if r.returncode == 0:
                refs = json.loads(r.stdout)["sections"][0]["references"]
                c.equal(refs, (1 << 25) + 1, "summary --max-refs: every reference counted")
            for bad_value in ("0", "x", "4294967296"):
                r = L.run([env.gcsnap, "validate", "--max-refs=" + bad_value, path], timeout=30)
                c.equal(r.returncode, 2, "--max-refs=%s is a usage error" % bad_value)
                c.ok("--max-refs needs a number from 1 to" in r.stderr, "--max-refs: says why",
                     r.stderr[:300])
            # A command that reads no heap file refuses it rather than ignore it.
            r = L.run([env.gcsnap, "--max-refs", "100", "upload", path], timeout=30)
            c.ok(r.returncode == 2 and "--max-refs does not apply to 'upload'" in r.stderr
                 and "gcsnapd --max-object-references" in r.stderr,
                 "upload --max-refs: refused, naming the collector's limit", r.stderr[:300])
            wide_chain(env, path, (1 << 25) + 1)
        else:
            c.equal(r.returncode, 0, "validate: an object line of 67.5 MB is read: %s" % r.stdout[:300])
        os.remove(path)


def wide_chain(env, path, refs):
    """An object of refs references, above the default limit, from the agent
    through a collector told to take it, to the analyses of the stored file."""
    c = env.c
    if not os.access(env.agent, os.X_OK):
        c.skip("gcsnap-agent is not built: the limit along the chain")
        return
    r = L.run([env.agent, "--source", "file:" + path, "--out", env.path("wide-out.gclog")], timeout=120)
    c.ok(r.returncode == 1 and "[too-many-references]; --max-refs N takes more" in r.stderr
         and not os.path.exists(env.path("wide-out.gclog")),
         "agent: the object is refused by default, naming --max-refs", r.stderr.strip())
    col = env.collector("--max-object-references", str(refs), name="gcsnapd-object-refs")
    r = L.run([env.agent, "--source", "file:" + path, "--connect", col.agent_addr, "--device-id",
               "lim-object-refs", "--once", "--max-refs", str(refs)], timeout=120)
    c.equal(r.returncode, 0, "agent --max-refs: streamed and stored: %s" % r.stderr.strip())
    stored = glob.glob(os.path.join(col.store, "snapshots", "lim-object-refs", "*.gclog.zst"))
    col.stop()
    if not c.equal(len(stored), 1, "one snapshot file of lim-object-refs"):
        return
    r = L.run([env.gcsnap, "--max-refs", str(refs), "summary", "--json", stored[0]], timeout=120)
    got = json.loads(r.stdout).get("references") if r.returncode == 0 else r.stderr
    c.equal(got, refs, "the stored snapshot reads back whole with the same limit")
    r = L.run([env.gcsnap, "summary", stored[0]], timeout=120)
    c.ok(r.returncode == 1 and "[too-many-references]" in r.stderr,
         "without it, the analyses refuse the object", r.stderr[:300])


PREAUTH_MAX = 4096


def padded_hello(device_id, size):
    """A Hello envelope of exactly size bytes (the application name padded)."""
    def env(n):
        return F.envelope(F.HELLO, F.f_uint(1, 1) + F.f_bytes(2, "fake-0.1") + F.f_bytes(3, device_id) +
                          F.f_bytes(4, "a" * n) + F.f_bytes(5, "x86_64") + F.f_uint(6, 8) + F.f_uint(7, 1000))
    n = size - len(env(0))
    while len(env(n)) > size:
        n -= 1
    return env(n)


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def suite_preauth(env):
    env.need_collector()
    c = env.c
    col = env.collector()
    # Before Welcome only a frame the size of a Hello is taken.
    edge = padded_hello("pre-edge", PREAUTH_MAX)
    c.equal(len(edge), PREAUTH_MAX, "the padded Hello is exactly the limit before Welcome")
    r = Raw(col.agent_addr)
    r.send(F.frame(edge))
    c.equal(r.recv()[0], F.WELCOME, "a Hello of exactly %d bytes is welcomed" % PREAUTH_MAX)
    r.close()
    for size, what in ((PREAUTH_MAX + 1, "a Hello one byte above"), (F.MAX_FRAME, "a 4 MiB frame")):
        r = Raw(col.agent_addr)
        r.send(F.frame(padded_hello("pre-big", size))[:1024])
        code, msg = error_of(r.answer())
        c.ok(code == E_FRAME_SIZE and "before Welcome" in msg and str(PREAUTH_MAX) in msg,
             "%s before Welcome gets Error 3 at once, naming the limit" % what, (code, msg))
        r.close()
    # 100 connections that announce 4 MiB frames and send 1 MiB each: none
    # is buffered (it once cost 4 MiB each, 400 MB in all).
    time.sleep(0.3)
    before = rss_kb(col.proc.pid)
    conns = []
    for i in range(100):
        r = Raw(col.agent_addr)
        conns.append(r)
        try:
            r.send(F.varint(F.MAX_FRAME) + b"\0" * (1 << 20))
        except OSError:
            pass                  # refused while sending: what we want
    time.sleep(0.5)
    grown = rss_kb(col.proc.pid) - before
    L.log("100 connections before Hello: collector RSS +%d KB" % grown)
    c.ok(grown < 20 * 1024, "100 connections before Hello add %d KB to the collector, under 20 MB" % grown)
    for r in conns:
        r.close()
    a = F.FakeAgent(col.agent_addr, "pre-after")
    heap = F.Heap(objects=50)
    a.stream(0, heap)
    c.equal(a.answer()[0], "ack", "after Welcome, frames of any size up to 4 MiB are taken again")
    a.close()
    col.stop()


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def suite_sections(env):
    """Many tiny sections compress to almost nothing: the summary goes by the
    work, not the file's size, so it is made in a child, not in gcsnapd."""
    env.need_collector()
    c = env.c
    col = env.collector("--max-sections", "0")
    n = 3000
    heap = Sections(n, objects=2)
    a = F.FakeAgent(col.agent_addr, "many-sections", timeout=120)
    time.sleep(0.3)
    before = hwm_kb(col.proc.pid)
    got = push(a, heap)
    grown = hwm_kb(col.proc.pid) - before
    a.close()
    c.equal(got[0], "ack", "a snapshot of %d sections is stored" % n)
    if got[0] == "ack":
        row = col.api("/api/snapshots/%d" % got[1])[1]
        summary = row["summary"]
        c.equal((row["sections"], len(summary["sections"]), summary.get("sections_omitted"),
                 row["file_bytes"] < 64 * 1024), (n, 1000, n - 1000, True),
                "its summary lists the first 1000 sections and counts the others, and its file is small")
    L.log("%d sections: gcsnapd's peak memory grew by %d KB while storing and summarizing" % (n, grown))
    if os.environ.get("GS_SANITIZED"):
        c.skip("gcsnapd's peak memory (a sanitizer's allocator)")
    else:
        c.ok(grown < 50 * 1024, "gcsnapd's peak memory grows by %d KB, under 50 MB" % grown)
    col.stop()


SUITES = {"sections": suite_sections, "options": suite_options, "frame": suite_frame, "snapshot": suite_snapshot, "sessions": suite_sessions,
          "timeouts": suite_timeouts, "disk": suite_disk, "line": suite_line, "preauth": suite_preauth}


if __name__ == "__main__":
    sys.exit(L.main("limits_test.py", SUITES, Env))
