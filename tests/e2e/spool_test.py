#!/usr/bin/env python3
"""spool_test.py - end-to-end tests of the captures gcsnap-agent makes on its
own: the local schedule (--every), the heap triggers (--trigger, --cooldown)
and store-and-forward (--spool), against a real gcsnapd on loopback.

usage: spool_test.py SUITE BIN_DIR WORK_DIR

Suites:
  every     --every 1s: snapshots tagged "every", unasked, about a second apart
  trigger   heap-growth fires as the demo heap grows, never twice within the
            cool-down; a growth never reached fires nothing; heap-bytes
  forward   the collector stops, the agent captures 3 times into its spool,
            the collector starts again on the same store and port: every
            snapshot arrives exactly once, in capture order
  restart   snapshots spooled by an agent that was stopped are uploaded by
            the next one; one uploaded again is not stored twice
  full      the spool bound: --spool-max and --spool-bytes drop the oldest

Exit status 0 when every check passed, 1 when one failed, 77 (skipped) when
gcsnapd or the agent's --spool is missing from the build.
"""
import os
import re
import shutil
import sys
import time

sys.dont_write_bytecode = True        # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L            # noqa: E402

SPOOLED = re.compile(r"agent: spooled snapshot (\d+) \(([^)]*)\)")
DROPPED = re.compile(r"dropped the oldest, snapshot (\d+)")
SPOOL_NAME = re.compile(r"^(\d{20})\.gcspool$")


class FixedCollector(L.Collector):
    """gcsnapd on given ports and store, so that it can be restarted as the
    same collector."""

    def __init__(self, procs, gcsnapd, work, agent_port, http_port, name="gcsnapd"):
        self.procs = procs
        self.store = os.path.join(work, name + "-store")
        self.log = os.path.join(work, "%s-%d.log" % (name, time.monotonic_ns()))
        self.agent_port, self.http_port = agent_port, http_port
        self.url = "http://127.0.0.1:%d" % http_port
        self.proc = procs.start([gcsnapd, "--listen", "127.0.0.1:%d" % agent_port,
                                 "--http", "127.0.0.1:%d" % http_port, "--store", self.store],
                                log=self.log)
        L.wait_until("the collector's HTTP API", self._up, timeout=15)


class Env(L.Env):
    def need(self):
        self.need_gcsnapd()
        if "--spool" not in L.run([self.agent, "--help"]).stdout:
            raise L.Skip("gcsnap-agent has no --spool")

    def agent_at(self, addr, source, device, log, *extra):
        return self.procs.start([self.agent, "--source", source, "--connect", addr,
                                 "--device-id", device, "--retry-max", "0.5"] + list(extra),
                                log=self.path(log))

    def log_text(self, log):
        with open(self.path(log), errors="replace") as f:
            return f.read()

    def spooled(self, log):
        """(ID, trigger) of each snapshot the agent logged as spooled."""
        return [(int(m.group(1)), m.group(2)) for m in SPOOLED.finditer(self.log_text(log))]


def spool_ids(folder):
    """The IDs of the snapshots in a spool folder, oldest first."""
    if not os.path.isdir(folder):
        return []
    return sorted(int(m.group(1)) for m in map(SPOOL_NAME.match, os.listdir(folder)) if m)


def stored(col, device):
    """The device's complete snapshots, in the order the collector stored them."""
    snaps = [s for s in col.snapshots("?device=%s&limit=1000" % device) if s["status"] == "complete"]
    return sorted(snaps, key=lambda s: s["id"])


def free_ports():
    while True:
        a, h = L.free_port(), L.free_port()
        if a != h:
            return a, h


# ---- suites ---------------------------------------------------------------

def suite_every(env):
    env.need()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    agent = env.agent_at(col.agent_addr, "mock:objects=3000,seed=3", "sched", "agent.log",
                         "--every", "1s")
    col.wait_connected("sched")
    time.sleep(3.6)
    env.procs.stop(agent)
    time.sleep(0.5)
    snaps = stored(col, "sched")
    n = len(snaps)
    c.ok(3 <= n <= 4, "--every 1s for 3.6 s: 3 snapshots (within one)", [s["id"] for s in snaps])
    c.ok(all(s["trigger"] == "every" for s in snaps), "each is tagged \"every\"",
         [s["trigger"] for s in snaps])
    c.ok(all(s.get("request_id") in (0, None) for s in snaps), "none was asked for (request 0)")
    gaps = [(b["agent_snapshot_id"] - a["agent_snapshot_id"]) // 1000 for a, b in zip(snaps, snaps[1:])]
    c.ok(gaps and all(800 <= g <= 1600 for g in gaps), "they are about a second apart (ms)", gaps)
    # Without --spool and without a collector, nothing is taken and it says so.
    log = "agent-alone.log"
    dead = "127.0.0.1:%d" % L.free_port()
    alone = env.agent_at(dead, "mock:objects=3000", "alone", log, "--every", "200ms")
    time.sleep(1.2)
    env.procs.stop(alone)
    c.ok("no collector and no --spool: snapshot for every not taken" in env.log_text(log),
         "without --spool, a capture due while the collector is away is logged as not taken",
         env.log_text(log)[-800:])
    col.stop()


def suite_trigger(env):
    env.need()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    demo = "demo:objects=20000,steps=10,every=50"
    common = ["--cooldown", "2s", "--check-interval", "100ms"]
    grow = env.agent_at(col.agent_addr, demo, "grow", "grow.log",
                        "--trigger", "heap-growth=10%", *common)
    flat = env.agent_at(col.agent_addr, demo, "flat", "flat.log",
                        "--trigger", "heap-growth=100000%", *common)
    big = env.agent_at(col.agent_addr, demo, "big", "big.log", "--trigger", "heap-bytes=1K",
                       *common)
    col.wait_devices(["grow", "flat", "big"])
    t0 = time.monotonic()
    time.sleep(5.5)
    for p in (grow, flat, big):
        env.procs.stop(p)
    elapsed = time.monotonic() - t0 + 1        # the agents started before the wait
    time.sleep(0.5)
    for dev, tag in (("grow", "heap-growth=10%"), ("big", "heap-bytes=1K")):
        snaps = stored(col, dev)
        most = int(elapsed / 2) + 1
        c.ok(2 <= len(snaps) <= most, "%s: the trigger fired, at most once per 2 s cool-down"
             " (2 to %d in %.1f s)" % (dev, most, elapsed), len(snaps))
        c.ok(all(s["trigger"] == tag for s in snaps), "%s: tagged %s" % (dev, tag),
             [s["trigger"] for s in snaps])
        c.ok(all(s.get("request_id") in (0, None) for s in snaps), "%s: request 0" % dev)
        gaps = [(b["agent_snapshot_id"] - a["agent_snapshot_id"]) // 1000
                for a, b in zip(snaps, snaps[1:])]
        c.ok(all(g >= 2000 for g in gaps), "%s: never twice within the cool-down (ms)" % dev, gaps)
        log = env.log_text(dev + ".log")
        c.ok(re.search(re.escape(tag) + r": the heap holds \d+ bytes", log),
             "%s: the agent logs why it fired" % dev, log[-800:])
    c.equal(stored(col, "flat"), [], "a growth never reached fires nothing")
    r = L.run([env.agent, "--source", "mock", "--connect", col.agent_addr, "--device-id", "m",
               "--trigger", "heap-growth=5%"])
    c.ok(r.returncode == 2 and "cannot tell its heap's size" in r.stderr,
         "--trigger with a source that cannot tell its heap's size: usage error", r.stderr)
    col.stop()


def suite_forward(env):
    """The collector stops, the agent captures 3 times, the collector comes
    back on the same store and port: all arrive, each once, in order."""
    env.need()
    c = env.c
    spool = env.path("spool")
    agent_port, http_port = free_ports()
    col = FixedCollector(env.procs, env.gcsnapd, env.work, agent_port, http_port)
    addr = "127.0.0.1:%d" % agent_port
    agent = env.agent_at(addr, "mock:objects=5000,seed=11", "fwd", "agent.log",
                         "--every", "1s", "--spool", spool)
    L.wait_until("a first snapshot stored", lambda: stored(col, "fwd"), timeout=20)
    col.stop()
    before = len(env.spooled("agent.log"))
    L.wait_until("3 snapshots spooled while the collector is down",
                 lambda: len(spool_ids(spool)) >= 3, timeout=20)
    waiting = spool_ids(spool)
    c.ok(len(waiting) >= 3, "3 snapshots wait in the spool", waiting)
    col = FixedCollector(env.procs, env.gcsnapd, env.work, agent_port, http_port)
    L.wait_until("the waiting snapshots to arrive",
                 lambda: set(waiting) <= {s["agent_snapshot_id"] for s in stored(col, "fwd")},
                 timeout=30)
    env.procs.stop(agent)
    time.sleep(0.3)
    logged = [i for i, t in env.spooled("agent.log")]
    left = spool_ids(spool)
    snaps = stored(col, "fwd")
    got = [s["agent_snapshot_id"] for s in snaps]
    c.ok(len(logged) - before >= 3, "the agent captured while the collector was down", logged)
    c.equal(len(got), len(set(got)), "no snapshot is stored twice")
    c.equal(sorted(set(got) | set(left)), sorted(logged),
            "every snapshot spooled is stored or still spooled (none lost)")
    c.ok(not set(got) & set(left), "a stored snapshot has left the spool", (got, left))
    c.equal(got, sorted(got), "they are stored in capture order")
    c.ok(all(s["trigger"] == "every" for s in snaps), "each keeps its trigger")
    c.ok(not [n for n in os.listdir(spool) if n.endswith(".tmp")], "no temporary file is left")
    col.stop()


def suite_restart(env):
    """Spooled snapshots survive the agent; a repeated upload is stored once."""
    env.need()
    c = env.c
    spool = env.path("spool")
    dead = "127.0.0.1:%d" % L.free_port()
    first = env.agent_at(dead, "mock:objects=4000,seed=12", "rs", "first.log",
                         "--every", "300ms", "--spool", spool)
    L.wait_until("2 snapshots spooled", lambda: len(spool_ids(spool)) >= 2, timeout=20)
    env.procs.stop(first)
    waiting = spool_ids(spool)
    c.ok(len(waiting) >= 2, "the stopped agent left its snapshots in the spool", waiting)
    c.ok(not [n for n in os.listdir(spool) if not SPOOL_NAME.match(n)],
         "and no temporary file", os.listdir(spool))
    keep = env.path("copy.gcspool")
    shutil.copy(os.path.join(spool, "%020d.gcspool" % waiting[0]), keep)
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    second = env.agent_at(col.agent_addr, "mock:objects=4000,seed=12", "rs", "second.log",
                          "--spool", spool)
    L.wait_until("the spool to drain", lambda: not spool_ids(spool), timeout=30)
    got = [s["agent_snapshot_id"] for s in stored(col, "rs")]
    c.equal(got, waiting, "the next agent uploaded them, oldest first, each once")
    env.procs.stop(second)
    # The same snapshot again (as when an Ack is lost): acknowledged with the
    # ID it was stored as, not stored a second time, and removed.
    shutil.copy(keep, os.path.join(spool, "%020d.gcspool" % waiting[0]))
    third = env.agent_at(col.agent_addr, "mock:objects=4000,seed=12", "rs", "third.log",
                         "--spool", spool)
    L.wait_until("the spool to drain again", lambda: not spool_ids(spool), timeout=30)
    env.procs.stop(third)
    snaps = stored(col, "rs")
    c.equal([s["agent_snapshot_id"] for s in snaps], waiting, "the repeated upload is not stored twice")
    c.ok("snapshot %d stored as %d" % (waiting[0], snaps[0]["id"]) in env.log_text("third.log"),
         "the repeated upload is acknowledged with the first stored ID", env.log_text("third.log"))
    col.stop()


def suite_full(env):
    env.need()
    c = env.c
    dead = "127.0.0.1:%d" % L.free_port()
    # --spool-max 3: the oldest go, the newest stay.
    spool = env.path("spool-max")
    agent = env.agent_at(dead, "mock:objects=2000,seed=13", "full", "max.log",
                         "--every", "150ms", "--spool", spool, "--spool-max", "3")
    L.wait_until("6 snapshots spooled", lambda: len(env.spooled("max.log")) >= 6, timeout=30)
    env.procs.stop(agent)
    left = spool_ids(spool)
    dropped = [int(m.group(1)) for m in DROPPED.finditer(env.log_text("max.log"))]
    c.equal(len(left), 3, "--spool-max 3: the spool holds 3 snapshots")
    c.ok(len(dropped) >= 3, "--spool-max 3: each snapshot dropped is logged", dropped)
    c.ok(not set(dropped) & set(left), "the dropped ones are gone", (dropped, left))
    c.ok(dropped and left and max(dropped) < min(left), "the oldest are dropped, the newest kept",
         (dropped, left))
    # --spool-bytes: room for two snapshots of this heap, not three.
    size = max(os.path.getsize(os.path.join(spool, "%020d.gcspool" % i)) for i in left)
    spool = env.path("spool-bytes")
    agent = env.agent_at(dead, "mock:objects=2000,seed=13", "full", "bytes.log",
                         "--every", "150ms", "--spool", spool, "--spool-bytes",
                         str(size * 5 // 2))
    L.wait_until("5 snapshots spooled", lambda: len(env.spooled("bytes.log")) >= 5, timeout=30)
    env.procs.stop(agent)
    c.equal(len(spool_ids(spool)), 2, "--spool-bytes of 2.5 snapshots: the spool holds 2")
    # A bound below one snapshot keeps the newest alone.
    spool = env.path("spool-tiny")
    agent = env.agent_at(dead, "mock:objects=2000,seed=13", "full", "tiny.log",
                         "--every", "150ms", "--spool", spool, "--spool-bytes", "1K")
    L.wait_until("3 snapshots spooled", lambda: len(env.spooled("tiny.log")) >= 3, timeout=30)
    env.procs.stop(agent)
    c.equal(len(spool_ids(spool)), 1, "--spool-bytes below one snapshot: the newest is kept alone")


SUITES = {"every": suite_every, "trigger": suite_trigger, "forward": suite_forward,
          "restart": suite_restart, "full": suite_full}


if __name__ == "__main__":
    sys.exit(L.main("spool_test.py", SUITES, Env))
