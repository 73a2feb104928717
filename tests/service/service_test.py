#!/usr/bin/env python3
"""service_test.py - gcsnapd run as an operator runs it: its Prometheus
metrics, its JSON log lines, the OpenAPI description of its HTTP API.

  metrics   GET /metrics behind the API token; scraped before, during and
            after a capture, its counters and gauges move as they should
            (sessions opened and refused, captures by trigger and outcome
            (API, schedule, upload), schedule lag,
            bytes received and stored, the ingest histogram); promtool
            check metrics finds nothing wrong with the page

  package   cpack -G DEB in the build tree writes gcsnapd, gcsnap,
            gcsnap-agent (and gcsnap-mono-profiler) packages: their metadata (dependencies computed
            from the binaries, and installed here), contents, conffiles and
            maintainer scripts; lintian finds no error; systemd-analyze
            verify passes on the unit; dpkg --root installs them into a
            throwaway root (creating the gcsnap user and the store), the
            installed programs print their version and make a capture end
            to end with the installed config, and a Mono program through
            the installed module; a purge keeps the store

  logjson   gcsnapd --log-format json: every line is one JSON object with
            time, level, event, device and snapshot; a session's lines name
            its device and the snapshot stored, others have null; a hostile
            device ID stays inside its string; a bad format exits 2
  openapi   GET /api/openapi.json is collector/console/openapi.json; every
            path and method in it is called against a real gcsnapd (with
            the examples it gives and IDs of real devices, snapshots,
            captures and schedules): the answer's status is one it declares,
            a success where one is declared, and the JSON matches the
            declared schema; declared 404s and 401s happen as declared;
            its paths are those of the README's API tables
  man       the manual pages (scdoc sources beside each program) name
            every long option of the programs' --help (gcsnap: of every
            command's too), and the other way round; gcsnapd.conf(5) has a
            key for each of gcsnapd's settings, and the default config uses
            only such keys; the pages are built, and scdoc accepts them

usage: service_test.py SUITE BIN_DIR WORK_DIR (BIN_DIR is BUILD/bin)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
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

    # A schedule's captures count as "schedule", and their lag is small.
    req = urllib.request.Request(col.url + "/api/schedules", method="POST",
                                 data=json.dumps({"device": "m1", "every": "1s"}).encode(),
                                 headers={"Authorization": "Bearer " + TOKEN,
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        schedule = json.loads(r.read())["id"]
    key = 'gcsnapd_captures_total{trigger="schedule",outcome="stored"}'
    L.wait_until("a scheduled capture", lambda: parse(get(url, TOKEN)[2])[key] >= 1, timeout=15)
    api(col, "/api/schedules/%d" % schedule, method="DELETE")
    page = parse(get(url, TOKEN)[2])
    c.ok(0 <= page["gcsnapd_schedule_lag_seconds"] < 5, "schedule lag in seconds, small",
         page["gcsnapd_schedule_lag_seconds"])
    c.equal(page["gcsnapd_snapshots_stored_total"], 1 + page[key], "snapshots stored = captures stored")

    # An uploaded heap file counts as "upload", and as a snapshot stored.
    status, _, body = call(col, "post", "/api/devices/up1/snapshots", body=download(col, snap["id"]))
    c.equal(status, 202, "upload of a heap file")
    up = 'gcsnapd_captures_total{trigger="upload",outcome="stored"}'
    L.wait_until("the upload stored", lambda: parse(get(url, TOKEN)[2])[up] == 1, timeout=15)
    page = parse(get(url, TOKEN)[2])
    c.equal(page["gcsnapd_snapshots_stored_total"], 1 + page[key] + 1,
            "snapshots stored = API, scheduled and uploaded ones")

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
    """The JSON answer of a request that must succeed."""
    status, _, body = call(col, method, path)
    if status >= 300:
        raise L.Failure("%s %s: HTTP %s %s" % (method, path, status, body))
    return body


def capture(col, device):
    """(status, JSON answer) of a capture with wait."""
    status, _, body = call(col, "post", "/api/devices/%s/capture?wait=1&timeout=30" % device)
    return status, body


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


def need(tool, why):
    path = shutil.which(tool)
    if not path:
        raise L.Skip("%s is not installed (%s)" % (tool, why))
    return path


def sh(argv, **kw):
    r = L.run(argv, **kw)
    if r.returncode != 0:
        raise L.Failure("%s: exit %d\n%s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    return r.stdout


def build_packages(env):
    """The three .deb files by package name, built by cpack in the work folder."""
    build = os.path.dirname(os.path.abspath(env.bin))
    out = env.path("packages")
    sh([need("cpack", "cmake"), "-G", "DEB", "-B", out, "--config",
        os.path.join(build, "CPackConfig.cmake")], timeout=300)
    arch = sh(["dpkg", "--print-architecture"]).strip()
    version = sh([env.gcsnapd, "--version"]).split()[-1] + "-1"
    debs = {}
    names = ["gcsnapd", "gcsnap", "gcsnap-agent"]
    if os.path.exists(os.path.join(build, "lib", "libmono-profiler-gcsnap.so")):
        names.append("gcsnap-mono-profiler")      # built where Mono's headers are
    for name in names:
        path = os.path.join(out, "%s_%s_%s.deb" % (name, version, arch))
        env.c.ok(os.path.exists(path), "cpack wrote %s" % os.path.basename(path), os.listdir(out))
        debs[name] = path
    return debs, version, arch


CONTENTS = {
    "gcsnapd": {"/usr/bin/gcsnapd", "/lib/systemd/system/gcsnapd.service",
                "/etc/gcsnap/gcsnapd.conf", "/usr/share/doc/gcsnapd/copyright",
                "/usr/share/doc/gcsnapd/changelog.Debian.gz", "/usr/share/man/man8/gcsnapd.8.gz",
                "/usr/share/man/man5/gcsnapd.conf.5.gz"},
    "gcsnap": {"/usr/bin/gcsnap", "/usr/share/doc/gcsnap/copyright",
               "/usr/share/doc/gcsnap/changelog.Debian.gz", "/usr/share/man/man1/gcsnap.1.gz"},
    "gcsnap-agent": {"/usr/bin/gcsnap-agent", "/usr/share/doc/gcsnap-agent/copyright",
                     "/usr/share/doc/gcsnap-agent/changelog.Debian.gz",
                     "/usr/share/man/man1/gcsnap-agent.1.gz"},
    "gcsnap-mono-profiler": {"/usr/share/doc/gcsnap-mono-profiler/copyright"},
}
# Libraries each program links (dpkg-shlibdeps must name their packages) or
# opens when first needed (named by hand).
LIBS = {"gcsnapd": ("libc6", "libuv1", "libh2o0.13", "libsqlite3-0", "libssl3", "libzstd1",
                    "libjansson4", "passwd", "libpq5"),
        "gcsnap": ("libc6", "libcurl4", "libpq5", "libzstd1", "libjansson4"),
        "gcsnap-agent": ("libc6",), "gcsnap-mono-profiler": ("mono-runtime", "libc6")}


def check_metadata(env, debs, version, arch):
    c = env.c
    for name, deb in debs.items():
        field = lambda f: sh(["dpkg-deb", "-f", deb, f]).strip()   # noqa: E731
        c.equal(field("Package"), name, "%s: Package" % name)
        c.equal(field("Version"), version, "%s: Version" % name)
        c.equal(field("Architecture"), arch, "%s: Architecture" % name)
        deps = [d.split()[0] for d in field("Depends").split(", ")]
        for lib in LIBS[name]:
            c.ok(lib in deps, "%s depends on %s" % (name, lib), deps)
        for dep in deps:            # computed ones exist: this system has them all
            st = L.run(["dpkg-query", "-W", "-f", "${Status}\n", dep]).stdout
            c.ok("install ok installed" in st.splitlines(), "%s: dependency %s is a real, installed package"
                 % (name, dep), st)
        listing = sh(["dpkg-deb", "-c", deb]).splitlines()
        files = {line.split()[5][1:] for line in listing if not line.startswith("d")}
        c.ok(CONTENTS[name] <= files, "%s holds its files" % name, sorted(files))
        if name == "gcsnap-mono-profiler":
            c.ok(any(f.endswith("-linux-gnu/libmono-profiler-gcsnap.so") or
                     f.endswith("-linux-gnueabi/libmono-profiler-gcsnap.so") for f in files),
                 "the module is in the multiarch library folder", sorted(files))
        c.ok(all(" root/root " in line for line in listing), "%s: files owned by root" % name)
    ctl = env.path("control")
    sh(["dpkg-deb", "-e", debs["gcsnapd"], ctl])
    with open(os.path.join(ctl, "conffiles")) as f:
        c.equal(f.read().split(), ["/etc/gcsnap/gcsnapd.conf"], "gcsnapd: conffiles")
    for script in ("postinst", "prerm", "postrm"):
        p = os.path.join(ctl, script)
        c.ok(os.access(p, os.X_OK), "gcsnapd: %s is there and executable" % script)
        c.equal(L.run(["sh", "-n", p]).returncode, 0, "gcsnapd: %s parses" % script)


def check_lintian(env, debs):
    tool = shutil.which("lintian")
    if not tool:
        env.c.skip("lintian is not installed")
        return
    r = L.run([tool, "--no-tag-display-limit"] + list(debs.values()), timeout=300)
    errors = [line for line in r.stdout.splitlines() if line.startswith("E:")]
    env.c.ok(not errors and r.returncode in (0, 1), "lintian: no errors", r.stdout + r.stderr)


def check_unit(env, root):
    """systemd-analyze verify on the installed unit, its ExecStart pointed
    at the binary of the throwaway root (verify wants it executable)."""
    tool = shutil.which("systemd-analyze")
    if not tool:
        env.c.skip("systemd-analyze is not installed")
        return
    with open(os.path.join(root, "lib/systemd/system/gcsnapd.service")) as f:
        unit = f.read()
    for key in ("User=gcsnap", "ProtectSystem=strict", "ReadWritePaths=/var/lib/gcsnap",
                "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectHome=yes",
                "\nCapabilityBoundingSet=\n", "--config /etc/gcsnap/gcsnapd.conf"):
        env.c.ok(key in unit, "unit has %s" % key.strip())
    folder = env.path("unit")
    os.makedirs(folder)
    path = os.path.join(folder, "gcsnapd.service")
    with open(path, "w") as f:
        f.write(unit.replace("/usr/bin/gcsnapd", os.path.join(root, "usr/bin/gcsnapd")))
    r = L.run([tool, "verify", "--man=no", path])
    env.c.ok(r.returncode == 0 and not (r.stdout + r.stderr).strip(),
             "systemd-analyze verify gcsnapd.service", r.stdout + r.stderr)
    # systemd's own score of the hardening: 0 (best) to 10; 1.5 today.
    r = L.run([tool, "security", "--offline=yes", "--no-pager", path])
    m = re.search(r"Overall exposure level for gcsnapd.service: ([0-9.]+)", r.stdout + r.stderr)
    env.c.ok(m and float(m.group(1)) <= 2.0, "systemd-analyze security: exposure at most 2.0",
             m.group(1) if m else r.stdout + r.stderr)


def empty_root(root):
    """What dpkg --root needs: its database, and the user files useradd
    --prefix edits."""
    for d in ("var/lib/dpkg/info", "var/lib/dpkg/updates", "etc"):
        os.makedirs(os.path.join(root, d))
    for name, text in (("var/lib/dpkg/status", ""), ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
                       ("etc/group", "root:x:0:\n"), ("etc/shadow", "root:*:19000:0:99999:7:::\n"),
                       ("etc/gshadow", "root:*::\n")):
        with open(os.path.join(root, name), "w") as f:
            f.write(text)


def dpkg(root, *args):
    return sh(["dpkg", "--root=" + root, "--force-script-chrootless", "--force-depends",
               "--log=/dev/null"] + list(args), timeout=120)


def check_installed(env, root, version):
    c = env.c
    with open(os.path.join(root, "etc/passwd")) as f:
        users = {line.split(":")[0]: line.strip().split(":") for line in f}
    user = users.get("gcsnap")
    c.ok(user is not None, "postinst created the gcsnap user")
    if user:
        c.equal((user[5], user[6]), ("/var/lib/gcsnap", "/usr/sbin/nologin"), "its home and shell")
        c.ok(int(user[2]) < 1000, "a system user", user)
        st = os.stat(os.path.join(root, "var/lib/gcsnap"))
        c.equal((st.st_uid, st.st_mode & 0o777), (int(user[2]), 0o750), "the store folder")
    for prog in ("gcsnapd", "gcsnap", "gcsnap-agent"):
        r = L.run([os.path.join(root, "usr/bin", prog), "--version"])
        c.ok(r.returncode == 0 and version.split("-")[0] in r.stdout,
             "installed %s --version" % prog, r.stdout + r.stderr)


def installed_capture(env, root):
    """The installed programs end to end, gcsnapd on the installed config
    (its store and addresses overridden by flags, which win)."""
    c, bin_ = env.c, os.path.join(root, "usr/bin")
    col = L.Collector(env.procs, os.path.join(bin_, "gcsnapd"), env.work, name="installed",
                      extra=["--config", os.path.join(root, "etc/gcsnap/gcsnapd.conf"),
                             "--min-free-bytes", "0"])
    env.procs.start([os.path.join(bin_, "gcsnap-agent"), "--source", "mock:objects=500,seed=2",
                     "--connect", col.agent_addr, "--device-id", "pkg1", "--retry-max", "1"],
                    log=env.path("installed-agent.log"))
    col.wait_connected("pkg1")
    gcsnap = os.path.join(bin_, "gcsnap")
    r = L.run([gcsnap, "capture", "pkg1", "--wait", "--json", "--collector", col.url])
    c.ok(r.returncode == 0, "installed gcsnap capture --wait", r.stdout + r.stderr)
    snap = json.loads(r.stdout)["snapshot_id"] if r.returncode == 0 else 0
    out = env.path("pkg1.gclog")
    r = L.run([gcsnap, "fetch", str(snap), "-o", out, "--format", "gclog", "--collector", col.url])
    c.ok(r.returncode == 0, "installed gcsnap fetch", r.stdout + r.stderr)
    r = L.run([gcsnap, "validate", out])
    c.ok(r.returncode == 0 and "valid" in r.stdout, "the fetched snapshot is valid", r.stdout)
    col.stop()


def installed_mono(env, root):
    """The installed agent captures a Mono program through the installed
    module: LD_LIBRARY_PATH names the root's multiarch folder, which the
    linker's cache covers on a real system."""
    build = os.path.dirname(os.path.abspath(env.bin))
    app = os.path.join(build, "mono-apps", "Contacts.exe")
    if not shutil.which("mono") or not os.path.exists(app):
        env.c.skip("mono or its test programs are missing: no capture through the installed module")
        return
    libdir = os.path.join(root, "usr/lib", sh(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).strip())
    sock = env.path("mono.sock")
    env.procs.start(["mono", "--profile=gcsnap:socket=" + sock, app, "5"], log=env.path("mono.log"),
                    env=dict(os.environ, LD_LIBRARY_PATH=libdir))
    L.wait_until("the module's socket", lambda: os.path.exists(sock), timeout=30)
    out = env.path("mono.gclog")
    r = L.run([os.path.join(root, "usr/bin/gcsnap-agent"), "--source", "mono:" + sock, "--out", out])
    env.c.ok(r.returncode == 0, "installed agent captures through the installed module", r.stderr)
    r = L.run([os.path.join(root, "usr/bin/gcsnap"), "validate", out])
    env.c.ok(r.returncode == 0, "the Mono snapshot is valid", r.stdout)


def package(env):
    env.need_gcsnapd()
    need("dpkg-deb", "dpkg")
    debs, version, arch = build_packages(env)
    if env.c.failures:
        return
    check_metadata(env, debs, version, arch)
    check_lintian(env, debs)
    if os.geteuid() != 0:
        env.c.skip("installing into a throwaway root needs root (chown of the store)")
        return
    root = env.path("root")
    empty_root(root)
    dpkg(root, "-i", *debs.values())
    check_installed(env, root, version)
    check_unit(env, root)
    installed_capture(env, root)
    if "gcsnap-mono-profiler" in debs:
        installed_mono(env, root)
    keep = os.path.join(root, "var/lib/gcsnap/kept")
    open(keep, "w").close()
    dpkg(root, "-i", debs["gcsnapd"])           # again, as an upgrade would
    with open(os.path.join(root, "etc/passwd")) as f:
        env.c.equal(sum(line.startswith("gcsnap:") for line in f), 1, "reinstall: one gcsnap user")
    dpkg(root, "--remove", "gcsnapd")
    env.c.ok(os.path.exists(os.path.join(root, "etc/gcsnap/gcsnapd.conf")) and os.path.exists(keep),
             "remove keeps the config and the store")
    dpkg(root, "--purge", "gcsnapd")
    env.c.ok(not os.path.exists(os.path.join(root, "usr/bin/gcsnapd")), "purge removes gcsnapd")
    env.c.ok(not os.path.exists(os.path.join(root, "etc/gcsnap/gcsnapd.conf")),
             "purge removes the config")
    env.c.ok(os.path.exists(keep), "purge keeps the store")


TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def logjson(env):
    env.need_gcsnapd()
    c = env.c
    r = L.run([env.gcsnapd, "--log-format", "yaml"])
    c.ok(r.returncode == 2 and "--log-format must be text or json" in r.stderr,
         "--log-format yaml is a usage error", r.stderr)
    col = L.Collector(env.procs, env.gcsnapd, env.work, extra=["--log-format", "json"])
    hostile = 'j"2\\\u00e9\u2028'
    for dev in ("j1", hostile):
        env.procs.start([env.agent, "--source", "mock:objects=300,seed=4", "--connect",
                         col.agent_addr, "--device-id", dev, "--retry-max", "1"],
                        log=env.path("agent.log"))
        col.wait_connected(dev)
    status, body = col.api("/api/devices/j1/capture?wait=1&timeout=30", method="POST")
    c.equal(status, 200, "capture of j1")
    snap = body.get("snapshot_id") if body else None
    col.api("/api/nothing-here")
    col.stop()
    lines = col.log_text().splitlines()
    objs = []
    for line in lines:
        try:
            objs.append(json.loads(line))
        except ValueError:
            c.ok(False, "log line is JSON", line)
    c.ok(len(objs) >= 5, "lines logged", len(objs))
    c.ok(all(sorted(o) == ["device", "event", "level", "snapshot", "time"] for o in objs),
         "each line has time, level, event, device, snapshot")
    c.ok(all(TIME.match(o["time"]) and o["level"] in ("error", "warn", "info", "debug")
             for o in objs), "time and level are well formed")
    c.ok(all(all(32 <= ord(ch) < 127 for ch in line) for line in lines), "lines are printable ASCII")
    stored = [o for o in objs if "stored snapshot" in o["event"]]
    c.ok(len(stored) == 1 and stored[0]["device"] == "j1" and stored[0]["snapshot"] == snap,
         "the stored line names device j1 and snapshot %s" % snap, stored)
    conn = [o for o in objs if o["event"].startswith("device ") and "connected from" in o["event"]]
    shown = hostile.encode().decode("latin-1")       # each byte as \u00NN
    c.equal(sorted(o["device"] for o in conn), sorted(["j1", shown]),
            "connected lines name their devices, byte by byte")
    c.ok(any(o["device"] is None and o["snapshot"] is None and "listening" in o["event"]
             for o in objs), "lines outside a session have null device and snapshot")


def resolve(doc, schema):
    while "$ref" in schema:
        node = doc
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def shape_errors(doc, schema, value, where="$"):
    """Where value does not match the OpenAPI schema (the subset it uses)."""
    schema = resolve(doc, schema)
    if value is None:
        return [] if schema.get("nullable") else ["%s: null" % where]
    if "allOf" in schema:
        return [e for s in schema["allOf"] for e in shape_errors(doc, s, value, where)]
    if "oneOf" in schema:
        ok = [s for s in schema["oneOf"] if not shape_errors(doc, s, value, where)]
        return [] if len(ok) == 1 else ["%s: matches %d of oneOf" % (where, len(ok))]
    kinds = {"integer": int, "number": (int, float), "string": str, "boolean": bool,
             "array": list, "object": dict}
    t = schema.get("type")
    if t and (not isinstance(value, kinds[t]) or (t in ("integer", "number") and isinstance(value, bool))):
        return ["%s: %r is not %s" % (where, value, t)]
    if "enum" in schema and value not in schema["enum"]:
        return ["%s: %r not in %s" % (where, value, schema["enum"])]
    errs = []
    if isinstance(value, dict):
        errs += ["%s: no %s" % (where, k) for k in schema.get("required", []) if k not in value]
        for k, s in schema.get("properties", {}).items():
            if k in value:
                errs += shape_errors(doc, s, value[k], "%s.%s" % (where, k))
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errs += shape_errors(doc, schema["items"], v, "%s[%d]" % (where, i))
    return errs


def download(col, snapshot):
    req = urllib.request.Request(col.url + "/api/snapshots/%d/download?format=gclog" % snapshot,
                                 headers={"Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def call(col, method, path, token=TOKEN, body=None):
    """(status, content type, parsed JSON or None) of one request."""
    headers = {"Authorization": "Bearer " + token} if token else {}
    data = None
    if isinstance(body, bytes):
        data = body
        headers["Content-Type"] = "application/octet-stream"
    elif body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    elif method == "POST":
        data = b""
    req = urllib.request.Request(col.url + path, method=method.upper(), data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, ctype, raw = r.status, r.headers.get("Content-Type") or "", r.read()
    except urllib.error.HTTPError as e:
        status, ctype, raw = e.code, e.headers.get("Content-Type") or "", e.read()
    try:
        parsed = json.loads(raw) if ctype.startswith("application/json") else None
    except ValueError:
        parsed = ValueError
    return status, ctype, parsed


def operations(doc):
    """(path, method, operation), POSTs first and DELETEs last: what the
    others use is made first, and removed at the end."""
    ops = [(p, m, o) for p, item in doc["paths"].items() for m, o in item.items()]
    return sorted(ops, key=lambda x: {"post": 0, "get": 1}.get(x[1], 2))


def fill(path, op, ids, bad=False):
    """The request path with path parameters from ids (or ones that exist
    nowhere) and the query parameters that have an example."""
    query = []
    for prm in op.get("parameters", []):
        name = prm["name"]
        if prm["in"] == "path":
            key = "schedule" if path.startswith("/api/schedules") else name
            value = ("no-such-device" if name == "device" else 999999) if bad else ids[key]
            path = path.replace("{%s}" % name, urllib.parse.quote(str(value), safe=""))
        elif "example" in prm:
            value = {"old": ids["id"], "new": ids["new_snapshot"]}.get(name, prm["example"])
            query.append("%s=%s" % (name, urllib.parse.quote(str(value), safe="")))
    return path + ("?" + "&".join(query) if query else "")


def check_answer(env, doc, op, what, status, ctype, body, want=None):
    c = env.c
    declared = op["responses"]
    if not c.ok(str(status) in declared, "%s: status %s is declared" % (what, status), sorted(declared)):
        return
    if want:
        c.ok(str(status) in want, "%s: answered %s, expected %s" % (what, status, want))
    content = declared[str(status)].get("content", {})
    if "application/json" in content:
        c.ok(body is not None and body is not ValueError, "%s: JSON body" % what, ctype)
        if body is not None and body is not ValueError:
            errs = shape_errors(doc, content["application/json"]["schema"], body)
            c.ok(not errs, "%s: body matches the declared schema" % what, "\n".join(errs[:10]))
    elif content:
        c.ok(any(ctype.startswith(t) for t in content), "%s: content type %s declared" % (what, ctype),
             list(content))


def readme_routes():
    """METHOD /path of the README's API tables, IDs as {}."""
    text = read(os.path.join(SRC, "collector/README.md"))
    routes = set()
    for m, p in re.findall(r"^\| `(GET|POST|DELETE) (/[^`\[?]*)", text, re.M):
        routes.add(m + " " + re.sub(r"/[A-Z_]+(?=/|$)", "/{}", p.strip()))
    return routes


def openapi(env):
    env.need_gcsnapd()
    c = env.c
    col = token_collector(env)
    env.procs.start([env.agent, "--source", "mock:objects=300,seed=4", "--connect", col.agent_addr,
                     "--device-id", "d1", "--retry-max", "1"], log=env.path("agent.log"))
    wait_connected(col, "d1")
    ids = {"device": "d1"}
    for key in ("id", "new_snapshot"):
        status, body = capture(col, "d1")
        c.equal(status, 200, "capture for the walk")
        ids[key] = body["snapshot_id"]
    status, _, doc = call(col, "get", "/api/openapi.json")
    c.equal(status, 200, "GET /api/openapi.json")
    c.ok(doc == json.loads(read(os.path.join(SRC, "collector/console/openapi.json"))),
         "the served description is collector/console/openapi.json")
    c.ok(doc.get("openapi", "").startswith("3."), "an OpenAPI 3 document")
    for path, method, op in operations(doc):
        what = "%s %s" % (method.upper(), path)
        body = None
        content = op.get("requestBody", {}).get("content", {})
        if "application/json" in content:
            body = content["application/json"]["example"]
        elif "application/octet-stream" in content:    # a heap file: a stored one
            body = download(col, ids["id"])
        target = fill(path, op, ids)
        status, ctype, answer = call(col, method, target, body=body)
        want = sorted(s for s in op["responses"] if s.startswith("2"))
        check_answer(env, doc, op, what, status, ctype, answer, want)
        if path == "/api/schedules" and method == "post" and status == 201:
            ids["schedule"] = answer["id"]
        if path.endswith("/capture") and status == 202:
            ids["request_id"] = answer["request_id"]
            L.wait_until("the walk's capture", lambda: call(col, "get", "/api/captures/%d"
                                                            % ids["request_id"])[2]["state"] == "stored")
        if "404" in op["responses"] and "{" in path:
            status, ctype, answer = call(col, method, fill(path, op, ids, bad=True), body=body)
            check_answer(env, doc, op, what + " (none such)", status, ctype, answer, ["404"])
        status, ctype, answer = call(col, method, target, token="wrong", body=body)
        check_answer(env, doc, op, what + " (wrong token)", status, ctype, answer, ["401"])
    documented = {m.upper() + " " + re.sub(r"\{[a-z_]+\}", "{}", p) for p, item in doc["paths"].items()
                  for m in item}
    c.equal(sorted(documented ^ readme_routes()), [], "the README's API tables and the description")
    col.stop()


SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
LONG_OPTION = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
MAN_PAGES = {"gcsnap": "collector/cli/gcsnap.1.scd", "gcsnapd": "collector/gcsnapd/gcsnapd.8.scd",
             "gcsnap-agent": "agent/gcsnap-agent.1.scd"}


def read(path):
    with open(path) as f:
        return f.read()


def help_text(env, prog):
    """--help of a program; for gcsnap, with that of each of its commands."""
    exe = os.path.join(env.bin, prog)
    text = sh([exe, "--help"])
    if prog == "gcsnap":
        block = text.split("Commands:")[1].split("\n\n")[0]
        for cmd in re.findall(r"^  ([a-z]+) ", block, re.M):
            text += sh([exe, cmd, "--help"])
    return text


def man(env):
    env.need_gcsnapd()
    c = env.c
    for prog, src in MAN_PAGES.items():
        page = read(os.path.join(SRC, src))
        in_help = set(LONG_OPTION.findall(help_text(env, prog)))
        in_page = set(LONG_OPTION.findall(page))
        c.ok(len(in_help) > 5, "%s --help names options" % prog, in_help)
        c.equal(sorted(in_help - in_page), [], "%s: options of --help missing from %s" % (prog, src))
        c.equal(sorted(in_page - in_help), [], "%s: options of %s unknown to --help" % (prog, src))
    settings = set(LONG_OPTION.findall(sh([env.gcsnapd, "--help"]))) - {"help", "version", "config"}
    conf_page = read(os.path.join(SRC, "collector/gcsnapd/gcsnapd.conf.5.scd"))
    keys = set(re.findall(r"\*([a-z-]+)\* = ", conf_page))
    c.equal(sorted(settings ^ keys), [], "gcsnapd.conf(5) keys = gcsnapd's settings")
    default = read(os.path.join(SRC, "toolchains/debian/gcsnapd.conf"))
    used = set(re.findall(r"^#? ?([a-z-]+) = ", default, re.M))
    c.ok(used and used <= settings, "the default gcsnapd.conf uses known keys only",
         sorted(used - settings))
    # The file is read before the flags: a bad line in it is reported
    # first; the bad --http then stops gcsnapd before it starts.
    r = L.run([env.gcsnapd, "--config", os.path.join(SRC, "toolchains/debian/gcsnapd.conf"),
               "--store", env.path("store"), "--listen", "127.0.0.1:1", "--http", "x"])
    c.ok("gcsnapd.conf:" not in r.stderr, "gcsnapd accepts the default config's lines", r.stderr)
    scdoc = shutil.which("scdoc")
    if not scdoc:
        c.skip("scdoc is not installed: pages not built")
        return
    build = os.path.dirname(os.path.abspath(env.bin))
    for src in list(MAN_PAGES.values()) + ["collector/gcsnapd/gcsnapd.conf.5.scd"]:
        r = L.run([scdoc], input=read(os.path.join(SRC, src)))
        c.ok(r.returncode == 0 and r.stdout.startswith(".\\\""), "scdoc accepts %s" % src, r.stderr)
        built = os.path.join(build, os.path.dirname(src), os.path.basename(src)[:-4] + ".gz")
        c.ok(os.path.exists(built), "%s built" % os.path.relpath(built, build))


SUITES = {"metrics": metrics, "package": package, "man": man, "logjson": logjson,
          "openapi": openapi}

if __name__ == "__main__":
    sys.exit(L.main("service_test.py", SUITES, L.Env))
