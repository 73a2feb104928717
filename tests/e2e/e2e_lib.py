"""e2e_lib.py - what the end-to-end tests share: free ports, the processes
they start (and always stop), the collector and agents, checks.

Every process is started through Procs, which stops all of them when the
test ends, whatever way it ends; on Linux each child also gets SIGKILL when
the test process dies (PR_SET_PDEATHSIG), so that even a test killed by
ctest's timeout leaves no collector or agent behind.
"""
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request

SKIP = 77


class Skip(Exception):
    """A check that cannot run here: reported as skipped (exit 77)."""


class Failure(Exception):
    pass


def free_port():
    """A TCP port free on 127.0.0.1 right now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Procs:
    """Every process a test starts; stop_all() ends those still running."""

    def __init__(self):
        self.procs = []

    def start(self, argv, log=None, **kw):
        out = open(log, "wb") if log else subprocess.DEVNULL
        p = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent, **kw)
        if log:
            out.close()
        p.argv = argv
        p.log = log
        self.procs.append(p)
        return p

    def stop(self, p, sig=signal.SIGTERM, wait=10):
        """Stops p (if still running) and returns its exit status."""
        if p.poll() is None:
            try:
                p.send_signal(sig)
                p.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        return p.returncode

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def http_json(url, method="GET", timeout=30):
    """(status, parsed JSON or None) of one call; status 0 when unreachable."""
    req = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read()
            status = r.status
    except urllib.error.HTTPError as e:
        body = e.read()
        status = e.code
    except (urllib.error.URLError, ConnectionError, socket.timeout):
        return 0, None
    try:
        return status, json.loads(body)
    except ValueError:
        return status, None


def wait_until(what, pred, timeout=20, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise Failure("timed out after %ss waiting for %s" % (timeout, what))


class Collector:
    """gcsnapd on free ports with its store in a folder of the test."""

    def __init__(self, procs, gcsnapd, work, name="gcsnapd", extra=()):
        self.procs = procs
        self.store = os.path.join(work, name + "-store")
        self.log = os.path.join(work, name + ".log")
        for attempt in range(5):
            self.agent_port, self.http_port = free_port(), free_port()
            if self.agent_port == self.http_port:
                continue
            self.url = "http://127.0.0.1:%d" % self.http_port
            self.proc = procs.start([gcsnapd, "--listen", "127.0.0.1:%d" % self.agent_port,
                                     "--http", "127.0.0.1:%d" % self.http_port,
                                     "--store", self.store] + list(extra), log=self.log)
            try:
                wait_until("the collector's HTTP API", self._up, timeout=15)
                return
            except Failure:
                if self.proc.poll() is None:
                    raise Failure("gcsnapd started but its API does not answer:\n" + self.log_text())
            # Exited: most likely a port taken between free_port() and bind.
        raise Failure("gcsnapd does not start:\n" + self.log_text())

    def _up(self):
        if self.proc.poll() is not None:
            raise Failure("gcsnapd exited with status %s:\n%s" % (self.proc.returncode, self.log_text()))
        return http_json(self.url + "/api/health", timeout=2)[0] == 200

    @property
    def agent_addr(self):
        return "127.0.0.1:%d" % self.agent_port

    def log_text(self):
        try:
            with open(self.log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def api(self, path, method="GET", timeout=30):
        return http_json(self.url + path, method=method, timeout=timeout)

    def device(self, device_id):
        status, body = self.api("/api/devices")
        if status != 200:
            raise Failure("GET /api/devices: HTTP %s" % status)
        for d in body["devices"]:
            if d["device_id"] == device_id:
                return d
        return None

    def wait_connected(self, device_id, timeout=20):
        def connected():
            d = self.device(device_id)
            return d is not None and d.get("connected")
        wait_until("device %s to connect" % device_id, connected, timeout=timeout)

    def wait_devices(self, ids, timeout=30):
        want = set(ids)

        def all_connected():
            status, body = self.api("/api/devices")
            if status != 200:
                return False
            have = {d["device_id"] for d in body["devices"] if d.get("connected")}
            return want <= have
        wait_until("%d devices to connect" % len(want), all_connected, timeout=timeout)

    def snapshots(self, query=""):
        status, body = self.api("/api/snapshots" + query)
        if status != 200:
            raise Failure("GET /api/snapshots%s: HTTP %s" % (query, status))
        return body["snapshots"]

    def stop(self):
        """SIGTERM; the collector must exit cleanly (status 0)."""
        rc = self.procs.stop(self.proc)
        if rc != 0:
            raise Failure("gcsnapd exited with status %s on SIGTERM:\n%s" % (rc, self.log_text()[-3000:]))


class Checks:
    """Counts checks; a failed one is printed and counted, not raised."""

    def __init__(self):
        self.failures = 0
        self.passed = 0
        self.skipped = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
        else:
            self.failures += 1
            print("FAIL: %s%s" % (what, ("\n  " + str(detail).replace("\n", "\n  ")) if detail else ""))
        return cond

    def equal(self, got, want, what):
        return self.ok(got == want, what, "got %r, expected %r" % (got, want))

    def skip(self, what):
        self.skipped += 1
        print("SKIP: %s" % what)


def run(argv, timeout=60, **kw):
    """Runs a command to completion: CompletedProcess with text output."""
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, preexec_fn=_die_with_parent, **kw)


def same_file(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def install_signal_exit():
    """SIGTERM and SIGINT end the test through its finally blocks."""
    def handler(sig, frame):
        raise SystemExit(128 + sig)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def log(msg):
    print(msg, flush=True)
    sys.stdout.flush()


class Env:
    """What every suite starts with: the programs of a build, the processes
    to stop at its end, its checks and its work folder."""

    def __init__(self, bin_dir, work):
        self.bin = bin_dir
        self.work = work
        self.gcsnap = os.path.join(bin_dir, "gcsnap")
        self.agent = os.path.join(bin_dir, "gcsnap-agent")
        self.gcsnapd = os.path.join(bin_dir, "gcsnapd")
        self.procs = Procs()
        self.c = Checks()

    def path(self, name):
        return os.path.join(self.work, name)

    def need_gcsnapd(self):
        if not os.access(self.gcsnapd, os.X_OK):
            raise Skip("gcsnapd is not built")


def main(script, suites, make_env):
    """Runs the suite named on the command line: SCRIPT SUITE BIN_DIR WORK_DIR.
    Exit 0 when every check passed, 1 when one failed, SKIP when all skipped."""
    if len(sys.argv) != 4 or sys.argv[1] not in suites:
        sys.stderr.write("usage: %s %s BIN_DIR WORK_DIR\n" % (script, "|".join(suites)))
        return 2
    suite, bin_dir, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    install_signal_exit()
    env = make_env(bin_dir, work)
    t0 = time.monotonic()
    try:
        suites[suite](env)
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except Failure as e:
        env.c.ok(False, str(e))
    except Exception:                       # a crash of the test is a failure
        traceback.print_exc()
        env.c.ok(False, "the %s suite stopped on an exception" % suite)
    finally:
        env.procs.stop_all()
    c = env.c
    print("%s: %d checks passed, %d failed, %d skipped (%.1f s)" %
          (suite, c.passed, c.failures, c.skipped, time.monotonic() - t0))
    if c.failures:
        return 1
    return SKIP if c.skipped and not c.passed else 0
