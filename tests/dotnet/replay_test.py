#!/usr/bin/env python3
"""replay_test.py - gcsnap-agent --source dotnet against recorded heap walks,
played by diag.py serve: no .NET needed.

usage: replay_test.py SUITE BIN_DIR FIXTURES_DIR WORK_DIR

FIXTURES_DIR is tests/fixtures/nettrace (see its README.md). Suites:
replay (the streams of Heap on .NET 10 and .NET 8: strict validation,
everything `Heap --expect` says, the section's name, the whole walk read
and nothing lost, the same bytes twice with one --clock, the requests the
agent makes; a runtime before .NET 6), faults (streams cut, stalled,
refused, closed, corrupted at each part of their framing, a malformed
process description, and real streams whose runtime dropped events: exit
1, the reason on stderr, no file left), connect (no socket, nobody
listening, a peer that hangs up, answers junk or nothing; dotnet:PID found
through the process's TMPDIR). sweep (not run by ctest: each 397th byte of
the .NET 10 stream corrupted in turn, every capture either refused or a
dump that validates) takes about 20 s.
Exit 0 pass, 1 fail, 77 skipped (gcsnap-agent or gcsnap not built).
"""
import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import diag        # noqa: E402  (.info files, the framing of a stream)
import heapcheck   # noqa: E402

SKIP = 77
CLOCK = "0x5eed"
suite, BIN, FIXTURES, WORK = sys.argv[1:5]
DIAG = os.path.join(HERE, "diag.py")
procs = []
sock_dir = None        # where the sockets go when WORK's path is too long for one


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def fixture(name):
    return os.path.join(FIXTURES, name)


def trace_bytes(name):
    opener = gzip.open if name.endswith(".gz") else open
    with opener(fixture(name), "rb") as f:
        return f.read()


def info_path(trace):
    """The ProcessInfo2 payload recorded beside a trace: X.nettrace.info of
    X.nettrace and of X.nettrace.gz."""
    return fixture(re.sub(r"\.gz$", "", trace) + ".info")


def info_of(trace):
    with open(info_path(trace), "rb") as f:
        return diag.parse_info(f.read())


def sock_path(name):
    global sock_dir
    path = os.path.join(WORK, name + ".sock")
    if len(path) < 100:                  # sun_path holds 108 bytes
        return path
    if sock_dir is None:
        sock_dir = tempfile.mkdtemp(prefix="gs-replay-")
    return os.path.join(sock_dir, name + ".sock")


class Server:
    """diag.py serve on a socket of its own, playing a fixture."""

    def __init__(self, name, trace, *faults, info=True, sock=None):
        self.sock = sock or sock_path(name)
        args = [sys.executable, DIAG, "serve", "--socket", self.sock, "--trace", fixture(trace)]
        if info:
            args += ["--info", info_path(trace)]
        self.p = subprocess.Popen(args + list(faults), stdout=subprocess.PIPE, text=True,
                                  stderr=open(os.path.join(WORK, name + ".serve.log"), "w"))
        procs.append(self.p)
        line = self.p.stdout.readline().strip()
        if line != "listening " + self.sock:
            fail("diag.py serve %s: %r instead of 'listening %s'" % (name, line, self.sock))
        self.spec = "dotnet:" + self.sock

    def stop(self):
        """Ends the server with SIGTERM: (its exit status, the lines it logged)."""
        self.p.send_signal(signal.SIGTERM)
        out = self.p.communicate(timeout=20)[0]
        return self.p.returncode, out.splitlines()


def agent(*args, timeout=90):
    try:
        return subprocess.run([os.path.join(BIN, "gcsnap-agent")] + list(args), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        fail("gcsnap-agent %s: still running after %d s" % (" ".join(args), timeout))


def capture(spec, name, *extra, timeout=90):
    """Captures into a folder of its own: (result, output path, seconds)."""
    folder = os.path.join(WORK, name)
    os.makedirs(folder)
    out = os.path.join(folder, name + ".gclog")
    t0 = time.time()
    r = agent("--source", spec, "--out", out, *extra, timeout=timeout)
    return r, out, time.time() - t0


def refused(r, out, wants, what):
    """The capture failed with exit 1, said each of wants, and left nothing."""
    left = os.listdir(os.path.dirname(out))
    err = r.stderr.strip()
    check(r.returncode == 1 and all(w in err for w in wants) and not left,
          "%s: exit 1 (%d), %s, no file left (%s)" %
          (what, r.returncode, " and ".join(repr(w) for w in wants), left or err))
    return err


def validate(path):
    r = subprocess.run([os.path.join(BIN, "gcsnap"), "validate", "--strict", path],
                       capture_output=True, text=True)
    check(r.returncode == 0 and "(0 warnings)" in r.stdout, "%s validates strictly: %s" %
          (os.path.basename(path), (r.stdout + r.stderr).strip()))


def section_of(path):
    """(name, timestamp) of the dump's first section."""
    with open(path, encoding="utf-8") as f:
        first = f.readline().rstrip("\n").split(" ")
    return " ".join(first[2:-1]), first[-1]


def same_files(a, b):
    def read(p):
        with open(p, "rb") as f:
            return f.read()
    return read(a) == read(b) and read(a + ".gens.json") == read(b + ".gens.json")


def log_sessions(lines):
    """{session: [its log lines]} of diag.py serve's log."""
    by = {}
    for line in lines:
        m = re.search(r"session=([0-9a-f]+)", line)
        if m:
            by.setdefault(m.group(1), []).append(line)
    return by


# ---- replay --------------------------------------------------------------------

def test_replay():
    with open(fixture("heap-net10.expect.json")) as f:
        expect = json.load(f)
    for stem, major in (("heap-net10", "10.0."), ("heap-net8", "8.0.")):
        trace = stem + ".nettrace"
        size = len(trace_bytes(trace))
        info = info_of(trace)
        srv = Server(stem, trace)
        r, out, _ = capture(srv.spec, stem, "--json", "--clock", CLOCK)
        check(r.returncode == 0, "%s: the capture succeeds (%s)" % (stem, r.stderr.strip()))
        validate(out)
        problems = heapcheck.check(out, expect)
        check(not problems, "%s: all that Heap --expect says is there (%s)" % (stem, problems))
        stats = json.loads(r.stdout)
        check(stats["lost_events"] == 0, "%s: no event lost (%d)" % (stem, stats["lost_events"]))
        ends = [start for _, start, _, _ in diag.blocks(trace_bytes(trace))] + [size]
        check(size - 4096 <= stats["stream_bytes"] <= size and stats["stream_bytes"] in ends,
              "%s: the stream read to the end of a block near its end (%d of %d bytes)"
              % (stem, stats["stream_bytes"], size))
        name, stamp = section_of(out)
        want = "Heap (.NET %s)" % info["version"]
        check(name == want and info["version"].startswith(major),
              "%s: the section is %r (%r)" % (stem, want, name))
        check(int(stamp, 16) == int(CLOCK, 16), "%s: stamped with --clock %s (%s)" % (stem, CLOCK, stamp))
        again, out2, _ = capture(srv.spec, stem + "-again", "--clock", CLOCK)
        check(again.returncode == 0 and same_files(out, out2),
              "%s: a second capture with the same --clock gives the same bytes" % stem)
        knob, _, _ = capture(srv.spec + ",buffer-mb=64,timeout=5", stem + "-knobs")
        check(knob.returncode == 0, "%s: with buffer-mb=64,timeout=5 (%s)" % (stem, knob.stderr.strip()))
        rc, log = srv.stop()
        check(rc == 0 and not os.path.lexists(srv.sock),
              "diag.py serve exits 0 on SIGTERM and removes its socket (exit %d)" % rc)
        check(log.count("process-info2") == 3, "%s: ProcessInfo2 on each capture" % stem)
        collects = [line for line in log if line.startswith("collect ")]
        check(len(collects) == 3 and all(
            "format=1 rundown=0 providers=1 provider=Microsoft-Windows-DotNETRuntime "
            "keywords=0x1d80001 level=5 filter=" in line for line in collects),
            "%s: CollectTracing2: NetTrace, no rundown, the runtime provider, keywords "
            "0x1d80001, level 5 (%s)" % (stem, collects))
        check(" buffer-mb=64 " in collects[-1], "%s: buffer-mb=64 asked for (%s)" % (stem, collects[-1]))
        sessions = log_sessions(log)
        check(len(sessions) == 3 and all(lines[1:] == ["stop session=" + s, "end session=%s stopped" % s]
                                         for s, lines in sessions.items()),
              "%s: each session stopped by its ID, then its connection closed (%s)" % (stem, sessions))
    # Without the recorded description: diag.py's own, which names the section.
    srv = Server("made-up", "heap-net10.nettrace", info=False)
    r, out, _ = capture(srv.spec, "made-up")
    check(r.returncode == 0 and section_of(out)[0] == "Heap (.NET 10.0.0)",
          "a made-up ProcessInfo2 names the section (%s)" % (section_of(out)[0] if r.returncode == 0
                                                            else r.stderr.strip()))
    srv.stop()
    # A runtime before .NET 6 knows ProcessInfo only: the section is named
    # after the command's first word.
    srv = Server("before-net6", "heap-net10.nettrace", "--before-net6")
    r, out, _ = capture(srv.spec, "before-net6")
    log = srv.stop()[1]
    check(r.returncode == 0 and section_of(out)[0] == "Heap (.NET)"
          and log[:2] == ["process-info2 refused", "process-info"],
          "ProcessInfo2 refused: ProcessInfo, the section named after the command (%s, %s)"
          % (section_of(out)[0] if r.returncode == 0 else r.stderr.strip(), log[:2]))


# ---- faults --------------------------------------------------------------------

def shortest_whole(trace, size):
    """The fewest bytes of the stream that hold its walk whole (bisection):
    the agent reads past the walk's end only to count what was dropped."""
    lo, hi = 0, size
    while lo < hi:
        mid = (lo + hi) // 2
        srv = Server("bisect-%d" % mid, trace, "--truncate", str(mid))
        r, _, _ = capture(srv.spec, "bisect-%d" % mid)
        srv.stop()
        if r.returncode == 0:
            hi = mid
        else:
            lo = mid + 1
    return lo


def test_faults():
    trace = "heap-net10.nettrace"
    data = trace_bytes(trace)
    size = len(data)
    srv = Server("clean", trace)
    r, ref, _ = capture(srv.spec, "clean", "--json", "--clock", CLOCK)
    srv.stop()
    check(r.returncode == 0, "the stream as recorded is captured (%s)" % r.stderr.strip())
    check(json.loads(r.stdout)["stream_bytes"] == size, "the agent read the stream to its end")
    walk_end = shortest_whole(trace, size)

    ended = "the event stream ended before the heap walk did"
    for n in (0, 19, 2000, size // 2, walk_end - 1):
        srv = Server("cut-%d" % n, trace, "--truncate", str(n))
        r, out, _ = capture(srv.spec, "cut-%d" % n)
        refused(r, out, [ended], "the stream cut after %d of %d bytes" % (n, size))
        srv.stop()
    srv = Server("cut-end", trace, "--truncate", str(walk_end))
    r, out, _ = capture(srv.spec, "cut-end", "--clock", CLOCK)
    check(r.returncode == 0 and same_files(ref, out),
          "the stream cut right after the walk's block (%d bytes): the same capture" % walk_end)
    srv.stop()

    short = os.path.join(WORK, "short.info")
    with open(info_path(trace), "rb") as src, open(short, "wb") as dst:
        dst.write(src.read()[:60])
    srv = Server("short-info", trace, "--info", short, info=False)
    r, out, _ = capture(srv.spec, "short-info")
    refused(r, out, [srv.sock, "a malformed process information reply"],
            "a ProcessInfo2 reply cut inside its command line")
    srv.stop()

    srv = Server("closed", trace, "--close-after-reply")
    r, out, _ = capture(srv.spec, "closed")
    refused(r, out, [ended], "the connection closed right after the session's reply")
    srv.stop()

    for hresult in ("80131384", "80004005"):
        srv = Server("refused-" + hresult, trace, "--error-hresult", hresult)
        r, out, _ = capture(srv.spec, "refused-" + hresult)
        refused(r, out, [srv.sock, "refused the command (HRESULT 0x%s)" % hresult],
                "the session refused with HRESULT 0x%s" % hresult)
        srv.stop()

    srv = Server("stall", trace, "--stall-after", str(size // 2))
    r, out, took = capture(srv.spec + ",timeout=2", "stall", timeout=30)
    refused(r, out, ["sent nothing for 2 s", "timeout=S"], "the stream stalls after %d bytes, "
            "timeout=2" % (size // 2))
    check(took < 10, "the stalled capture gave up in %.1f s (timeout=2)" % took)
    rc, log = srv.stop()
    sessions = log_sessions(log)
    check([lines[1:] for lines in sessions.values()] == [["stop session=" + s, "end session=%s stopped" % s]
                                                         for s in sessions],
          "the stalled session is stopped all the same (%s)" % log)

    # An agent ended by SIGTERM mid-capture removes its temporary file.
    srv = Server("term", trace, "--stall-after", str(size // 2))
    folder = os.path.join(WORK, "term")
    os.makedirs(folder)
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", srv.spec, "--out",
                          os.path.join(folder, "term.gclog")], stderr=subprocess.DEVNULL)
    procs.append(a)
    t0 = time.time()
    while not os.listdir(folder) and a.poll() is None and time.time() - t0 < 20:
        time.sleep(0.05)
    during = os.listdir(folder)
    time.sleep(0.5)                      # well into the stalled stream
    a.terminate()
    a.wait(20)
    check(during and not os.listdir(folder), "an agent ended by SIGTERM mid-capture removes its "
          "temporary file (%s, then %s)" % (during, os.listdir(folder)))
    srv.stop()

    # Corruption at each part of the stream's framing; the agent names the byte.
    objs = diag.blocks(data)
    trace_obj = objs[0]
    first_meta = next(o for o in objs if o[0] == "MetadataBlock")
    first_events = next(o for o in objs if o[0] == "EventBlock")
    spots = [(0, "the magic"), (trace_obj[1], "the Trace object's tag"),
             (trace_obj[2] + 32, "the Trace object's pointer size"),
             (first_meta[1], "the first MetadataBlock's tag"),
             (first_events[1] + 16 + len("EventBlock"), "the first EventBlock's size"),
             (first_events[2] + 20, "the first event's header")]
    for off, what in spots:
        name = "garbage-%d" % off
        srv = Server(name, trace, "--garbage-at", str(off))
        r, out, _ = capture(srv.spec, name)
        err = refused(r, out, ["the event stream: byte "], "16 bytes of garbage at %d, %s" % (off, what))
        at = int(re.search(r"byte (\d+)", err).group(1))
        check(off - 8 <= at < off + 24, "the message names byte %d, near the garbage at %d" % (at, off))
        srv.stop()
    closing = objs[-1]
    srv = Server("garbage-after", trace, "--garbage-at", str(closing[2]))
    r, out, _ = capture(srv.spec, "garbage-after", "--clock", CLOCK)
    # The last sequence point counts what was dropped: garbage there may read
    # as a loss (a clean refusal), never as a different heap.
    check(walk_end <= closing[1] and (r.returncode == 0 and same_files(ref, out) or
                                      r.returncode == 1 and "dropped events" in r.stderr and
                                      not os.listdir(os.path.dirname(out))),
          "garbage after the walk (%s at %d): the same capture, or refused as a loss (%s)"
          % (closing[0], closing[2], r.stderr.strip()))
    srv.stop()

    # Real streams that lost events in the runtime's buffer of 1 MB.
    srv = Server("lossy", "alloc-lossy.nettrace.gz")
    r, out, _ = capture(srv.spec, "lossy")
    err = refused(r, out, ["dropped", "buffer-mb="], "alloc-lossy: the runtime dropped events in the walk")
    lost = re.search(r"dropped (\d+) events|(\d+) missing", err)
    lost = int(lost.group(1) or lost.group(2)) if lost else 0
    collect = [line for line in srv.stop()[1] if line.startswith("collect ")][0]
    asked = int(re.search(r"buffer-mb=(\d+)", collect).group(1))
    wanted = int(re.search(r"buffer-mb=(\d+)", err).group(1))
    check(lost > 0 and wanted > asked, "alloc-lossy: says how many were dropped (%d) and a buffer "
          "over the %d MB asked for (%d)" % (lost, asked, wanted))
    srv = Server("tail", "alloc-tail.nettrace.gz")
    r, out, _ = capture(srv.spec, "tail")
    refused(r, out, ["dropped", "buffer-mb="], "alloc-tail: the walk's last events dropped, "
            "no gap in their numbers")
    srv.stop()


# ---- connect -------------------------------------------------------------------

class Peer:
    """A listener that does one thing to each connection: close it, answer
    junk, or say nothing until the end."""

    def __init__(self, name, mode):
        self.sock = sock_path(name)
        self.l = socket.socket(socket.AF_UNIX)
        self.l.bind(self.sock)
        self.l.listen(8)
        self.mode, self.held = mode, []
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while True:
            try:
                c, _ = self.l.accept()
            except OSError:
                return
            if self.mode == "close":
                c.close()
            elif self.mode == "junk":
                try:
                    c.recv(100)
                    c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass
                c.close()
            else:
                self.held.append(c)

    def close(self):
        self.l.close()
        for c in self.held:
            c.close()


def test_connect():
    missing = sock_path("missing")
    r, out, _ = capture("dotnet:" + missing, "missing")
    refused(r, out, [missing, "No such file or directory"], "no socket at the path")

    stale = sock_path("stale")
    s = socket.socket(socket.AF_UNIX)
    s.bind(stale)
    s.close()
    r, out, _ = capture("dotnet:" + stale, "stale")
    refused(r, out, [stale, "Connection refused"], "a socket nobody listens on")

    peer = Peer("hangup", "close")
    r, out, _ = capture("dotnet:" + peer.sock, "hangup")
    err = refused(r, out, [peer.sock], "a peer that closes each connection at once")
    check(any(w in err for w in ("closed the connection", "Broken pipe", "reset")),
          "the reason says the connection was closed (%s)" % err)
    peer.close()

    peer = Peer("junk", "junk")
    r, out, _ = capture("dotnet:" + peer.sock, "junk")
    refused(r, out, [peer.sock, "not a .NET diagnostics reply"], "a peer that answers junk")
    peer.close()

    peer = Peer("silent", "silent")
    r, out, took = capture("dotnet:" + peer.sock, "silent", timeout=60)
    refused(r, out, [peer.sock, "no reply within"], "a peer that never answers")
    check(took < 20, "it gave up after %.1f s" % took)
    peer.close()

    # dotnet:PID: the socket is found in the TMPDIR of that process.
    tmp = os.path.join(WORK, "tmp")
    os.makedirs(tmp)
    r, out, _ = capture("dotnet:%d" % os.getpid(), "no-socket")
    refused(r, out, ["process %d has no diagnostics socket" % os.getpid()],
            "dotnet:PID of a process without a socket")
    holder = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                              stdin=subprocess.PIPE, env=dict(os.environ, TMPDIR=tmp))
    procs.append(holder)
    path = os.path.join(tmp, "dotnet-diagnostic-%d-1234-socket" % holder.pid)
    if len(path) >= 100:
        print("skipped: dotnet:PID through TMPDIR: %s is too long for a socket" % path)
    else:
        srv = Server("by-pid", "heap-net10.nettrace", sock=path)
        r, out, _ = capture("dotnet:%d" % holder.pid, "by-pid")
        check(r.returncode == 0 and os.path.exists(out),
              "dotnet:%d finds %s under its TMPDIR (%s)" % (holder.pid, path, r.stderr.strip()))
        asked = [line for line in srv.stop()[1] if line.startswith("collect ")]
        mb = int(re.search(r"buffer-mb=(\d+)", asked[0]).group(1)) if asked else 0
        check(mb >= 256, "a buffer sized from the process's memory: %d MB" % mb)
    holder.stdin.close()
    holder.wait(10)


# ---- sweep ---------------------------------------------------------------------

def test_sweep():
    trace = "heap-net10.nettrace"
    size = len(trace_bytes(trace))
    refusals, dumps, bad = 0, 0, []
    for off in range(0, size, 397):
        name = "sweep-%d" % off
        srv = Server(name, trace, "--garbage-at", str(off))
        r, out, _ = capture(srv.spec + ",timeout=2", name, timeout=30)
        srv.stop()
        if r.returncode != 0:
            refused(r, out, ["gcsnap-agent: "], "garbage at %d: refused" % off)
            refusals += 1
            continue
        v = subprocess.run([os.path.join(BIN, "gcsnap"), "validate", out], capture_output=True, text=True)
        if v.returncode != 0:
            bad.append("%d (%s)" % (off, v.stdout.strip().splitlines()[0]))
            continue
        dumps += 1
        shutil.rmtree(os.path.dirname(out))
    check(not bad, "every capture refused (%d) or a dump that validates (%d); not: %s"
          % (refusals, dumps, "; ".join(bad)))


def main():
    for tool in ("gcsnap-agent", "gcsnap"):
        if not os.path.exists(os.path.join(BIN, tool)):
            print("SKIP: %s is not built" % os.path.join(BIN, tool))
            return SKIP
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    try:
        {"replay": test_replay, "faults": test_faults, "connect": test_connect,
         "sweep": test_sweep}[suite]()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        if sock_dir:
            shutil.rmtree(sock_dir, ignore_errors=True)
    return 0


sys.exit(main())
