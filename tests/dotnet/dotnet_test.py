#!/usr/bin/env python3
"""dotnet_test.py - gcsnap-agent --source dotnet on real .NET programs.

usage: dotnet_test.py SUITE BIN_DIR APPS_DIR WORK_DIR

APPS_DIR holds the programs of tests/dotnet/apps as the build makes them:
net10/NAME.dll (run with dotnet) and net8/NAME (self-contained .NET 8).
Suites: net10, net8 (the Heap program's heap exactly: its types, references,
every root kind, static field names, a pinned large array; validated
strictly; streamed to gcsnapd too), small_buffer (a buffer too small: the
capture fails, says which buffer-mb to use and leaves nothing; the program
runs on and a capture with that size takes everything), repeat (several
captures of one process, each complete), list (--list and --list --json),
oracle (dotnet-gcdump, installed from NuGet into BIN_DIR/../dotnet-tools, collects the same
program: the same objects per type), trigger (--trigger heap-growth fires
when the program's heap grows, read from its own collections), reverse
(dotnet:listen=PATH with a program started with DOTNET_DiagnosticPorts),
killed (the program killed during a capture asked through the collector).
Exit 0 pass, 1 fail, 77 skipped (no dotnet, the programs not built, or no
dotnet-gcdump for the oracle).
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import heapcheck

SKIP = 77
suite, BIN, APPS, WORK = sys.argv[1:5]
procs = []


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


def skip(why):
    print("SKIP: " + why)
    sys.exit(SKIP)


class App:
    """A test program, driven by lines on stdin ("gc", "quit")."""

    def __init__(self, name, *args, runtime="net10"):
        if runtime == "net10":
            cmd = ["dotnet", os.path.join(APPS, "net10", name + ".dll")]
        else:
            cmd = [os.path.join(APPS, runtime, name)]
        self.p = subprocess.Popen(cmd + list(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(WORK, name + ".log"), "wb"), text=True)
        procs.append(self.p)
        line = self.p.stdout.readline().strip()
        if not line.startswith("ready "):
            fail("%s did not start: %r" % (name, line))
        self.pid = int(line.split()[1])

    def say(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def finish(self):
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        return self.p.wait(timeout=30)


def run(*args, timeout=300):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=timeout)


def agent(*args):
    return run(os.path.join(BIN, "gcsnap-agent"), *args)


def gcsnap(*args):
    return run(os.path.join(BIN, "gcsnap"), *args)


def capture(app, out, *knobs):
    spec = ",".join(["dotnet:%d" % app.pid] + list(knobs))
    r = agent("--source", spec, "--out", out, "--json")
    stats = json.loads(r.stdout) if r.returncode == 0 else None
    return r, stats


def expect(runtime):
    if runtime == "net10":
        out = run("dotnet", os.path.join(APPS, "net10", "Heap.dll"), "--expect").stdout
    else:
        out = run(os.path.join(APPS, runtime, "Heap"), "--expect").stdout
    return json.loads(out)


def leftovers(folder, name):
    return [f for f in os.listdir(folder) if f.startswith(name)]


def check_heap(out, stats, want, what):
    r = gcsnap("validate", "--strict", out)
    check(r.returncode == 0, "%s: validate --strict (%s)" % (what, (r.stdout + r.stderr).strip()))
    problems = heapcheck.check(out, want)
    check(not problems, "%s: the heap as the program made it (%s)" % (what, "; ".join(problems)))
    check(stats["lost_events"] == 0 and stats["stream_bytes"] > 0 and stats["pause_us"] > 0,
          "%s: no event lost, %d stream bytes, pause %d us" % (what, stats["stream_bytes"],
                                                              stats["pause_us"]))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listening(port):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        return True
    except OSError:
        return False


def wait_until(cond, what, timeout=20):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            fail("timed out waiting for " + what)
        time.sleep(0.1)


class Collector:
    """gcsnapd on free ports, its store in WORK/store, stopped at exit."""

    def __init__(self):
        port, http = free_port(), free_port()
        self.agent_addr = "127.0.0.1:%d" % port
        self.url = "http://127.0.0.1:%d" % http
        self.store = os.path.join(WORK, "store")
        self.p = subprocess.Popen([os.path.join(BIN, "gcsnapd"), "--listen", self.agent_addr,
                                   "--http", "127.0.0.1:%d" % http, "--store", self.store],
                                  stderr=subprocess.DEVNULL)
        procs.append(self.p)
        wait_until(lambda: listening(port), "the collector")

    def stop(self):
        self.p.terminate()
        self.p.wait()


def stream_to_collector(app, want, runtime):
    """--once to a gcsnapd: the stored snapshot is the same heap."""
    col = Collector()
    store, url = col.store, col.url
    r = agent("--source", "dotnet:%d" % app.pid, "--connect", col.agent_addr,
              "--device-id", "heap-" + runtime, "--once")
    check(r.returncode == 0, "streamed to gcsnapd with --once (%s)" % r.stderr.strip())
    stored = [os.path.join(dp, f) for dp, _, fs in os.walk(store) for f in fs
              if f.endswith(".gclog.zst")]
    check(len(stored) == 1, "gcsnapd stored one snapshot")
    plain = os.path.join(WORK, "stored.gclog")
    r = gcsnap("convert", stored[0], plain)
    check(r.returncode == 0, "the stored snapshot converts (%s)" % r.stderr.strip())
    side = stored[0] + ".gens.json"
    check(os.path.exists(side), "gcsnapd keeps the ranges and field names beside it")
    shutil.copy(side, plain + ".gens.json")
    problems = heapcheck.check(plain, want)
    check(not problems, "the stored snapshot holds the same heap (%s)" % "; ".join(problems))
    sid = json.loads(gcsnap("snapshots", "--json", "--collector", url).stdout)["snapshots"][0]["id"]
    body = json.load(urllib.request.urlopen("%s/api/snapshots/%s/paths?type=HeapTest.Config"
                                            % (url, sid), timeout=30))
    fields = sorted(g.get("root_field") for s in body["sections"] for g in s["groups"])
    check(fields == ["Primary", "Secondary"], "the API names the static fields that hold "
          "HeapTest.Config: %s" % fields)
    col.stop()


def test_heap(runtime):
    want = expect(runtime)
    app = App("Heap", runtime=runtime)
    out = os.path.join(WORK, "heap.gclog")
    r, stats = capture(app, out)
    check(r.returncode == 0, "%s: captured (%s)" % (runtime, r.stderr.strip()))
    check_heap(out, stats, want, runtime)
    version = "8." if runtime == "net8" else "10."
    name = heapcheck.Dump(out).sections[0]
    check(name.startswith("Heap (.NET " + version), "the section is named %r" % name)
    r = gcsnap("paths", "--type", "HeapTest.Config", out)
    held = re.findall(r"held by a static root \(no flags\) field (\w+) of type HeapTest.Config",
                      r.stdout)
    check(sorted(held) == ["Primary", "Secondary"], "gcsnap paths names each static field that "
          "holds a HeapTest.Config: %s" % held)
    stream_to_collector(app, want, runtime)
    check(app.say("gc") == "ok" and app.finish() == 0, "the program runs on and exits")


def test_small_buffer():
    app = App("Alloc", "200000")
    out = os.path.join(WORK, "small.gclog")
    r, _ = capture(app, out, "buffer-mb=1")
    msg = r.stderr.strip()
    m = re.search(r"dropped events.*\((\d+) missing by their numbers, (\d+) objects.*"
                  r"try buffer-mb=(\d+)", msg)
    check(r.returncode == 1 and m and int(m.group(1)) + int(m.group(2)) > 0,
          "a 1 MB buffer: exit 1 (%d), says what was lost and what to use: %s" % (r.returncode, msg))
    check(not leftovers(WORK, "small.gclog"), "no file left: %s" % leftovers(WORK, "small.gclog"))
    check(app.say("gc") == "ok", "the program runs on")
    r, stats = capture(app, out, "buffer-mb=" + m.group(3))
    check(r.returncode == 0 and stats["lost_events"] == 0,
          "with buffer-mb=%s: captured (%s)" % (m.group(3), r.stderr.strip()))
    nodes = len(heapcheck.Dump(out).objects_of("AllocTest.Node"))
    check(nodes == 200000, "all 200000 nodes (%d)" % nodes)
    check(app.finish() == 0, "the program exits")


def test_repeat():
    want = expect("net10")
    app = App("Heap")
    for i in range(3):
        out = os.path.join(WORK, "repeat-%d.gclog" % i)
        r, stats = capture(app, out)
        check(r.returncode == 0, "capture %d (%s)" % (i + 1, r.stderr.strip()))
        check_heap(out, stats, want, "capture %d" % (i + 1))
    check(app.finish() == 0, "the program exits")


def test_list():
    a, b = App("Heap"), App("Heap", runtime="net8")
    r = agent("--list")
    rows = {int(line.split()[0]): line for line in r.stdout.splitlines()[1:] if line.strip()}
    for app, version in ((a, "10."), (b, "8.")):
        row = rows.get(app.pid, "")
        check(re.match(r"%d +Heap +%s\d+\.\d+ +\S.*Heap" % (app.pid, re.escape(version)), row),
              "--list names %d: %r" % (app.pid, row))
    r = agent("--list", "--json")
    found = {o["pid"]: o for o in map(json.loads, r.stdout.splitlines())}
    check(found.get(a.pid, {}).get("name") == "Heap" and
          found.get(b.pid, {}).get("runtime", "").startswith("8."),
          "--list --json: %s" % {p: found.get(p) for p in (a.pid, b.pid)})
    r = agent("--list", "--source", "dotnet:1")
    check(r.returncode == 2, "--list with --source: a usage error")
    check(a.finish() == 0 and b.finish() == 0, "the programs exit")
    r = agent("--source", "dotnet:%d" % a.pid, "--out", os.path.join(WORK, "gone.gclog"))
    check(r.returncode == 1 and str(a.pid) in r.stderr, "a program gone: %s" % r.stderr.strip())


def test_trigger():
    """--trigger heap-growth on a program whose heap grows: the size comes
    from the runtime's own collections (a light session kept open), no walk."""
    col = Collector()
    url = col.url
    app = App("Alloc", "1000")
    log = open(os.path.join(WORK, "agent.log"), "w+")
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "dotnet:%d" % app.pid,
                          "--connect", col.agent_addr, "--device-id", "grow",
                          "--trigger", "heap-growth=50%", "--check-interval", "200ms",
                          "--cooldown", "1s"], stderr=log)
    procs.append(a)
    wait_until(lambda: "grow" in gcsnap("devices", "--collector", url).stdout, "the agent")
    time.sleep(1)
    listed = json.loads(gcsnap("snapshots", "--json", "--collector", url).stdout)["snapshots"]
    check(not listed, "no capture while the heap stays as it is")
    check(app.say("grow 3000000") == "ok", "the program grew its heap by three million nodes")

    def stored():
        return json.loads(gcsnap("snapshots", "--json", "--status", "complete", "--collector",
                                 url).stdout)["snapshots"]
    wait_until(lambda: stored(), "a triggered capture", timeout=60)
    snap = stored()[0]
    log.seek(0)
    text = log.read()
    check(snap["objects"] > 1000000 and "heap-growth=50%: the heap holds" in text,
          "the trigger fired and the capture holds the grown heap (%d objects): %s"
          % (snap["objects"], text.strip().splitlines()[-1] if text.strip() else ""))
    a.terminate()
    a.wait()
    check(app.finish() == 0, "the program exits")
    col.stop()


def test_reverse():
    """dotnet:listen=PATH: the agent listens first; the program, started with
    DOTNET_DiagnosticPorts=PATH (suspended until resumed, the default),
    connects; captures asked through the collector hold its heap."""
    sock = os.path.join(WORK, "diag.sock")
    r = agent("--source", "dotnet:listen=%s,timeout=1" % sock, "--out",
              os.path.join(WORK, "none.gclog"))
    check(r.returncode == 1 and "did not connect within 1 s" in r.stderr and
          not os.path.exists(sock), "no program connects: exit 1, %s" % r.stderr.strip())
    col = Collector()
    url, store = col.url, col.store
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "dotnet:listen=" + sock,
                          "--connect", col.agent_addr, "--device-id", "reverse"],
                         stderr=open(os.path.join(WORK, "agent.log"), "w"))
    procs.append(a)
    wait_until(lambda: os.path.exists(sock), "the agent's socket")
    os.environ["DOTNET_DiagnosticPorts"] = sock
    try:
        app = App("Heap")
    finally:
        del os.environ["DOTNET_DiagnosticPorts"]
    check(True, "the program was resumed and started (pid %d)" % app.pid)
    wait_until(lambda: re.search(r"Heap \(\.NET 10\.", gcsnap("devices", "--collector", url).stdout),
               "the device, shown with the program and its runtime")
    for i in range(2):
        r = gcsnap("capture", "reverse", "--wait", "--collector", url)
        check(r.returncode == 0, "capture %d through the runtime's connections (%s)"
              % (i + 1, (r.stdout + r.stderr).strip()))
    stored = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(store) for f in fs
                    if f.endswith(".gclog.zst"))
    plain = os.path.join(WORK, "last.gclog")
    check(len(stored) == 2 and gcsnap("convert", stored[-1], plain).returncode == 0,
          "two snapshots stored")
    shutil.copy(stored[-1] + ".gens.json", plain + ".gens.json")
    problems = heapcheck.check(plain, expect("net10"))
    check(not problems, "the second holds the program's heap (%s)" % "; ".join(problems))
    check(app.finish() == 0, "the program exits")
    try:
        rc = a.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    log = open(os.path.join(WORK, "agent.log")).read()
    check(rc == 5 and "has exited: the session ends" in log,
          "the agent ends (exit 5, %s) once the program has exited: %s" % (rc, log.strip()[-200:]))

    def state():
        rows = [ln.split() for ln in gcsnap("devices", "--collector", url).stdout.splitlines()]
        return [r[1] for r in rows if r and r[0] == "reverse"]
    wait_until(lambda: state() and state()[0] != "connected", "the device shown disconnected")
    col.stop()


def test_killed():
    """A program killed while a capture asked through the collector runs:
    the capture fails with the reason, nothing is stored as complete, and
    the session ends (exit 5) rather than failing every capture after."""
    col = Collector()
    url = col.url
    app = App("Alloc", "3000000")
    log = os.path.join(WORK, "agent.log")
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "dotnet:%d" % app.pid,
                          "--connect", col.agent_addr, "--device-id", "killed"],
                         stderr=open(log, "w"))
    procs.append(a)
    wait_until(lambda: "killed" in gcsnap("devices", "--collector", url).stdout, "the agent")
    cap = subprocess.Popen([os.path.join(BIN, "gcsnap"), "capture", "killed", "--wait",
                            "--collector", url], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)
    app.p.kill()
    app.p.wait()
    out = cap.communicate(timeout=120)[0]
    listed = json.loads(gcsnap("snapshots", "--json", "--status", "complete", "--collector",
                               url).stdout)["snapshots"]
    check(cap.returncode != 0 and not listed and "exited during the capture" in out,
          "the capture failed, saying why (%s), no complete snapshot" % out.strip())
    try:
        rc = a.wait(timeout=20)
    except subprocess.TimeoutExpired:
        rc = None
    text = open(log).read()
    check(rc == 5 and "has exited" in text, "the agent ended with 5: %s" % text.strip()[-300:])
    col.stop()


def type_counts(summary):
    """Objects per type; PerfView's size classes (" (Bytes > 100K)") folded."""
    counts = {}
    for t in summary["by_type"]:
        name = re.sub(r" \(Bytes > \d+K?\)$", "", t["type"])
        counts[name] = counts.get(name, 0) + t["count"]
    return counts


def test_oracle():
    tools = os.path.join(BIN, "..", "dotnet-tools")   # shared with tests/bench/dotnet.py
    gcdump = os.path.join(tools, "dotnet-gcdump")
    if not os.path.exists(gcdump):
        r = run("dotnet", "tool", "install", "--tool-path", tools, "dotnet-gcdump")
        if r.returncode != 0:
            skip("dotnet-gcdump cannot be installed here: " + (r.stdout + r.stderr).strip()[-300:])
    app = App("Alloc", "100000")
    # dotnet-gcdump's first session makes the program load what its sessions
    # need; the second one sees the program as the agent does.
    theirs = os.path.join(WORK, "alloc.gcdump")
    for _ in range(2):
        r = run(gcdump, "collect", "-p", str(app.pid), "-o", theirs)
        check(r.returncode == 0 and os.path.exists(theirs),
              "dotnet-gcdump collected (%s)" % r.stdout.strip()[-200:])
    ours = os.path.join(WORK, "alloc.gclog")
    r, stats = capture(app, ours)
    check(r.returncode == 0, "the agent captured (%s)" % r.stderr.strip())
    a = json.loads(gcsnap("summary", "--json", "--top", "0", ours).stdout)
    b = json.loads(gcsnap("summary", "--json", "--top", "0", theirs).stdout)
    ca, cb = type_counts(a), type_counts(b)
    for t in ("AllocTest.Node", "AllocTest.Node[]"):
        check(ca.get(t) == cb.get(t) and ca.get(t), "%s: %s objects, dotnet-gcdump %s" % (t, ca.get(t), cb.get(t)))
    # The runtime's own objects differ by what each tool's session made.
    check(abs(a["objects"] - b["objects"]) <= 0.01 * b["objects"],
          "objects: %d, dotnet-gcdump %d" % (a["objects"], b["objects"]))
    check(app.finish() == 0, "the program exits")


def main():
    if shutil.which("dotnet") is None:
        skip("no dotnet on PATH (the .NET SDK is not installed)")
    need = os.path.join(APPS, "net8", "Heap") if suite == "net8" else \
        os.path.join(APPS, "net10", "Heap.dll")
    if not os.path.exists(need):
        skip("%s not built (the build makes it where dotnet is installed)" % need)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    tests = {"net10": lambda: test_heap("net10"), "net8": lambda: test_heap("net8"),
             "small_buffer": test_small_buffer, "repeat": test_repeat, "list": test_list,
             "oracle": test_oracle, "trigger": test_trigger, "reverse": test_reverse,
             "killed": test_killed}
    if suite not in tests:
        fail("unknown suite " + suite)
    tests[suite]()


if __name__ == "__main__":
    try:
        main()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
