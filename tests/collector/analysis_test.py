#!/usr/bin/env python3
"""analysis_test.py - the analyses of the HTTP API under concurrent load.

  concurrent  for a few seconds, rounds of dominators, paths, types, diff
              and trend requests on two stored snapshots, over HTTP/1.1
              (4 at a time) and HTTP/2 (many streams on one TLS
              connection), some of them abandoned by their client mid-way:
              every request that waits is answered exactly once, with a
              whole JSON answer; no more analyses run at once than the
              collector's limit (2), and a burst past its waiting line (32)
              gets 503 busy with Retry-After for the extra ones; gcsnapd
              stays up, its log holds no sanitizer report, and no analysis
              is left running at the end. Run it in a sanitizer tree to
              check the runner's memory too.

usage: analysis_test.py SUITE BIN_DIR WORK_DIR
Exit 0 when every check passed, 1 when one failed, 77 when gcsnapd, curl
(with HTTP/2) or openssl is missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402
import fake_agent as F         # noqa: E402

MAX_ANALYSES = 2               # the collector's limit (collector/README.md)
SECONDS = 6


class Env(L.Env):
    def __init__(self, bin_dir, work):
        super().__init__(bin_dir, work)
        self.need_gcsnapd()
        for tool in ("curl", "openssl"):
            if not shutil.which(tool):
                raise L.Skip("the %s command is not installed" % tool)
        if "HTTP2" not in L.run(["curl", "--version"]).stdout:
            raise L.Skip("curl without HTTP/2")


def children(pid):
    """The PIDs of pid's children (its analysis processes), whichever of its
    threads started them. The threads' lists are read one after another, so
    a child reaped meanwhile may be listed beside the one started after it:
    only those still there once all lists are read count (a new child is
    started only after the one before it was reaped)."""
    return [c for c in listed_children(pid) if os.path.exists("/proc/%s" % c)]


def listed_children(pid):
    found = []
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return found
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                found += f.read().split()
        except OSError:
            pass
    return found


def curl(cacert, http2, urls, max_time, parallel=None):
    """Runs one curl for urls in parallel; [(code, bytes, error, body)]."""
    argv = ["curl", "-s", "--cacert", cacert, "--parallel", "--parallel-max",
            str(parallel or (16 if http2 else 4)),
            "--max-time", str(max_time), "-w", "%{http_code} %{size_download} %{filename_effective} "
            "%{errormsg}\\n", "--http2" if http2 else "--http1.1"]
    outs = []
    for i, u in enumerate(urls):
        out = u[1] + ".%d" % i
        outs.append(out)
        argv += [u[0], "-o", out]
    r = subprocess.run(argv, capture_output=True, text=True, timeout=max_time + 60)
    got = []
    for line in r.stdout.splitlines():
        m = re.match(r"^(\d{3}) (\d+) (\S+) ?(.*)$", line)
        if m:
            body = b""
            if os.path.exists(m.group(3)):
                with open(m.group(3), "rb") as f:
                    body = f.read()
                os.unlink(m.group(3))
            got.append((int(m.group(1)), int(m.group(2)), m.group(4), body))
    return got


def suite_concurrent(env):
    c = env.c
    key, cert = env.path("api.key"), env.path("api.pem")
    r = L.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
               "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1",
               "-addext", "subjectAltName=IP:127.0.0.1"])
    if r.returncode != 0:
        raise L.Failure("openssl req failed: %s" % r.stderr)
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    a = F.FakeAgent(col.agent_addr, "conc")
    for sid in (1, 2):
        a.stream(0, F.Heap(objects=20000 + sid), snapshot_id=sid)
        if a.answer()[0] != "ack":
            raise L.Failure("the snapshots were not stored")
    a.close()
    col.stop()
    log = env.path("tls.log")
    port = L.free_port()
    p = env.procs.start([env.gcsnapd, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:%d" % port,
                         "--store", col.store, "--http-tls-cert", cert, "--http-tls-key", key],
                        log=log)
    base = "https://127.0.0.1:%d" % port
    L.wait_until("the TLS API", lambda: L.run(["curl", "-s", "--cacert", cert, "-o", "/dev/null", "-w",
                                               "%{http_code}", base + "/api/health"]).stdout == "200",
                 timeout=15)
    snaps = sorted(s["id"] for s in json.loads(L.run(["curl", "-s", "--cacert", cert,
                                                      base + "/api/snapshots"]).stdout)["snapshots"])
    routes = ["/api/snapshots/%d/dominators?top=5" % snaps[0], "/api/snapshots/%d/paths?type=System.Object&max=2" % snaps[1],
              "/api/snapshots/%d/dominators?by_type=1" % snaps[1], "/api/diff?old=%d&new=%d" % tuple(snaps),
              "/api/devices/conc/trend?last=2", "/api/snapshots/%d/types?limit=5" % snaps[0]]
    # /types loads a snapshot's histogram once (a summary child of its own,
    # outside the analyses' limit) and answers from memory after.
    for sid in snaps:
        L.run(["curl", "-s", "--cacert", cert, "-o", "/dev/null", base + "/api/snapshots/%d/types" % sid])
    peak, stop = [0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], len(children(p.pid)))
            time.sleep(0.005)
    sampler = threading.Thread(target=sample)
    sampler.start()
    answered, busy, bad, rounds = 0, 0, [], 0
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < SECONDS:
            rounds += 1
            for http2 in (False, True):
                urls = [(base + routes[i % len(routes)] + "&r=%d" % rounds, env.path("o%d" % http2))
                        for i in range(40)]
                for code, size, err, body in curl(cert, http2, urls, 30):
                    if code == 200:
                        try:
                            json.loads(body)
                            answered += 1
                        except ValueError:
                            bad.append((http2, code, size, "not whole JSON"))
                    elif code == 503 and b"busy" in body:
                        busy += 1
                    else:
                        bad.append((http2, code, size, err))
                # Clients that give up mid-way (the request goes before its analysis ends).
                curl(cert, http2, urls[:12], 0.05)
    except Exception:
        stop.set()
        sampler.join()
        raise
    # A burst past the waiting line: the extra requests are told to come back.
    burst = [(base + routes[i % 4] + "&burst=%d" % i, env.path("b")) for i in range(80)]
    codes = [code for code, _, _, body in curl(cert, True, burst, 60, parallel=80)]
    retry = L.run(["curl", "-s", "--cacert", cert, "-D", "-", "-o", "/dev/null", "--http2", "--parallel",
                   "--parallel-max", "80"] + [u for u, _ in burst]).stdout
    stop.set()
    sampler.join()
    c.ok(codes.count(503) > 0 and codes.count(200) > 0 and set(codes) <= {200, 503},
         "a burst of 80 gets whole answers and 503 busy past the line, nothing else", codes)
    c.ok(re.search(r"(?im)^retry-after: \d+", retry), "503 busy says when to retry (Retry-After)")
    L.log("%d rounds: %d answered, %d busy, %d wrong; at most %d analyses at once; burst of 80: %d "
          "answered, %d busy" % (rounds, answered, busy, len(bad), peak[0], codes.count(200),
                                 codes.count(503)))
    c.equal(bad[:5], [], "every request is answered once, with a whole answer or 503 busy "
            "(%d rounds over HTTP/1.1 and HTTP/2)" % rounds)
    c.ok(answered > 0, "analyses were answered (%d)" % answered)
    c.ok(peak[0] <= MAX_ANALYSES, "at most %d analyses ran at once (%d)" % (MAX_ANALYSES, peak[0]))
    time.sleep(0.5)
    c.ok(p.poll() is None, "gcsnapd is still up")
    c.equal(children(p.pid), [], "no analysis is left running")
    with open(log, errors="replace") as f:
        text = f.read()
    c.ok("AddressSanitizer" not in text and "runtime error" not in text and "LeakSanitizer" not in text,
         "no sanitizer report", text[-3000:])
    # (Its exit is not checked here: after clients that gave up mid-way,
    # h2o 2.2.5 still holds some connections at the stop and gcsnapd leaves
    # its loop open, which LeakSanitizer reports; collector_http checks a
    # clean stop.)
    env.procs.stop(p)


SUITES = {"concurrent": suite_concurrent}

if __name__ == "__main__":
    sys.exit(L.main("analysis_test.py", SUITES, Env))
