#!/usr/bin/env python3
"""mono_test.py - the gcsnap profiler module in real Mono programs.

usage: mono_test.py SUITE BIN_DIR LIB_DIR APPS_DIR WORK_DIR

Suites: roots (every root kind, exact counts, strict validation, every
object's retained size equal to networkx's), statics
(weak handles keep nothing alive; statics found through their container),
ids (stable IDs across real compaction, checked by each object's place in
an array), ids_busy (the same while the program collects all through the
captures, so that objects move while the module settles their IDs), faults (agent gone or stalled, program killed, no
collector), own (--trigger and --every with --spool on a running program),
wide (an array whose object line is longer than 64 MiB, to a file and to
gcsnapd; a module's object over the reference limit or malformed).
Exit 0 pass, 1 fail, 77 skipped (no mono or the programs not built).
"""
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

SKIP = 77
MOVE_ATTEMPTS = 5      # rounds of collections the ids suites allow for objects to move
suite, BIN, LIB, APPS, WORK = sys.argv[1:6]
procs = []
skipped = []           # checks that could not run: the suite exits 77


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok: " + msg)


class App:
    """A C# program on Mono with the module, driven by lines on stdin."""

    def __init__(self, exe, args=(), ids="stable"):
        self.sock = os.path.join(WORK, exe + ".sock")
        env = dict(os.environ, LD_LIBRARY_PATH=LIB)
        opt = "gcsnap:socket=%s,ids=%s" % (self.sock, ids)
        self.p = subprocess.Popen(["mono", "--profile=" + opt, os.path.join(APPS, exe)] + list(args),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(WORK, exe + ".log"), "wb"), env=env)
        procs.append(self.p)

    def wait_line(self, want, timeout=60):
        t0 = time.time()
        line = self.p.stdout.readline().decode().strip()
        if line != want:
            fail("expected %r from the program, got %r after %.1f s" % (want, line, time.time() - t0))

    def say(self, word="go"):
        self.p.stdin.write(word.encode() + b"\n")
        self.p.stdin.flush()

    def finish(self, timeout=20):
        self.say()
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            fail("the program did not exit within %d s" % timeout)


def agent(*args, check_rc=True):
    r = subprocess.run([os.path.join(BIN, "gcsnap-agent")] + list(args), capture_output=True, text=True)
    if check_rc and r.returncode != 0:
        fail("gcsnap-agent %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r


def gcsnap(*args):
    r = subprocess.run([os.path.join(BIN, "gcsnap")] + list(args), capture_output=True, text=True)
    return r


def capture(app, out, *extra):
    r = agent("--source", "mono:" + app.sock, "--out", out, "--json", *extra)
    return json.loads(r.stdout)


def load(path):
    """types: id -> name; objs: id -> (type name, size, refs); roots: list."""
    types, objs, roots = {}, {}, []
    for line in open(path):
        f = line.split()
        if f[0] == "t":
            types[f[1]] = line.rstrip("\n").split(" ", 2)[2]
        elif f[0] == "o":
            objs[f[1]] = [f[2], int(f[3], 16), f[4:]]
        elif f[0] == "r":
            roots.append((f[1], int(f[2]), int(f[3]), f[4] if len(f) > 4 else None))
    for o in objs.values():
        o[0] = types[o[0]]
    return types, objs, roots


def count(objs, name):
    return sum(1 for o in objs.values() if o[0] == name)


def validate(path):
    r = gcsnap("validate", "--strict", path)
    check(r.returncode == 0 and "(0 warnings)" in r.stdout, "%s validates strictly: %s" %
          (os.path.basename(path), (r.stdout + r.stderr).strip()))


def agrees_with_networkx(path):
    """gcsnap's retained sizes against networkx's (tests/analysis/nx_check.py)."""
    py = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    nx = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "analysis", "nx_check.py")
    r = subprocess.run([py, nx, os.path.join(BIN, "gcsnap"), os.path.join(WORK, "nx"), "--no-random", path],
                       capture_output=True, text=True)
    if r.returncode == SKIP:
        print("skipped: %s against networkx: %s" % (os.path.basename(path), r.stdout.strip()))
        skipped.append(path)
        return
    check(r.returncode == 0, "retained sizes equal networkx's: %s" % (r.stdout + r.stderr).strip())


def test_roots():
    app = App("Roots.exe")
    app.wait_line("ready")
    # The module binds under SOCKET.new and renames it once listening, so
    # that an agent connecting as soon as the socket appears is not refused.
    check(stat.S_ISSOCK(os.lstat(app.sock).st_mode) and not os.path.lexists(app.sock + ".new"),
          "the socket is in place, nothing left under its temporary name")
    out = os.path.join(WORK, "roots.gclog")
    stats = capture(app, out)
    check(stats["pause_us"] > 0, "pause_us reported (%d)" % stats["pause_us"])
    validate(out)
    agrees_with_networkx(out)
    types, objs, roots = load(out)
    for name, n in [("Node", 5), ("Local", 3), ("Pending", 3), ("Blocker", 1), ("Cycle", 2),
                    ("HandleTarget", 1), ("WeakTarget", 1)]:
        check(count(objs, name) == n, "%d %s objects (found %d)" % (n, name, count(objs, name)))
    kinds = {(k, f) for _, k, f, _ in roots}
    for kf, what in [((1, 1), "pinned stack roots"), ((2, 0), "finalizer queue roots"),
                     ((3, 0), "normal handles"), ((3, 1), "pinned handles"), ((3, 2), "weak handles"),
                     ((4, 0), "statics"), ((5, 0), "string pool or thread statics"), ((0, 0), "other roots")]:
        check(kf in kinds, "%s: kind %d flags %d" % (what, kf[0], kf[1]))
    by_id = {i: o for i, o in objs.items()}
    fin = [by_id[i][0] for i, k, _, _ in roots if k == 2 and i in by_id]
    check(fin.count("Pending") == 3, "the 3 Pending objects are finalizer queue roots (%s)" % fin)
    locals_ = {by_id[i][0] for i, k, _, _ in roots if k == 1 and i in by_id}
    check("Local" in locals_, "the locals are stack roots")
    weak = [by_id[i][0] for i, k, f, _ in roots if k == 3 and f == 2 and i in by_id]
    check(weak.count("WeakTarget") == 2, "weak and weak-track handles to WeakTarget")
    pinned = [by_id[i] for i, k, f, _ in roots if k == 3 and f == 1 and i in by_id]
    check(any(o[0] == "System.Byte[]" and o[1] >= 64 for o in pinned), "the pinned byte[64]")
    statics = [(by_id[i][0], types.get(c)) for i, k, _, c in roots if k == 4 and i in by_id]
    check(("Node", "Registry") in statics, "Registry.Head is a static root contained in Registry")
    check(any(o[0] == "System.Byte[]" and o[1] >= 100000 for o in objs.values()),
          "the 100,000-byte array is in the heap")
    strings = [i for i, k, _, _ in roots if k == 5 and i in by_id and by_id[i][0] == "System.String"]
    check(len(strings) > 0, "interned strings are roots of kind 5 (%d)" % len(strings))
    cyc = [i for i, o in objs.items() if o[0] == "Cycle"]
    check(all(any(r in cyc for r in objs[i][2]) for i in cyc), "the two Cycle objects reference each other")
    check(app.finish() == 0, "the program exits normally after the capture")


def test_statics():
    app = App("Roots.exe")
    app.wait_line("ready")
    out = os.path.join(WORK, "statics.gclog")
    capture(app, out)
    app.finish()
    types, objs, roots = load(out)
    for name in ["Node", "Cycle", "WeakTarget", "System.Int32[]"]:
        r = gcsnap("paths", "--type", name, "--json", out)
        check(r.returncode == 0, "gcsnap paths --type %s" % name)
        groups = json.loads(r.stdout)["sections"][0]["groups"]
        found = False
        for g in groups:
            oid = g["example_path"][0]["id"]
            p = json.loads(gcsnap("paths", "--object", oid, "--json", out).stdout)
            found |= any(pp["root"].get("container") == "Registry"
                         for pp in p["sections"][0]["paths"] if "root" in pp)
        check(found, "%s is found through a static root contained in Registry" % name)
    # The WeakTarget is held by a static and two weak handles: without the
    # static root, nothing keeps it alive.
    wt = [i for i, o in objs.items() if o[0] == "WeakTarget"][0]
    cut = os.path.join(WORK, "statics-cut.gclog")
    with open(out) as src, open(cut, "w") as dst:
        for line in src:
            f = line.split()
            if not (f[0] == "r" and f[1] == wt and f[2] == "4"):
                dst.write(line)
    d = json.loads(gcsnap("dominators", "--json", "--top", "0", cut).stdout)["sections"][0]
    full = json.loads(gcsnap("dominators", "--json", "--top", "0", out).stdout)["sections"][0]
    check(d["unreachable_objects"] == full["unreachable_objects"] + 1,
          "with only weak handles left, WeakTarget is unreachable (%d -> %d)" %
          (full["unreachable_objects"], d["unreachable_objects"]))


def test_ids(busy=False):
    """busy: the program allocates and collects all through the second
    phase, so that collections move objects while captures run; three
    captures there must all agree with the first phase. The addresses are
    captured after the first stable capture and before the second ones, so
    the moves they show happened between them."""
    app = App("Ids.exe", ["busy"] if busy else [])
    app.wait_line("ready 1")
    caps = {}

    def take(mode, phase):
        n = sum(1 for k in caps if k[:2] == (mode, phase))
        out = os.path.join(WORK, "ids-%s-%d-%d.gclog" % (mode, phase, n))
        capture(app, out, *(["--stable-ids"] if mode == "stable" else []))
        validate(out)
        caps[mode, phase, n] = load(out)[1]
        return caps[mode, phase, n]

    def tracked(objs):
        arr = [o for o in objs.values() if o[0] == "Tracked[]"]
        check(len(arr) == 1, "one Tracked[] array")
        return arr[0][2]

    s1 = tracked(take("stable", 1))
    a1 = tracked(take("address", 1))
    app.say()
    app.wait_line("ready 2")
    # SGen evacuates the sparsest blocks only, about 100 of the 2000, and
    # only once a sweep counted them sparse: the program collects again
    # until they moved, a bounded number of times.
    for attempt in range(1, MOVE_ATTEMPTS + 1):
        a2 = tracked(take("address", 2))
        moved = sum(1 for x, y in zip(a1, a2) if x != y)
        if moved >= 50 or attempt == MOVE_ATTEMPTS:
            break
        app.say("again")
        app.wait_line("ready 2")
    check(len(a1) == 2000 and moved >= 50, "2000 Tracked objects; the collector moved %d of them "
          "(%d rounds of collections)" % (moved, attempt))
    for _ in range(3 if busy else 1):
        objs = take("stable", 2)
        kept = sum(1 for x, y in zip(s1, tracked(objs)) if x == y)
        check(kept == 2000, "stable IDs (capture %d of phase 2): %d of 2000 survivors kept their ID, "
              "by their place in the array" % (sum(1 for k in caps if k[:2] == ("stable", 2)), kept))
        fresh = [i for i, o in objs.items() if o[0] == "Fresh"]
        check(len(fresh) == 100 and not set(fresh) & set(caps["stable", 1, 0]),
              "the 100 new objects have IDs no object of the first snapshot had")
    app.finish()


def raw_capture(app):
    """A client of the module's socket that asks for a capture."""
    c = socket.socket(socket.AF_UNIX)
    c.connect(app.sock)
    c.sendall(b"capture\n")
    return c


def wait_dead(p, timeout):
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        return False
    return True


def test_faults():
    app = App("Churn.exe", ["300000", "keep"])
    app.wait_line("ready", 120)
    out = os.path.join(WORK, "fault.gclog")
    # An agent that dies mid-capture: it reads the first bytes and closes.
    c = raw_capture(app)
    c.recv(100)
    c.close()
    time.sleep(0.2)
    check(app.p.poll() is None, "an agent gone mid-capture: the program runs on")
    # An agent that stops reading mid-capture: the program runs on, and the
    # module serves the next agent once the stalled one is gone.
    c = raw_capture(app)
    c.recv(100)
    time.sleep(1)
    check(app.p.poll() is None, "an agent that stopped reading: the program runs on")
    c.close()
    # A real agent killed mid-capture leaves no file.
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "mono:" + app.sock, "--out", out])
    time.sleep(0.05)
    a.kill()
    a.wait()
    check(not os.path.exists(out) or a.returncode == 0, "agent killed: no %s unless it had finished" % os.path.basename(out))
    stats = capture(app, out)
    check(stats["objects"] > 300000, "a capture after the faults works (%d objects)" % stats["objects"])
    # No collector: the agent retries, the program is unaffected.
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    dead = "127.0.0.1:%d" % port.getsockname()[1]
    port.close()
    r = agent("--source", "mono:" + app.sock, "--connect", dead, "--device-id", "m", "--once",
              "--connect-timeout", "2", check_rc=False)
    check(r.returncode == 3 and app.p.poll() is None, "no collector: agent exit 3, the program runs on")
    # The program killed mid-capture, with a collector: the capture was asked
    # for while the program was stopped, so it is surely under way when the
    # program dies. The collector lists no complete snapshot of it.
    port, http = free_port(), free_port()
    url = "http://127.0.0.1:%d" % http
    d = subprocess.Popen([os.path.join(BIN, "gcsnapd"), "--listen", "127.0.0.1:%d" % port, "--http",
                          "127.0.0.1:%d" % http, "--store", os.path.join(WORK, "store")],
                         stderr=subprocess.DEVNULL)
    procs.append(d)
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "mono:" + app.sock, "--connect",
                          "127.0.0.1:%d" % port, "--device-id", "dying"], stderr=subprocess.PIPE, text=True)
    procs.append(a)
    wait_until(lambda: "dying" in gcsnap("devices", "--collector", url).stdout, "the agent to connect")
    app.p.send_signal(signal.SIGSTOP)
    cap = subprocess.Popen([os.path.join(BIN, "gcsnap"), "capture", "dying", "--wait", "--collector", url],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(0.5)
    app.p.kill()
    app.p.wait()
    out_cap = cap.communicate(timeout=60)[0]
    listed = gcsnap("snapshots", "--device", "dying", "--status", "complete", "--json", "--collector", url).stdout
    check(cap.returncode != 0 and '"id"' not in listed,
          "program killed mid-capture: the capture failed (%s), no complete snapshot listed" % out_cap.strip())
    # EOF or a reset, as the kernel has it: either way the reason names the socket.
    check(app.sock in out_cap and ("closed the connection" in out_cap or "reset" in out_cap),
          "the agent told the collector why")
    a.terminate()
    a.wait()


def listening(port):
    with socket.socket() as c:
        return c.connect_ex(("127.0.0.1", port)) == 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(cond, what, timeout=30):
    t0 = time.time()
    while not cond():
        if time.time() - t0 > timeout:
            fail("timed out waiting for " + what)
        time.sleep(0.1)


def test_early():
    """A capture asked for as soon as the module's socket exists, before the
    runtime has started, waits for it instead of failing."""
    sock = os.path.join(WORK, "early.sock")
    env = dict(os.environ, LD_LIBRARY_PATH=LIB)
    app = subprocess.Popen(["mono", "--profile=gcsnap:socket=" + sock, os.path.join(APPS, "Contacts.exe"), "5"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    procs.append(app)
    t0 = time.time()
    while not os.path.exists(sock):
        if time.time() - t0 > 30:
            fail("the module's socket did not appear")
        time.sleep(0.001)
    out = os.path.join(WORK, "early.gclog")
    agent("--source", "mono:" + sock, "--out", out)
    _, objs, _ = load(out)
    check(count(objs, "System.String") > 0, "the capture right after start holds the runtime's objects")
    validate(out)


def test_own():
    """Captures of the agent's own: --trigger reads the heap's size from the module."""
    sock = os.path.join(WORK, "contacts.sock")
    env = dict(os.environ, LD_LIBRARY_PATH=LIB)
    app = subprocess.Popen(["mono", "--profile=gcsnap:socket=" + sock, os.path.join(APPS, "Contacts.exe"), "5"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    procs.append(app)
    for _ in range(300):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    spool = os.path.join(WORK, "spool")
    a = subprocess.Popen([os.path.join(BIN, "gcsnap-agent"), "--source", "mono:" + sock, "--connect", "127.0.0.1:1",
                          "--device-id", "m", "--spool", spool, "--trigger", "heap-growth=5%", "--cooldown", "500ms",
                          "--check-interval", "100ms", "--every", "1s"], stderr=subprocess.PIPE, text=True)
    procs.append(a)
    time.sleep(3.5)
    a.terminate()
    err = a.communicate(timeout=10)[1]
    fired = [l for l in err.splitlines() if "heap-growth=5%: the heap holds" in l]
    files = [f for f in os.listdir(spool) if f.endswith(".gcspool")]
    check(len(fired) >= 1, "heap-growth=5%% fired on the program's heap %d times" % len(fired))
    check(len(files) >= 3, "%d captures spooled (trigger and --every 1s)" % len(files))
    check(app.poll() is None, "the program runs on")


WIDE = 6500000         # references of Wide.exe's array: with addresses, a line of about 84 MB


def test_wide():
    """The array's line, above the 64 MiB that bounds other lines, is read
    as it arrives and written whole."""
    app = App("Wide.exe", [str(WIDE)], ids="address")
    app.wait_line("ready")
    out = os.path.join(WORK, "wide.gclog")
    stats = capture(app, out)
    check(stats["references"] >= WIDE, "%d references captured" % stats["references"])
    validate(out)
    types, leaves, wide = {}, set(), []
    with open(out, "rb") as f:
        for line in f:
            if line.startswith(b"t "):
                t = line.rstrip(b"\n").split(b" ", 2)
                types[t[1]] = t[2]
            elif len(line) > 64 << 20:
                wide.append(line)
            elif line.startswith(b"o "):
                o = line.split()
                if types.get(o[2]) == b"Leaf":
                    leaves.add(o[1])
    check(len(wide) == 1, "one object line above 64 MiB (%s)" % [len(l) for l in wide])
    head = wide[0][:4096].split()
    check(types.get(head[2]) == b"System.Object[]", "it is the object[] (%s)" % types.get(head[2]))
    nrefs = wide[0].count(b" ") - 3
    check(nrefs == WIDE, "its %d references are all there (%d)" % (WIDE, nrefs))
    check(len(leaves) == 16 and set(head[4:20]) == leaves,
          "its first 16 references are the 16 Leaf objects")
    # Below the array's size, --max-refs refuses the capture, says so, and
    # leaves no file; the program runs on.
    narrow = os.path.join(WORK, "narrow.gclog")
    r = agent("--source", "mono:" + app.sock, "--out", narrow, "--max-refs", str(WIDE - 1),
              check_rc=False)
    check(r.returncode == 1 and "more than %d (--max-refs)" % (WIDE - 1) in r.stderr
          and not os.path.exists(narrow),
          "--max-refs %d: exit 1 naming the limit, no file (exit %d, %s)"
          % (WIDE - 1, r.returncode, r.stderr.strip()))
    # Streamed to a collector, which stores it whole.
    port, http = free_port(), free_port()
    store = os.path.join(WORK, "store")
    d = subprocess.Popen([os.path.join(BIN, "gcsnapd"), "--listen", "127.0.0.1:%d" % port, "--http",
                          "127.0.0.1:%d" % http, "--store", store], stderr=subprocess.DEVNULL)
    procs.append(d)
    wait_until(lambda: listening(port), "the collector")
    agent("--source", "mono:" + app.sock, "--connect", "127.0.0.1:%d" % port, "--device-id", "wide",
          "--once")
    stored = [os.path.join(dp, f) for dp, _, fs in os.walk(store) for f in fs if f.endswith(".gclog.zst")]
    r = gcsnap("summary", "--json", *stored[:1])
    refs = json.loads(r.stdout)["references"] if r.returncode == 0 else r.stderr.strip()
    check(len(stored) == 1 and isinstance(refs, int) and refs >= WIDE,
          "gcsnapd stored it, %s references" % refs)
    check(app.finish() == 0, "the program runs on and exits")
    # A module that sends more references than a dump may hold, or a
    # malformed one: the capture fails with the reason and leaves no file.
    limit = 1 << 25    # GS_READER_DEFAULT_MAX_REFS
    out = os.path.join(WORK, "refused.gclog")
    for body, want in [(b" 10" * (limit + 1), "object 10, more than %d" % limit),
                       (b" 10 1g", "malformed object line from the module, at: 1g")]:
        r = fake_module(b"s d\nt 1 X\no 10 1 20" + body + b"\nr 10 3 0 0\ne 1 0 0\n", out)
        check(r.returncode == 1 and want in r.stderr and not os.path.exists(out),
              "an object line that ends in %r: exit 1, no file (%s)" % (body[-6:], r.stderr.strip()))
    r = fake_module(b"s d\nt 1 X\no 10 1 20" + b" 10" * limit + b"\nr 10 3 0 0\ne 1 0 0\n", os.devnull)
    check(r.returncode == 0, "an object of exactly %d references is taken (%s)" % (limit, r.stderr.strip()))


def sections_of(path):
    """[(name, {id: type name}, [root ids])] a section each."""
    out = []
    for line in open(path):
        f = line.rstrip("\n").split(" ")
        if f[0] == "a":
            types, objs, roots = {}, {}, []
            out.append((" ".join(f[2:-1]), objs, roots, types))
        elif f[0] == "t":
            types[f[1]] = " ".join(f[2:])
        elif f[0] == "o":
            objs[f[1]] = (types.get(f[2], f[2]), f[4:])
        elif f[0] == "r":
            roots.append((f[1], f[2]))
    return [(name, {k: v[0] for k, v in objs.items()}, roots, objs) for name, objs, roots, _ in out]


def test_domains():
    """A section an AppDomain, the root domain's first; with addresses and
    with stable IDs."""
    app = App("Domains.exe")
    app.wait_line("ready")
    for extra in ((), ("--stable-ids",)):
        out = os.path.join(WORK, "domains%s.gclog" % "".join(extra))
        stats = capture(app, out, *extra)
        secs = sections_of(out)
        names = [s[0] for s in secs]
        check(stats["sections"] == 2 and len(secs) == 2 and names[0].startswith("Domains.exe")
              and names[1].startswith("Plugin"), "%s: two sections, Domains.exe then Plugin (%s)"
              % (extra, names))
        if len(secs) != 2:
            continue
        (_, main, main_roots, main_objs), (_, plug, plug_roots, plug_objs) = secs
        got = (count_of(main, "MainItem"), count_of(main, "PluginItem"),
               count_of(plug, "MainItem"), count_of(plug, "PluginItem"))
        check(got == (500, 0, 0, 1000), "%s: 500 MainItem in the first, 1000 PluginItem in the "
              "second, none elsewhere (%s)" % (extra, got))
        check(all(r in main for r, _ in main_roots) and all(r in plug for r, _ in plug_roots),
              "%s: every root names an object of its own section" % (extra,))
        # What crosses is the runtime's plumbing (remoting proxies,
        # threads): references to the other section, nothing else dangles;
        # each object they name is rooted in its own section (the Plugin
        # instance by the module alone, as held by the runtime).
        for here, objs, there, there_roots in ((main, main_objs, plug, plug_roots),
                                               (plug, plug_objs, main, main_roots)):
            out_of = [r for _, refs in objs.values() for r in refs if r not in here]
            rooted = set(r for r, _ in there_roots)
            loose = [r for r in set(out_of) if r not in rooted]
            check(out_of and all(r in there for r in out_of) and not loose,
                  "%s: the %d references out of a section name objects of the other, each "
                  "rooted there (not: %s)" % (extra, len(out_of), loose))
        plugins = [r for r, t in plug.items() if t == "Plugin"]
        check(len(plugins) == 1 and [k for r, k in plug_roots if r == plugins[0]] == ["0"],
              "%s: the Plugin instance, held from the main domain, is rooted once, kind 0" % (extra,))
        r = gcsnap("summary", "--json", out)
        sums = json.loads(r.stdout)["sections"] if r.returncode == 0 else []
        check([s["unreachable"] for s in sums] == [0, 0],
              "%s: nothing unreachable in either section (%s)" % (extra, r.stderr.strip()))
    check(app.finish() == 0, "the program runs on and exits")


def count_of(types_by_id, name):
    return sum(1 for t in types_by_id.values() if t == name)


def fake_module(snapshot, out):
    """Captures from a stand-in for the module that answers with snapshot."""
    path = os.path.join(WORK, "fake.sock")
    if os.path.exists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(2)

    def serve():
        for reply in (b"", snapshot):    # the agent's first connection only reads the greeting
            c = srv.accept()[0]
            c.sendall(b"gcsnap-mono 1 ids=address\n")
            if reply:
                c.recv(64)
                try:
                    c.sendall(reply)
                except OSError:          # the agent stopped reading at the fault
                    pass
            c.close()
    t = threading.Thread(target=serve)
    t.start()
    r = agent("--source", "mono:" + path, "--out", out, check_rc=False)
    t.join()
    srv.close()
    return r


def main():
    if not shutil.which("mono") or not os.path.exists(os.path.join(LIB, "libmono-profiler-gcsnap.so")) \
            or not os.path.exists(os.path.join(APPS, "Roots.exe")):
        print("SKIP: mono, the module or the C# programs are missing")
        return SKIP
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    try:
        {"roots": test_roots, "statics": test_statics, "ids": test_ids,
         "ids_busy": lambda: test_ids(busy=True), "faults": test_faults, "own": test_own,
         "wide": test_wide, "early": test_early, "domains": test_domains}[suite]()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    return SKIP if skipped else 0


sys.exit(main())
