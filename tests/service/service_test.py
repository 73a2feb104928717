#!/usr/bin/env python3
"""service_test.py - gcsnapd run as an operator runs it: its Prometheus
metrics, its JSON log lines, the OpenAPI description of its HTTP API.

  metrics   GET /metrics behind the API token; scraped before, during and
            after a capture, its counters and gauges move as they should
            (sessions opened and refused, captures by trigger and outcome,
            bytes received and stored, the ingest histogram); promtool
            check metrics finds nothing wrong with the page

usage: service_test.py SUITE BIN_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.request

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402

TOKEN = "service-test-token"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def get(url, token=None):
    """(status, content type, body text) of a GET."""
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()
    except (urllib.error.URLError, OSError):
        return 0, None, ""


def parse(text):
    """{'name{labels}': value} of every sample of an exposition page."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        if not m:
            raise L.Failure("not a sample line: %r" % line)
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


class TokenCollector(L.Collector):
    """A collector with an API token: up once the API answers at all."""

    def _up(self):
        if self.proc.poll() is not None:
            raise L.Failure("gcsnapd exited with status %s:\n%s" % (self.proc.returncode,
                                                                    self.log_text()))
        return get(self.url + "/api/health", TOKEN)[0] == 200

    def snapshots(self, query=""):
        return api(self, "/api/snapshots" + query)["snapshots"]


def token_collector(env):
    path = env.path("token")
    with open(path, "w") as f:
        f.write(TOKEN + "\n")
    return TokenCollector(env.procs, env.gcsnapd, env.work, extra=["--http-token-file", path])


def metrics(env):
    env.need_gcsnapd()
    c = env.c
    col = token_collector(env)
    url = col.url + "/metrics"
    status, _, body = get(url)
    c.equal(status, 401, "GET /metrics without the token")
    status, ctype, body = get(url, TOKEN)
    c.equal(status, 200, "GET /metrics with the token")
    c.ok(ctype and ctype.startswith("text/plain; version=0.0.4"), "exposition content type", ctype)
    before = parse(body)
    for name in ("gcsnapd_agents_connected", "gcsnapd_sessions_opened_total",
                 'gcsnapd_sessions_refused_total{reason="limit"}',
                 'gcsnapd_captures_total{trigger="api",outcome="stored"}',
                 "gcsnapd_snapshots_stored_total", "gcsnapd_received_bytes_total",
                 "gcsnapd_stored_bytes_total", "gcsnapd_ingest_duration_seconds_count",
                 "gcsnapd_captures_pending", "gcsnapd_schedule_lag_seconds",
                 "gcsnapd_store_free_bytes", "process_resident_memory_bytes"):
        c.ok(before.get(name) is not None, "series %s on the page" % name)
    c.equal(before.get("gcsnapd_snapshots_stored_total"), 0, "nothing stored yet")
    c.ok(before.get("gcsnapd_store_free_bytes", 0) > 0, "store free bytes above 0")
    c.ok(before.get("process_resident_memory_bytes", 0) > 1e6, "resident memory above 1 MB")
    c.equal(get(url + "?x=1", TOKEN)[0], 200, "a query string is ignored")
    req = urllib.request.Request(url, method="POST", data=b"",
                                 headers={"Authorization": "Bearer " + TOKEN})
    try:
        urllib.request.urlopen(req, timeout=10)
        c.ok(False, "POST /metrics refused")
    except urllib.error.HTTPError as e:
        c.equal(e.code, 405, "POST /metrics")

    agent = env.procs.start([env.agent, "--source", "mock:objects=300000,seed=5", "--connect",
                             col.agent_addr, "--device-id", "m1", "--retry-max", "1"],
                            log=env.path("agent-m1.log"))
    wait_connected(col, "m1")
    # The same device again is refused as a duplicate.
    dup = env.procs.start([env.agent, "--source", "mock:objects=10", "--connect", col.agent_addr,
                           "--device-id", "m1", "--once"], log=env.path("agent-dup.log"))
    dup.wait(timeout=20)
    mid = parse(get(url, TOKEN)[2])
    c.equal(mid["gcsnapd_agents_connected"], 1, "one agent connected")
    c.equal(mid["gcsnapd_sessions_opened_total"], 1, "one session opened")
    c.equal(mid['gcsnapd_sessions_refused_total{reason="device"}'], 1,
            "the duplicate device refused with reason device")

    scrapes, stop = [], threading.Event()

    def scrape():
        while not stop.is_set():
            scrapes.append(get(url, TOKEN))
    t = threading.Thread(target=scrape)
    t.start()
    try:
        status, out = capture(col, "m1")
    finally:
        stop.set()
        t.join()
    c.equal(status, 200, "capture of m1 stored")
    c.ok(len(scrapes) >= 2 and all(s[0] == 200 for s in scrapes),
         "scrapes during the capture answered 200", [s[0] for s in scrapes])
    recv = [parse(s[2])["gcsnapd_received_bytes_total"] for s in scrapes]
    c.ok(recv == sorted(recv), "bytes received never go down during the capture")
    c.ok(any(parse(s[2])["gcsnapd_captures_pending"] == 1 for s in scrapes),
         "a scrape saw the capture pending")
    after = parse(get(url, TOKEN)[2])
    snap = col.snapshots()[0]
    c.equal(after['gcsnapd_captures_total{trigger="api",outcome="stored"}'], 1,
            "one API capture stored")
    c.equal(after['gcsnapd_captures_total{trigger="api",outcome="failed"}'], 0, "no API capture failed")
    c.equal(after["gcsnapd_snapshots_stored_total"], 1, "one snapshot stored")
    c.equal(after["gcsnapd_stored_bytes_total"], snap["file_bytes"], "bytes stored = the file's")
    c.ok(after["gcsnapd_received_bytes_total"] >= snap["wire_bytes"],
         "bytes received cover the snapshot's wire bytes")
    c.equal(after["gcsnapd_ingest_duration_seconds_count"], 1, "one ingest in the histogram")
    c.equal(after['gcsnapd_ingest_duration_seconds_bucket{le="+Inf"}'], 1, "the +Inf bucket")
    c.equal(after["gcsnapd_captures_pending"], 0, "no capture pending after it ended")

    # The agent stops: a capture asked for then fails as "api", "failed".
    env.procs.stop(agent)
    L.wait_until("m1 to leave", lambda: parse(get(url, TOKEN)[2])["gcsnapd_agents_connected"] == 0)
    c.equal(capture(col, "m1")[0], 409, "capture of a device gone")
    promtool(env, get(url, TOKEN)[2])
    col.stop()


def wait_connected(col, device):
    L.wait_until("device %s to connect" % device,
                 lambda: any(d["device_id"] == device and d["connected"]
                             for d in api(col, "/api/devices")["devices"]))


def api(col, path, method="GET"):
    req = urllib.request.Request(col.url + path, method=method,
                                 headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def capture(col, device):
    req = urllib.request.Request(col.url + "/api/devices/%s/capture?wait=1&timeout=30" % device,
                                 method="POST", data=b"",
                                 headers={"Authorization": "Bearer " + TOKEN})
    try:
        with urllib.request.urlopen(req, timeout=40) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def promtool(env, page):
    """promtool check metrics reads the page on stdin; Debian's prometheus
    package has it."""
    tool = shutil.which("promtool")
    if not tool:
        env.c.skip("promtool check metrics: promtool is not installed")
        return
    r = subprocess.run([tool, "check", "metrics"], input=page, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    env.c.ok(r.returncode == 0 and not r.stdout.strip(), "promtool check metrics is clean",
             r.stdout)


SUITES = {"metrics": metrics}

if __name__ == "__main__":
    sys.exit(L.main("service_test.py", SUITES, L.Env))
