#!/usr/bin/env python3
"""dotnet.py - gcsnap-agent --source dotnet:PID beside dotnet-gcdump on the
same .NET 10 program: wall time, the tool's peak memory, the program's pause
and extra memory, and the objects captured, at 1M, 9M and 18M objects.

usage: tests/bench/dotnet.py [--json] [--check] [--quick] [--sizes LIST]
                             [--rounds N] [--no-install] [BUILD_DIR]

The program is Alloc of tests/dotnet/apps (N linked nodes; BUILD_DIR's
dotnet-apps/net10/Alloc.dll when it is up to date, else built into
BUILD_DIR/dotnet-bench/alloc). --sizes takes a comma-separated list of
counts with an optional K or M (default 1M,9M,18M); --quick is --sizes 1M.
Every capture is of a fresh process: a capture leaves the program larger
than before (the runtime's event buffers and what the heap walk allocated),
and a fresh one makes its peak memory mean this capture alone. For each size
both tools capture a program of that size in each of --rounds N rounds
(default 3), in turns (the agent first in odd rounds, dotnet-gcdump first
in even ones), and each figure of the table is the median of the rounds whose capture succeeded.

Each capture: the program is started, made to collect once ("gc") and its
peak memory reset to what it holds (/proc/PID/clear_refs); then, while the
tool runs, the benchmark asks the program for its pause figure every
millisecond ("pause", answered from the program's main thread), which both
keeps the program busy, as a program being captured is, and measures its
longest stall (the longest wait for an answer: the program is stopped for
the heap walk). An idle program can make dotnet-gcdump wait up to its
timeout: the last events of the walk stay in the runtime's buffer until the
session stops.

  wall        the tool's run, from its start to its exit, output file
              written (the agent with --out FILE --json, dotnet-gcdump
              collect -o FILE)
  tool RSS    the tool's peak resident memory (getrusage of the child)
  stall       the program's longest stall while the tool ran (above)
  walk        the agent's pause_us (GCStart to GCEnd of the walk's
              collection, from the runtime's events); for dotnet-gcdump
              nothing
  gc pause    what GC.GetTotalPauseDuration() grew by in the capture: the
              runtime's own figure, which leaves part of the walk out
  extra       the program's peak resident memory during the capture less
              what it held before: the runtime's event buffers
  objects     the agent's count (--json); for dotnet-gcdump, of its
              .gcdump file read back (gcsnap summary --json)

Targets (PASS or MISS beside each; --check exits 1 when one is missed): all
the objects captured by the agent at every size (N nodes, their array and
the runtime's own, no event lost), the agent's wall time <= 0.25x
dotnet-gcdump's at 9M, the agent's peak RSS <= 32 MiB, and the program's
stall and extra memory <= 1.1x dotnet-gcdump's at every size. Exit 1 when a
capture fails or the agent misses an object, whatever --check; 77 when
dotnet, the program or dotnet-gcdump is missing. dotnet-gcdump is
$GS_DOTNET_GCDUMP, else dotnet-gcdump on PATH or in ~/.dotnet/tools, else
BUILD_DIR/dotnet-tools/dotnet-gcdump, installed there with dotnet tool
install when missing (not with --no-install). Environment: GS_BENCH_DIR
(where the output files go, default $TMPDIR/gcsnap-bench or
/tmp/gcsnap-bench),
GS_BENCH_GCDUMP_TIMEOUT (dotnet-gcdump's --timeout, default 600 s),
GS_BENCH_AGENT_OUT (the agent's --out instead of a file there, such as
/dev/null: the agent syncs its file before renaming it, dotnet-gcdump does
not).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ALLOC_SRC = os.path.join(HERE, "..", "dotnet", "apps")
TOOLS = ("agent", "dotnet-gcdump")


def usage(msg=None):
    if msg:
        print("dotnet.py: " + msg, file=sys.stderr)
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    sys.exit(2)


def parse_count(text):
    t = text.strip().upper()
    mult = {"K": 1000, "M": 1000000}.get(t[-1:], 1)
    try:
        n = int(float(t[:-1] if mult > 1 else t) * mult)
    except ValueError:
        usage("not a count: %r" % text)
    if n < 1:
        usage("not a count: %r" % text)
    return n


def parse_args(argv):
    o = {"json": False, "check": False, "no-install": False, "sizes": [1000000, 9000000, 18000000], "rounds": 3,
         "build": "build"}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a in ("--json", "--check", "--no-install"):
            o[a[2:]] = True
        elif a == "--quick":
            o["sizes"] = [1000000]
        elif a in ("--sizes", "--rounds") and i + 1 < len(argv):
            i += 1
            if a == "--sizes":
                o["sizes"] = [parse_count(s) for s in argv[i].split(",") if s.strip()]
            else:
                o["rounds"] = parse_count(argv[i])
        elif a.startswith("-"):
            usage("unknown option " + a)
        else:
            pos.append(a)
        i += 1
    if len(pos) > 1 or not o["sizes"]:
        usage()
    if pos:
        o["build"] = pos[0]
    o["build"] = os.path.abspath(o["build"])
    return o


def skip(msg):
    print("dotnet.py: " + msg, file=sys.stderr)
    sys.exit(77)


def newest_source():
    """The time of Alloc's newest source file."""
    paths = [os.path.join(ALLOC_SRC, "Directory.Build.props")]
    paths += [os.path.join(ALLOC_SRC, "Alloc", f) for f in os.listdir(os.path.join(ALLOC_SRC, "Alloc"))
              if f.endswith((".cs", ".csproj"))]
    return max(os.path.getmtime(p) for p in paths if os.path.exists(p))


def find_alloc(build, dotnet):
    """Alloc.dll: the build tree's when it is as new as its sources, else
    one built here."""
    tree = os.path.join(build, "dotnet-apps", "net10", "Alloc.dll")
    if os.path.exists(tree) and os.path.getmtime(tree) >= newest_source():
        return tree
    out = os.path.join(build, "dotnet-bench", "alloc")
    dll = os.path.join(out, "Alloc.dll")
    if os.path.exists(dll) and os.path.getmtime(dll) >= newest_source():
        return dll
    r = subprocess.run([dotnet, "build", os.path.join(ALLOC_SRC, "Alloc", "Alloc.csproj"),
                        "-c", "Release", "-nologo", "-v", "q", "-o", out, "--artifacts-path",
                        os.path.join(build, "dotnet-bench", "artifacts")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or not os.path.exists(dll):
        print(r.stdout[-3000:], file=sys.stderr)
        skip("could not build tests/dotnet/apps/Alloc")
    return dll


def find_gcdump(build, dotnet, install):
    env = os.environ.get("GS_DOTNET_GCDUMP")
    if env:
        if not os.access(env, os.X_OK):
            skip("GS_DOTNET_GCDUMP=%s is not an executable" % env)
        return env
    for c in (shutil.which("dotnet-gcdump"),
              os.path.expanduser("~/.dotnet/tools/dotnet-gcdump"),
              os.path.join(build, "dotnet-tools", "dotnet-gcdump")):
        if c and os.access(c, os.X_OK):
            return c
    if not install:
        skip("dotnet-gcdump not found (set GS_DOTNET_GCDUMP, or run without --no-install)")
    tools = os.path.join(build, "dotnet-tools")
    r = subprocess.run([dotnet, "tool", "install", "--tool-path", tools, "dotnet-gcdump"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    path = os.path.join(tools, "dotnet-gcdump")
    if r.returncode != 0 or not os.access(path, os.X_OK):
        print(r.stdout[-2000:], file=sys.stderr)
        skip("dotnet-gcdump not found and not installed (set GS_DOTNET_GCDUMP)")
    return path


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Program:
    """Alloc N, talked to over its standard input and output."""

    def __init__(self, dotnet, dll, n):
        self.p = subprocess.Popen([dotnet, dll, str(n)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        ready = self.p.stdout.readline().split()
        if len(ready) != 2 or ready[0] != "ready":
            self.close()
            raise SystemExit("dotnet.py: Alloc %d did not start (%r)" % (n, ready))
        self.pid = self.p.pid

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def pause_us(self):
        reply = self.ask("pause").split()
        if len(reply) != 2 or reply[0] != "pause":
            raise SystemExit("dotnet.py: Alloc has no pause command (%r): rebuild it" % reply)
        return int(reply[1])

    def close(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except (OSError, ValueError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


class Pinger(threading.Thread):
    """Asks the program for its pause figure every millisecond and keeps
    each answer's wait, with when it was asked."""

    def __init__(self, prog):
        super().__init__(daemon=True)
        self.prog, self.waits, self.stop = prog, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            t = time.perf_counter()
            self.prog.pause_us()
            self.waits.append((t, time.perf_counter() - t))
            time.sleep(0.001)

    def longest(self, t0, t1):
        """The longest wait of a question asked between t0 and t1, or
        pending at t0."""
        return max([w for t, w in self.waits if t <= t1 and t + w >= t0] or [0.0])


def run_measured(argv, out_path, err_path):
    """(exit status, wall seconds, peak RSS KiB) of one child process."""
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, ru = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, wall, ru.ru_maxrss


def capture(tool, n, ctx, work):
    """One capture of a fresh Alloc n by tool: a dict of its figures."""
    prog = Program(ctx["dotnet"], ctx["alloc"], n)
    base = os.path.join(work, "%s-%d" % (tool, n))
    dump = base + (".gclog" if tool == "agent" else ".gcdump")
    if tool == "agent" and ctx["agent_out"]:
        dump = ctx["agent_out"]
    try:
        prog.ask("gc")
        time.sleep(0.2)
        try:
            with open("/proc/%d/clear_refs" % prog.pid, "w") as f:
                f.write("5")                          # VmHWM := VmRSS
            hwm_reset = True
        except OSError:
            hwm_reset = False
        rss0 = status_kb(prog.pid, "VmRSS")
        gc0 = prog.pause_us()
        pinger = Pinger(prog)
        pinger.start()
        time.sleep(0.05)
        if tool == "agent":
            argv = [ctx["agent"], "--source", "dotnet:%d" % prog.pid, "--out", dump, "--json"]
        else:
            argv = [ctx["gcdump"], "collect", "-p", str(prog.pid), "-o", dump,
                    "--timeout", str(ctx["gcdump_timeout"])]
        t0 = time.perf_counter()
        rc, wall, tool_rss = run_measured(argv, base + ".out", base + ".err")
        t1 = time.perf_counter()
        time.sleep(0.1)
        pinger.stop.set()
        pinger.join()
        hwm = status_kb(prog.pid, "VmHWM")
        gc1 = prog.pause_us()
    finally:
        prog.close()
    with open(base + ".out") as f:
        out = f.read()
    with open(base + ".err") as f:
        err = f.read()
    r = {"tool": tool, "size": n, "rc": rc, "wall_s": wall, "tool_rss_kb": tool_rss,
         "stall_ms": pinger.longest(t0, t1) * 1000, "gc_pause_ms": (gc1 - gc0) / 1000.0,
         "rss_before_kb": rss0, "hwm_kb": hwm, "extra_kb": hwm - rss0, "hwm_reset": hwm_reset,
         "pings": len(pinger.waits), "walk_ms": None, "objects": None, "lost_events": None,
         "stream_bytes": None, "file_bytes": os.path.getsize(dump) if os.path.isfile(dump) else 0}
    if rc != 0:
        r["error"] = (err.strip() or out.strip())[-500:]
    elif tool == "agent":
        stats = json.loads(out.strip().splitlines()[-1])
        r.update(objects=stats["objects"], walk_ms=stats["pause_us"] / 1000.0,
                 lost_events=stats["lost_events"], stream_bytes=stats["stream_bytes"])
    else:
        s = subprocess.run([ctx["gcsnap"], "summary", "--json", "--top", "1", dump],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if s.returncode != 0:
            r["error"] = "gcsnap summary: " + s.stderr.strip()[-500:]
        else:
            r["objects"] = json.loads(s.stdout)["objects"]
        r["warning"] = " ".join(l.strip() for l in (out + err).splitlines()
                                if "Warning" in l or "Timed out" in l)[:500]
    for path in (dump, dump + ".gens.json", base + ".out", base + ".err"):
        if path.startswith(work) and os.path.isfile(path):
            os.remove(path)
    return r


def median(rows, key):
    vals = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def summarize(size, rows):
    s = {"size": size}
    for tool in TOOLS:
        every = [r for r in rows if r["tool"] == tool]
        mine = [r for r in every if "error" not in r]
        s[tool] = {"captures": len(every), "failed": len(every) - len(mine)}
        s[tool].update({k: median(mine, k) for k in
                   ("wall_s", "tool_rss_kb", "stall_ms", "walk_ms", "gc_pause_ms", "extra_kb")})
        s[tool]["objects_min"] = min([r["objects"] for r in mine if r["objects"] is not None]
                                     or [None])
        s[tool]["lost_events_max"] = max([r["lost_events"] or 0 for r in mine] or [0])
    a, g = s["agent"], s["dotnet-gcdump"]
    s["ratio"] = {k: (a[k] / g[k] if a[k] is not None and g[k] else None)
                  for k in ("wall_s", "tool_rss_kb", "stall_ms", "extra_kb")}
    s["ratio"]["objects"] = (a["objects_min"] / g["objects_min"]
                             if a["objects_min"] is not None and g["objects_min"] else None)
    return s


def targets(summaries):
    """[(name, verdict, figure)] with verdict PASS, MISS or None (not measured)."""
    out = []
    for s in summaries:
        n, a, ratio = s["size"], s["agent"], s["ratio"]
        ok = (a["objects_min"] or 0) >= n + 1 and a["lost_events_max"] == 0 and not a["failed"]
        out.append(("all %s objects captured by the agent" % count(n), ok,
                    "%s objects, %d events lost, %d of %d captures failed" % (
                        format(a["objects_min"] or 0, ","), a["lost_events_max"], a["failed"],
                        a["captures"])))
    nine = [s for s in summaries if s["size"] == 9000000]
    if nine and nine[0]["ratio"]["wall_s"] is not None:
        r = nine[0]["ratio"]["wall_s"]
        out.append(("agent wall <= 0.25x dotnet-gcdump at 9M", r <= 0.25, "%.3fx" % r))
    else:
        out.append(("agent wall <= 0.25x dotnet-gcdump at 9M", None, "9M not measured"))
    for s in summaries:
        rss = s["agent"]["tool_rss_kb"]
        out.append(("agent peak RSS <= 32 MiB at %s" % count(s["size"]),
                    None if rss is None else rss / 1024.0 <= 32,
                    "n/a" if rss is None else "%.1f MiB" % (rss / 1024.0)))
    for s in summaries:
        for key, what in (("stall_ms", "pause"), ("extra_kb", "extra memory")):
            r = s["ratio"][key]
            out.append(("program %s <= 1.1x dotnet-gcdump's at %s" % (what, count(s["size"])),
                        None if r is None else r <= 1.1,
                        "n/a" if r is None else "%.2fx" % r))
    return out


def count(n):
    if n % 1000000 == 0:
        return "%dM" % (n // 1000000)
    if n % 1000 == 0:
        return "%dK" % (n // 1000)
    return str(n)


def fmt(v, spec, unit=""):
    return "-" if v is None else (spec % v) + unit


def print_table(summaries, rounds):
    row = "%-6s %-14s %5s %9s %10s %10s %10s %10s %10s %12s"
    print(row % ("size", "tool", "ok", "wall", "tool RSS", "stall", "walk", "gc pause", "extra",
                 "objects"))
    for s in summaries:
        for tool in TOOLS:
            t = s[tool]
            print(row % (
                count(s["size"]), tool, "%d/%d" % (t["captures"] - t["failed"], t["captures"]),
                fmt(t["wall_s"], "%.2f", " s"),
                fmt(None if t["tool_rss_kb"] is None else t["tool_rss_kb"] / 1024.0, "%.1f",
                    " MiB"),
                fmt(t["stall_ms"], "%.0f", " ms"), fmt(t["walk_ms"], "%.0f", " ms"),
                fmt(t["gc_pause_ms"], "%.0f", " ms"),
                fmt(None if t["extra_kb"] is None else t["extra_kb"] / 1024.0, "%.0f", " MiB"),
                "-" if t["objects_min"] is None else format(t["objects_min"], ",")))
        r = s["ratio"]
        print(row % (
            count(s["size"]), "agent/gcdump", "", fmt(r["wall_s"], "%.3f", "x"),
            fmt(r["tool_rss_kb"], "%.3f", "x"), fmt(r["stall_ms"], "%.2f", "x"), "", "",
            fmt(r["extra_kb"], "%.2f", "x"), fmt(r["objects"], "%.4f", "x")))
    print("(medians of the captures that succeeded, %d round%s; objects: the fewest)" % (
        rounds, "" if rounds == 1 else "s"))
    for s in summaries:
        a, g = s["agent"]["objects_min"], s["dotnet-gcdump"]["objects_min"]
        if g and a and g < a:
            print("%s: dotnet-gcdump's dump holds %.0f%% of the objects (events lost): its "
                  "figures are those of an incomplete dump" % (count(s["size"]), 100.0 * g / a))


def main():
    o = parse_args(sys.argv[1:])
    dotnet = shutil.which("dotnet")
    if not dotnet:
        skip("dotnet (the .NET 10 SDK) not found")
    ctx = {"dotnet": dotnet, "agent": os.path.join(o["build"], "bin", "gcsnap-agent"),
           "gcsnap": os.path.join(o["build"], "bin", "gcsnap"),
           "gcdump_timeout": int(os.environ.get("GS_BENCH_GCDUMP_TIMEOUT", "600")),
           "agent_out": os.environ.get("GS_BENCH_AGENT_OUT")}
    for exe in ("agent", "gcsnap"):
        if not os.access(ctx[exe], os.X_OK):
            skip("%s not found: build first" % ctx[exe])
    helptext = subprocess.run([ctx["agent"], "--help"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True).stdout
    if "dotnet:PID" not in helptext:
        skip("this gcsnap-agent has no dotnet source")
    ctx["alloc"] = find_alloc(o["build"], dotnet)
    ctx["gcdump"] = find_gcdump(o["build"], dotnet, not o["no-install"])
    work = os.path.join(os.environ.get("GS_BENCH_DIR") or
                        os.path.join(os.environ.get("TMPDIR", "/tmp"), "gcsnap-bench"),
                        "dotnet-%d" % os.getpid())
    os.makedirs(work, exist_ok=True)
    rows, failed = [], []
    try:
        for n in o["sizes"]:
            for rnd in range(o["rounds"]):
                for tool in (TOOLS if rnd % 2 == 0 else TOOLS[::-1]):
                    r = capture(tool, n, ctx, work)
                    rows.append(r)
                    if "error" in r:
                        failed.append(r)
                    if not o["json"]:
                        print("%s %s round %d: %s" % (count(n), tool, rnd + 1,
                              "failed: " + r["error"] if "error" in r else
                              "%.2f s, %.1f MiB, stall %.0f ms, extra %.0f MiB, %s objects"
                              % (r["wall_s"], r["tool_rss_kb"] / 1024.0, r["stall_ms"],
                                 r["extra_kb"] / 1024.0, format(r["objects"], ","))),
                              file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summaries = [summarize(n, [r for r in rows if r["size"] == n]) for n in o["sizes"]]
    verdicts = targets(summaries)
    if o["json"]:
        print(json.dumps({"rounds": o["rounds"], "captures": rows, "sizes": summaries,
                          "targets": [{"target": t, "pass": v, "figure": f}
                                      for t, v, f in verdicts]}))
    else:
        print_table(summaries, o["rounds"])
        said = set()
        for r in rows:
            notes = [r.get("warning")]
            if not r["hwm_reset"]:
                notes.append("peak memory not reset (clear_refs): extra counts the start too")
            for note in notes:
                line = "%s %s: %s" % (count(r["size"]), r["tool"], note)
                if note and line not in said:
                    said.add(line)
                    print(line)
        print("targets:")
        for t, v, f in verdicts:
            print("  %-4s %s: %s" % ({True: "PASS", False: "MISS", None: "-"}[v], t, f))
    for r in failed:
        print("dotnet.py: %s capture of %s objects failed: %s" % (
            r["tool"], count(r["size"]), r["error"]), file=sys.stderr)
    agent_all = all(v for t, v, _ in verdicts if t.startswith("all "))
    if failed or not agent_all:
        return 1
    if o["check"] and any(v is False for _, v, _ in verdicts):
        print("dotnet.py: %d targets missed" % sum(v is False for _, v, _ in verdicts),
              file=sys.stderr)
        return 1
    return 0


sys.exit(main())
