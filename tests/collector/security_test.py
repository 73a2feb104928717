#!/usr/bin/env python3
"""security_test.py - the collector's edges: what it refuses to expose, the
HTTP API's bearer token, HTTPS, and names from the wire.

  exposure  the agent port and the HTTP API beyond loopback are refused
            (exit 2) without agent keys / a token, allowed with them or
            with --insecure; bad token, certificate and key files exit 2.
  token     with --http-token-file every /api request needs the token
            (401 JSON error otherwise, with WWW-Authenticate), compared
            exactly; gcsnap sends it from --token-file or $GCSNAP_TOKEN.
  tls       a self-signed certificate made with the openssl command: curl
            with --cacert and the token gets 200, plain http and an
            unknown CA fail, a wrong token is 401; gcsnap devices,
            capture and fetch work over https with --cacert.
  names     agents with hostile device IDs and application names: the
            collector refuses the ones that are not text (and says so),
            stores the others in folders under the store only, logs
            printable ASCII only, returns the names exactly through the
            JSON API and a safe download file name; gcsnap summary and
            gcsnap devices escape control characters in their tables.
  requests  request IDs are the collector's: a SnapshotBegin naming one the
            session was not asked for (2^64-1, another device's) is stored
            as unasked, and IDs rise across a restart.

usage: security_test.py SUITE BIN_DIR WORK_DIR     (SUITE: one of the above)

Exit 0 when every check passed, 1 when one failed, 77 when a tool it needs
(gcsnapd, curl, openssl) is missing.
"""
import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402
import fake_agent as F         # noqa: E402

TOKEN = "s3cret-Token_0123456789abcdef"


class Env(L.Env):
    def __init__(self, bin_dir, work):
        super().__init__(bin_dir, work)
        for tool in (self.gcsnapd, self.gcsnap):
            if not os.access(tool, os.X_OK):
                raise L.Skip("%s is not built" % tool)
        self.token_file = self.write("token", TOKEN + "\n")

    def write(self, name, text):
        p = self.path(name)
        with open(p, "w") as f:
            f.write(text)
        return p


def need(tool):
    if not shutil.which(tool):
        raise L.Skip("the %s command is not installed (toolchains/install-deps.sh)" % tool)


def start_bad(env, name, args):
    """Runs gcsnapd with args that must be refused: (exit status, output)."""
    r = L.run([env.gcsnapd, "--store", env.path(name + "-store")] + args, timeout=20)
    return r.returncode, r.stdout + r.stderr


def daemon(env, name, args, scheme="http"):
    """gcsnapd started with args on free loopback ports unless args (or a
    config file in them) give others; returns (proc, log path, agents
    address, API base URL)."""
    log = env.path(name + ".log")
    argv = [env.gcsnapd, "--store", env.path(name + "-store")]
    if "--listen" not in args and "--config" not in args:
        argv += ["--listen", "127.0.0.1:0"]
    if "--http" not in args and "--config" not in args:
        argv += ["--http", "127.0.0.1:0"]
    p = env.procs.start(argv + args, log=log)

    def bound():
        if p.poll() is not None:
            raise L.Failure("gcsnapd %s exited (%s):\n%s" % (name, p.returncode, read(log)))
        text = read(log)
        return "HTTP API on" in text and text
    text = L.wait_until("gcsnapd %s to listen" % name, bound, timeout=15)
    agents = re.search(r"listening for agents on (\S+)", text).group(1)
    api = re.search(r"HTTP API on (\S+?)/api/", text).group(1)
    if not api.startswith(scheme + "://"):
        raise L.Failure("gcsnapd %s serves %s, expected %s" % (name, api, scheme))
    return p, log, agents, api


def wait_log(log, text, timeout=5):
    """Whether text shows up in the log within timeout seconds."""
    try:
        return L.wait_until("'%s' in the log" % text, lambda: text in read(log), timeout=timeout)
    except L.Failure:
        return False


def read(path, mode="r"):
    try:
        with open(path, mode, **({} if "b" in mode else {"errors": "replace"})) as f:
            return f.read()
    except OSError:
        return b"" if "b" in mode else ""


def curl(url, *extra, output=None):
    """(curl exit status, HTTP status, headers, body) of one request; the
    body goes to output when given (and is then returned empty)."""
    with tempfile.NamedTemporaryFile() as tmp:
        r = subprocess.run(["curl", "-s", "-D", "-", "-o", output or tmp.name, "-w",
                            "\n%{http_code}", "--max-time", "20", *extra, url],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        body = b"" if output else tmp.read()
    out = r.stdout.decode(errors="replace")
    head, _, status = out.rpartition("\n")
    return r.returncode, int(status or 0), head, body


def bearer(token=TOKEN):
    return ["-H", "Authorization: Bearer " + token]


# ---- exposure -----------------------------------------------------------

def suite_exposure(env):
    c = env.c
    rc, out = start_bad(env, "http-open", ["--listen", "127.0.0.1:0", "--http", "0.0.0.0:0"])
    c.equal(rc, 2, "--http 0.0.0.0 without a token exits 2")
    c.ok("refusing to serve the HTTP API on 0.0.0.0:0" in out and "--http-token-file" in out,
         "the refusal says why and what to give", out)
    rc, out = start_bad(env, "http-open6", ["--listen", "127.0.0.1:0", "--http", "[::]:0"])
    c.equal(rc, 2, "--http [::] without a token exits 2")

    rc, out = start_bad(env, "agents-open", ["--listen", "0.0.0.0:0", "--http", "127.0.0.1:0"])
    c.equal(rc, 2, "--listen 0.0.0.0 with no agent keys exits 2")
    c.ok("refusing to listen for agents on 0.0.0.0:0" in out and "gcsnap keys add" in out,
         "the agents' refusal says why and what to do", out)

    # Loopback in all its spellings is fine without anything.
    for addr in ("127.0.0.1:0", "127.1.2.3:0", "[::1]:0"):
        try:
            p, log, _, _ = daemon(env, "lo-" + addr.strip("[]:0").replace(":", "_"),
                                  ["--listen", addr, "--http", addr])
            stops_cleanly(env, p, "loopback %s starts and stops cleanly" % addr)
        except L.Failure as e:
            if addr.startswith("[::1]") and "address not available" in str(e).lower():
                c.skip("no IPv6 loopback here")
            else:
                c.ok(False, "loopback %s starts" % addr, e)

    # --insecure allows both, with a warning for each.
    p, log, agents, api = daemon(env, "insecure", ["--listen", "0.0.0.0:0", "--http", "0.0.0.0:0",
                                                    "--insecure"])
    c.ok(wait_log(log, "without agent keys (--insecure)"), "--insecure: the agent port warns", read(log))
    c.ok(wait_log(log, "without a token (--insecure)"), "--insecure: the HTTP API warns", read(log))
    port = api.rsplit(":", 1)[1]
    c.equal(L.http_json("http://127.0.0.1:%s/api/health" % port)[0], 200,
            "--insecure: the API answers without a token")
    stops_cleanly(env, p, "--insecure daemon stops cleanly")

    # A token is enough for the HTTP API beyond loopback.
    p, log, agents, api = daemon(env, "token-open", ["--http", "0.0.0.0:0",
                                                      "--http-token-file", env.token_file])
    port = api.rsplit(":", 1)[1]
    c.equal(curl("http://127.0.0.1:%s/api/health" % port)[1], 401,
            "beyond loopback with a token: no token is 401")
    c.equal(curl("http://127.0.0.1:%s/api/health" % port, *bearer())[1], 200,
            "beyond loopback with a token: the token is 200")
    stops_cleanly(env, p, "token daemon stops cleanly")

    # --require-keys is enough for the agent port: no agent gets in without a key.
    p, log, _, _ = daemon(env, "require-keys", ["--listen", "0.0.0.0:0", "--require-keys"])
    c.ok(not wait_log(log, "--insecure", timeout=0.5), "--require-keys: no warning", read(log))
    stops_cleanly(env, p, "--require-keys daemon stops cleanly")

    # Agent keys in the catalog are enough for the agent port.
    store = env.path("keyed-store")
    r = L.run([env.gcsnap, "keys", "add", "dev-k", "--store", store,
               "--key-file", env.path("dev-k.key")])
    if r.returncode != 0:
        c.skip("gcsnap keys add does not work here: %s" % (r.stdout + r.stderr).strip())
    else:
        log = env.path("keyed.log")
        p = env.procs.start([env.gcsnapd, "--store", store, "--listen", "0.0.0.0:0",
                             "--http", "127.0.0.1:0"], log=log)
        L.wait_until("the keyed daemon to listen",
                     lambda: p.poll() is not None or "HTTP API on" in read(log), timeout=15)
        c.ok(p.poll() is None, "--listen 0.0.0.0 with agent keys starts", read(log))
        c.ok("--insecure" not in read(log), "with agent keys there is no warning", read(log))
        stops_cleanly(env, p, "keyed daemon stops cleanly")

    # Bad files: clear errors, exit 2.
    cases = [
        ("missing-token", ["--http-token-file", env.path("nope")], "cannot open --http-token-file"),
        ("empty-token", ["--http-token-file", env.write("empty", "\n")], "must be one line of visible"),
        ("blank-token", ["--http-token-file", env.write("blank", "two words\n")],
         "must be one line of visible"),
        ("long-token", ["--http-token-file", env.write("long", "x" * 1025 + "\n")],
         "longer than 1024 bytes"),
        ("cert-alone", ["--http-tls-cert", env.token_file], "go together"),
        ("bad-cert", ["--http-tls-cert", env.token_file, "--http-tls-key", env.token_file],
         "cannot load the TLS certificate"),
        ("bad-insecure", ["--config", env.write("insecure.conf", "insecure = maybe\n")],
         "insecure must be yes or no"),
    ]
    for name, args, want in cases:
        rc, out = start_bad(env, name, args)
        c.equal(rc, 2, "%s: exit status" % name)
        c.ok(want in out, "%s: the message says '%s'" % (name, want), out)
    # The config file's keys work like the flags.
    conf = env.write("open.conf", "http = 0.0.0.0:0\nlisten = 127.0.0.1:0\ninsecure = yes\n")
    p, log, _, _ = daemon(env, "conf-insecure", ["--config", conf])
    c.ok(wait_log(log, "without a token (--insecure)"), "insecure = yes in the config file")
    stops_cleanly(env, p, "config daemon stops cleanly")


# ---- token --------------------------------------------------------------

def gcsnap(env, args, token_env=None, timeout=60):
    e = dict(os.environ)
    e.pop("GCSNAP_TOKEN", None)
    e.pop("GCSNAP_COLLECTOR", None)
    if token_env is not None:
        e["GCSNAP_TOKEN"] = token_env
    return L.run([env.gcsnap] + args, env=e, timeout=timeout)


def suite_token(env):
    need("curl")
    c = env.c
    p, log, agents, api = daemon(env, "token", ["--http-token-file", env.token_file])
    health = api + "/api/health"
    rc, status, head, body = curl(health)
    c.equal(status, 401, "no Authorization header: 401")
    c.ok(b'"error":"unauthorized"' in body, "401 body is the API's JSON error", body)
    c.ok(re.search(r"(?im)^www-authenticate: Bearer", head), "401 says WWW-Authenticate: Bearer", head)
    c.equal(curl(health, *bearer())[1], 200, "the right token: 200")
    c.equal(curl(health, "-H", "Authorization: bearer " + TOKEN)[1], 200, "the scheme in any case")
    for wrong in (TOKEN[:-1], TOKEN + "x", TOKEN.upper(), "x"):
        c.equal(curl(health, *bearer(wrong))[1], 401, "a wrong token (%s...) is 401" % wrong[:6])
    c.equal(curl(health, "-H", "Authorization: Basic " + TOKEN)[1], 401, "another scheme is 401")
    c.equal(curl(api + "/api/devices", *bearer("nope"))[1], 401, "every /api route needs it")
    c.equal(curl(api + "/api/devices/x/capture", "-X", "POST")[1], 401, "POST routes need it")
    c.ok(TOKEN not in read(log), "the token never reaches the log")

    r = gcsnap(env, ["devices", "--collector", api])
    c.equal(r.returncode, 1, "gcsnap devices without a token: exit 1")
    c.ok("HTTP 401, unauthorized" in r.stderr, "gcsnap says the collector wants a token", r.stderr)
    r = gcsnap(env, ["devices", "--collector", api, "--token-file", env.token_file])
    c.equal(r.returncode, 0, "gcsnap devices --token-file: exit 0")
    r = gcsnap(env, ["--token-file=" + env.token_file, "snapshots", "--collector", api, "--json"])
    c.equal(r.returncode, 0, "gcsnap --token-file=PATH before the command")
    r = gcsnap(env, ["schedule", "list", "--collector", api], token_env=TOKEN)
    c.equal(r.returncode, 0, "gcsnap schedule list with $GCSNAP_TOKEN: exit 0")
    r = gcsnap(env, ["devices", "--collector", api], token_env="wrong")
    c.equal(r.returncode, 1, "gcsnap with a wrong $GCSNAP_TOKEN: exit 1")
    r = gcsnap(env, ["devices", "--collector", api], token_env="bad token\r\nX-Evil: 1")
    c.equal(r.returncode, 2, "a token with blanks or line ends is a usage error")
    r = gcsnap(env, ["devices", "--collector", api, "--token-file", env.path("nope")])
    c.equal(r.returncode, 2, "an unreadable --token-file is a usage error")
    c.ok("cannot open --token-file" in r.stderr, "and says so", r.stderr)
    r = gcsnap(env, ["devices", "--collector", api, "--token-file"])
    c.equal(r.returncode, 2, "--token-file without a value is a usage error")
    stops_cleanly(env, p, "token daemon stops cleanly")


# ---- tls ----------------------------------------------------------------

def make_cert(env, name, cn="localhost"):
    key, cert = env.path(name + ".key"), env.path(name + ".pem")
    r = L.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
               "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=" + cn,
               "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
    if r.returncode != 0:
        raise L.Failure("openssl req failed: %s" % r.stderr)
    return cert, key



def stops_cleanly(env, p, what):
    """SIGTERM p and check that it exits 0; on failure show its status and log's end."""
    rc = env.procs.stop(p)
    tail = ""
    if rc != 0 and getattr(p, "log", None) and os.path.exists(p.log):
        tail = read(p.log)[-3000:]
    env.c.ok(rc == 0, what, "exit status %r\n%s" % (rc, tail))


def http_connections(api, cert):
    """gcsnapd_http_connections, less the connection that asks."""
    body = curl(api + "/metrics", "--cacert", cert, *bearer())[3].decode()
    m = re.search(r"^gcsnapd_http_connections (\d+)", body, re.M)
    return int(m.group(1)) - 1 if m else -1


def aborted_downloads_released(api, cert, sid):
    """Kills slow downloads over HTTP/2 and HTTP/1.1 with data still unread (so
    the server sees a reset); True when the daemon lets go of every
    connection."""
    before = http_connections(api, cert)
    url = api + "/api/snapshots/%d/download?format=gclog" % sid
    for proto in ("--http2", "--http1.1", "--http2"):
        subprocess.run(["timeout", "-s", "KILL", "0.5", "curl", "-s", proto, "--cacert", cert,
                        "--limit-rate", "2k", "-o", os.devnull, *bearer(), url])
    try:
        L.wait_until("the aborted downloads' connections to close",
                     lambda: http_connections(api, cert) == before, timeout=5)
        return True
    except L.Failure:
        return False

def capture_in_thread(env, api, device, extra):
    """Runs gcsnap capture --wait in a thread; returns (thread, result box)."""
    box = {}

    def go():
        box["r"] = gcsnap(env, ["capture", device, "--wait", "--timeout", "30", "--json",
                                "--collector", api] + extra)
    t = threading.Thread(target=go)
    t.start()
    return t, box


def suite_tls(env):
    need("curl")
    need("openssl")
    c = env.c
    cert, key = make_cert(env, "server")
    other, _ = make_cert(env, "other")
    p, log, agents, api = daemon(env, "tls", ["--http-token-file", env.token_file,
                                              "--http-tls-cert", cert, "--http-tls-key", key],
                                 scheme="https")
    health = api + "/api/health"
    rc, status, _, body = curl(health, "--cacert", cert, *bearer())
    c.equal((rc, status), (0, 200), "curl --cacert with the token over https: 200")
    rc, status, _, _ = curl(health, "--cacert", cert, "--http1.1", *bearer())
    c.equal((rc, status), (0, 200), "the same over HTTP/1.1")
    c.equal(curl(health, "--cacert", cert, *bearer("wrong"))[1], 401, "a wrong token over https: 401")
    rc, status, _, _ = curl(health, "--cacert", other, *bearer())
    c.ok(rc != 0 and status == 0, "a certificate from another CA is refused by curl", rc)
    rc, status, _, _ = curl(health.replace("https://", "http://"), *bearer())
    c.ok(rc != 0 and status == 0, "plain http to the TLS port gets no answer", (rc, status))
    c.ok(p.poll() is None, "the daemon survives a plain-http client")

    # The CLI over https: devices, a capture from an agent, the download.
    r = gcsnap(env, ["devices", "--collector", api, "--cacert", cert, "--token-file", env.token_file])
    c.equal(r.returncode, 0, "gcsnap devices --cacert over https: exit 0")
    c.ok("No devices" in r.stdout, "gcsnap devices lists nothing yet", r.stdout + r.stderr)
    r = gcsnap(env, ["devices", "--collector", api, "--token-file", env.token_file])
    c.equal(r.returncode, 2, "gcsnap without --cacert cannot verify the collector: exit 2")
    r = gcsnap(env, ["devices", "--collector", api, "--cacert", cert], token_env="wrong")
    c.equal(r.returncode, 1, "gcsnap over https with a wrong token: exit 1 (401)")

    agent = F.FakeAgent(agents, "tls-dev")
    heap = F.Heap(objects=500)
    t, box = capture_in_thread(env, api, "tls-dev", ["--cacert", cert, "--token-file",
                                                      env.token_file])
    rid = agent.wait_capture()
    agent.stream(rid, heap)
    answer = agent.answer()
    t.join(60)
    r = box.get("r")
    c.ok(answer[0] == "ack", "the snapshot is acked", answer)
    c.ok(r is not None and r.returncode == 0, "gcsnap capture --wait over https: exit 0",
         r and (r.stdout + r.stderr))
    sid = answer[1] if answer[0] == "ack" else 0
    out = env.path("tls.gclog")
    r = gcsnap(env, ["fetch", str(sid), "-o", out, "--format", "gclog", "--collector", api,
                     "--cacert", cert, "--token-file", env.token_file])
    c.equal(r.returncode, 0, "gcsnap fetch over https: exit 0")
    c.ok(read(out, "rb") == heap.text(), "the snapshot fetched over https is the one streamed")
    zst = env.path("tls.gclog.zst")
    rc, status, _, _ = curl(api + "/api/snapshots/%d/download" % sid, "--cacert", cert, *bearer(),
                            output=zst)
    c.ok(rc == 0 and status == 200 and os.path.getsize(zst) > 0, "the .zst download over https")
    agent.close()
    big = env.path("big.gclog")
    L.run([env.agent, "--source", "mock:objects=60000", "--out", big], timeout=60)
    r = gcsnap(env, ["upload", big, "--device", "big", "--json", "--collector", api, "--cacert",
                     cert, "--token-file", env.token_file])
    big_id = json.loads(r.stdout).get("id", 0) if r.returncode == 0 else 0
    c.ok(big_id > 0, "a 60,000-object heap uploaded over https", r.stdout + r.stderr)
    c.ok(aborted_downloads_released(api, cert, big_id),
         "clients gone mid-download leave no connection")
    stops_cleanly(env, p, "TLS daemon stops cleanly")
    c.ok(TOKEN not in read(log), "the token never reaches the log")


# ---- names --------------------------------------------------------------

def hello_frame(device_id, app="fake app.exe", version="fake-0.1", arch="x86_64"):
    hello = (F.f_uint(1, 1) + F.f_bytes(2, version) + F.f_bytes(3, device_id) +
             F.f_bytes(4, app) + F.f_bytes(5, arch) + F.f_uint(6, 8) + F.f_uint(7, 1000))
    return F.frame(F.envelope(F.HELLO, hello))


def connect(addr, device_id, hello=None, **names):
    """A FakeAgent after Hello (hello: the frame, else one made from the
    names): ("ok", agent) on Welcome, else ("error", code, message) or
    ("closed",)."""
    a = F.FakeAgent.__new__(F.FakeAgent)
    host, port = addr.rsplit(":", 1)
    a.sock = socket.create_connection((host, int(port)), timeout=20)
    a.buf = b""
    a.device_id = device_id
    a.send(hello or hello_frame(device_id, **names))
    kind, body = a.recv()
    if kind == F.WELCOME:
        return ("ok", a)
    a.close()
    if kind == F.ERROR:
        f = F.fields(body)
        return ("error", f.get(1, [0])[0], f.get(2, [b""])[0].decode(errors="replace"))
    return ("closed",)


SAFE_FOLDER = re.compile(r"^[A-Za-z0-9_%-][A-Za-z0-9_.%-]*$")
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
ESC_APP = "evil\x1b[2J\napp\u009b31m \"quoted\" \\"


def suite_names(env):
    need("curl")
    c = env.c
    p, log, agents, api = daemon(env, "names", ["--log-level", "debug"])
    store = env.path("names-store")
    refused = {"x\ny\x1b[31m": "control characters", "A" * 300: "300 bytes",
               "": "empty", "tab\there": "a tab", "\x7fdel": "DEL"}
    for dev, what in refused.items():
        got = connect(agents, dev)
        c.ok(got[0] == "error" and got[1] == 14, "a device ID with %s is refused with Error 14" % what,
             got)
    got = connect(agents, None, hello=F.frame(F.envelope(F.HELLO, F.f_uint(1, 1) +
                                                       F.f_bytes(3, b"bad\xff\xfe"))))
    c.ok(got[0] == "error" and got[1] == 14, "a device ID that is not UTF-8 is refused", got)

    accepted = ["../../etc/passwd", "a/b", "..", ".hidden", "q\"uote\\back", "\u009b31mc1",
                "sp ace", "ünï-cödé"]
    for dev in accepted:
        got = connect(agents, dev, app=ESC_APP)
        if not c.ok(got[0] == "ok", "device ID %r is accepted" % dev, got):
            continue
        agent = got[1]
        heap = F.Heap(objects=20)
        # C0 controls in a name make the dump invalid (the validator's
        # not-text); C1 controls and bidirectional marks are valid text.
        heap.types = [(1, "System.Object"), (2, "Evil\u009b31mType\u202egnp.exe")]
        box = {}

        def ask(dev=dev, box=box):
            from urllib.parse import quote
            box["r"] = L.http_json(api + "/api/devices/%s/capture?wait=1&timeout=30" %
                                   quote(dev, safe=""), method="POST")
        t = threading.Thread(target=ask)
        t.start()
        rid = agent.wait_capture()
        agent.stream(rid, heap)
        answer = agent.answer()
        t.join(60)
        status, body = box.get("r", (0, None))
        c.ok(answer[0] == "ack" and status == 200, "device %r: snapshot stored" % dev, (answer, status, body))
        if answer[0] != "ack":
            agent.close()
            continue
        sid = answer[1]
        # The download's file name is the escaped ID: nothing a browser or
        # a shell could take for a path or a quote.
        rc, st, head, _ = curl(api + "/api/snapshots/%d/download" % sid, output=os.devnull)
        m = re.search(r'(?im)^content-disposition: attachment; filename="([^"\r\n]*)"\r?$', head)
        c.ok(m and SAFE_FOLDER.match(m.group(1)) and m.group(1).endswith("-%d.gclog.zst" % sid),
             "device %r: a safe download file name" % dev, head)
        # The JSON API returns the ID exactly, escaped as JSON.
        rc, st, _, body = curl(api + "/api/snapshots/%d" % sid)
        c.ok(st == 200 and not CONTROL.search(body), "device %r: no raw control bytes in the JSON" % dev)
        d = L.http_json(api + "/api/snapshots/%d" % sid)[1] or {}
        c.equal(d.get("device_id"), dev, "device %r: the JSON gives the ID back exactly" % dev)
        agent.close()

    # An agent's error message reaches the client as a capture's reason:
    # gcsnap capture and gcsnap snapshots show it escaped.
    got = connect(agents, "err-dev")
    if c.ok(got[0] == "ok", "err-dev connects", got):
        agent = got[1]
        t, box = capture_in_thread(env, api, "err-dev", [])
        rid = agent.wait_capture()
        agent.send(F.frame(F.envelope(F.SNAPSHOT_BEGIN, F.f_uint(1, rid) + F.f_uint(2, 7) +
                                      F.f_bytes(4, "request") + F.f_uint(5, 1000))))
        agent.send(F.frame(F.envelope(F.ERROR, F.f_uint(1, 10) + F.f_uint(3, rid) +
                                      F.f_bytes(2, "heap walk failed\x1b[31m\x1b]0;pwned\x07"))))
        t.join(60)
        r = box.get("r")
        c.ok(r is not None and r.returncode == 1, "a capture the agent fails: exit 1",
             r and (r.stdout + r.stderr))
        if r is not None:
            c.ok("heap walk failed\\x1b[31m\\x1b]0;pwned\\x07" in r.stderr and
                 not CONTROL.search(r.stderr.encode()), "gcsnap capture shows the agent's message "
                 "escaped", r.stderr)
        r = subprocess.run([env.gcsnap, "snapshots", "--device", "err-dev", "--collector", api],
                           stdout=subprocess.PIPE, timeout=30)
        c.ok(b"heap walk failed\\x1b[31m" in r.stdout and not CONTROL.search(r.stdout),
             "gcsnap snapshots shows the reason escaped", r.stdout)
        agent.close()

    # The stored files: all under STORE/snapshots/<safe folder>/<n>.gclog.zst.
    root = os.path.realpath(store)
    bad = []
    for folder, dirs, files in os.walk(store):
        for f in files + dirs:
            full = os.path.realpath(os.path.join(folder, f))
            if not full.startswith(root + os.sep):
                bad.append(full)
    c.ok(not bad, "every file stays under the store", bad)
    folders = sorted(os.listdir(os.path.join(store, "snapshots")))
    c.equal(len(folders), len(accepted) + 1, "one folder per accepted device (and err-dev)")
    c.ok(all(SAFE_FOLDER.match(f) for f in folders), "folder names are escaped", folders)
    c.ok(not os.path.exists(os.path.join(env.work, "etc")) and
         not os.path.exists(os.path.join(store, "etc")), "nothing was written where '../' points")

    # gcsnap devices: the table escapes the names; --json keeps them exact.
    r = subprocess.run([env.gcsnap, "devices", "--collector", api], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    c.equal(r.returncode, 0, "gcsnap devices: exit 0")
    c.ok(not CONTROL.search(r.stdout) and b"\xc2\x9b" not in r.stdout,
         "gcsnap devices prints no control characters", r.stdout[:400])
    c.ok(b"evil\\x1b[2J\\x0aapp\\xc2\\x9b31m" in r.stdout, "gcsnap devices shows them as \\xNN",
         r.stdout[:400])
    c.ok(b"q\"uote\\\\back" in r.stdout, "a backslash is shown doubled", r.stdout[:600])
    r = subprocess.run([env.gcsnap, "devices", "--json", "--collector", api],
                       stdout=subprocess.PIPE, timeout=30)
    c.ok(not CONTROL.search(r.stdout) and b"evil\\u001b[2j\\napp" in r.stdout.lower(),
         "gcsnap devices --json keeps the names JSON-escaped", r.stdout[:400])

    # gcsnap summary of a stored snapshot: the type name is escaped.
    out = env.path("evil.gclog")
    complete = L.http_json(api + "/api/snapshots?status=complete")[1]["snapshots"]
    sid = max(s["id"] for s in complete)
    r = L.run([env.gcsnap, "fetch", str(sid), "-o", out, "--format", "gclog", "--collector", api])
    c.equal(r.returncode, 0, "fetch the snapshot with the hostile type name")
    r = subprocess.run([env.gcsnap, "summary", "--top", "0", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    c.equal(r.returncode, 0, "gcsnap summary of it: exit 0")
    c.ok(not CONTROL.search(r.stdout) and b"\xc2\x9b" not in r.stdout and
         b"\xe2\x80\xae" not in r.stdout, "gcsnap summary prints no control characters", r.stdout)
    c.ok(b"Evil\\xc2\\x9b31mType\\xe2\\x80\\xaegnp.exe" in r.stdout, "the type name is shown escaped",
         r.stdout)
    c.ok(b"Section 1: fake app.exe (" in r.stdout, "a plain section name is unchanged", r.stdout)
    r = subprocess.run([env.gcsnap, "summary", "--json", out], stdout=subprocess.PIPE, timeout=30)
    c.ok("Evil\u009b31mType\u202egnp.exe".encode() in r.stdout, "summary --json keeps the exact name",
         r.stdout)

    # A dump file with an ESC in a type name is not text: summary refuses
    # it with a diagnostic, itself free of the raw byte.
    bad = env.path("esc.gclog")
    with open(bad, "wb") as f:
        f.write(b"a 2 app 1\nt 1 Evil\x1b[31mType\no 10 1 20\nr 10 1 0\nc app 1\n")
    r = subprocess.run([env.gcsnap, "summary", bad], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    c.ok(r.returncode == 1 and b"not-text" in r.stderr and not CONTROL.search(r.stdout + r.stderr),
         "an ESC in a type name: summary exits 1 with a clean diagnostic", r.stderr)

    # The log: printable ASCII only, the hostile names escaped.
    stops_cleanly(env, p, "names daemon stops cleanly")
    raw = read(log, "rb")
    lines = raw.split(b"\n")
    c.ok(raw.endswith(b"\n") and all(re.fullmatch(rb"[\x20-\x7e]*", ln) for ln in lines),
         "every log line is printable ASCII",
         [ln for ln in lines if not re.fullmatch(rb"[\x20-\x7e]*", ln)][:3])
    c.ok(b'evil\\x1b[2J\\x0aapp\\xc2\\x9b31m \\"quoted\\" \\\\' in raw,
         "the application name is logged escaped", raw[-2000:])
    c.ok(b"device ../../etc/passwd connected" in raw and b"device q\\\"uote\\\\back connected" in raw,
         "device IDs are logged with quotes and backslashes escaped")


def suite_requests(env):
    """Request IDs are the collector's: an agent cannot choose one, take
    another session's, or make the collector issue one twice."""
    c = env.c
    p, log, agents, api = daemon(env, "requests", [])

    def capture(dev):
        status, body = L.http_json(api + "/api/devices/%s/capture" % dev, method="POST")
        c.equal(status, 202, "capture of %s is accepted" % dev)
        return body.get("request_id") if body else None

    def request_of(stored_id):
        return L.http_json(api + "/api/snapshots/%d" % stored_id)[1].get("request_id", "absent")

    a = connect(agents, "req-a")[1]
    b = connect(agents, "req-b")[1]
    # Unasked, naming 2^64-1: stored, with no request (it was once stored as -1).
    a.stream((1 << 64) - 1, F.Heap(objects=10), snapshot_id=1)
    got = a.answer()
    c.equal((got[0], request_of(got[1]) if got[0] == "ack" else None), ("ack", None),
            "a snapshot naming request 2^64-1, never asked, is stored with no request")
    # b names the request made of a: b's snapshot is not a's answer.
    r1 = capture("req-a")
    c.equal(a.wait_capture(), r1, "req-a is asked with request %s" % r1)
    b.stream(r1, F.Heap(objects=10), snapshot_id=2)
    got = b.answer()
    c.equal((got[0], request_of(got[1]) if got[0] == "ack" else None), ("ack", None),
            "req-b's snapshot naming req-a's request is stored with no request")
    a.stream(r1, F.Heap(objects=10), snapshot_id=3)
    got = a.answer()
    c.equal((got[0], request_of(got[1]) if got[0] == "ack" else None), ("ack", r1),
            "req-a's answer carries its request")
    # A request that no snapshot ever answered, then a restart: never issued again.
    r2 = capture("req-a")
    c.equal(a.wait_capture(), r2, "req-a is asked again")
    a.close()
    b.close()
    env.procs.stop(p)
    p, log, agents, api = daemon(env, "requests", [])
    a = connect(agents, "req-a")[1]
    r3 = capture("req-a")
    c.ok(r1 is not None and r2 is not None and r3 is not None and 0 < r1 < r2 < r3,
         "request IDs rise across a restart, past one no snapshot names (%s, %s, %s)" % (r1, r2, r3))
    a.close()


SUITES = {"exposure": suite_exposure, "token": suite_token, "tls": suite_tls, "names": suite_names,
          "requests": suite_requests}

if __name__ == "__main__":
    sys.exit(L.main("security_test.py", SUITES, Env))
