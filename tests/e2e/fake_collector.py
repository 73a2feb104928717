"""fake_collector.py - an HTTP server answering like gcsnapd's API, with
canned answers, for the tests of the gcsnap client commands.

It gives every answer the real collector can give, refusals included (busy,
not connected, unknown device, failed capture, timeout), and a few that a
real one should not (a download cut short, a page that is not JSON), which
are hard to provoke on purpose. The requests it saw are kept in `seen`.
"""
import http.server
import json
import subprocess
import threading
import urllib.parse
import zlib

SNAPSHOT_TEXT = b"a 2 fake.exe 1f4\nt 1 System.Object\no 1000 1 18\nr 1000 1 0\nc fake.exe 1f4\n"
# The stored file: real zstd, since gcsnap fetch checks what it receives.
ZST_BYTES = subprocess.run(["zstd", "-q", "-c"], input=SNAPSHOT_TEXT, stdout=subprocess.PIPE,
                           check=True).stdout

DEVICES = {"devices": [
    {"device_id": "dev1", "app_name": "demo.exe", "architecture": "x86_64", "pointer_size": 8,
     "agent_version": "0.1.0", "connected": True, "busy": True, "address": "127.0.0.1:40000",
     "connected_since": 1700000000, "last_seen": 1700000100, "snapshots": 2,
     "last_snapshot_id": 2},
    {"device_id": "old phone", "app_name": "contacts.exe", "architecture": "armv5te",
     "pointer_size": 4, "agent_version": "0.1.0", "connected": False, "busy": False,
     "address": None, "connected_since": None, "last_seen": 1690000000, "snapshots": 0,
     "last_snapshot_id": None},
]}

SNAPSHOT = {"id": 2, "device_id": "dev1", "created": 1700000050, "status": "complete",
            "reason": None, "request_id": 5, "agent_snapshot_id": 1, "trigger": "request",
            "stable_ids": False, "objects": 1, "bytes": 24, "references": 0, "roots": 1,
            "types": 1, "unreachable": 0, "dangling_references": 0, "sections": 1,
            "text_bytes": len(SNAPSHOT_TEXT), "file_bytes": len(ZST_BYTES), "wire_bytes": 40,
            "crc32": zlib.crc32(SNAPSHOT_TEXT)}
FAILED = dict(SNAPSHOT, id=1, status="failed", reason="stream cut: the agent closed the connection",
              objects=0, bytes=0, roots=0)


def error(status, code, message, **extra):
    return status, dict({"error": code, "message": message}, **extra)


CAPTURES = {
    "busy": error(409, "busy", "device busy is already capturing"),
    "offline": error(409, "not_connected", "device offline is not connected"),
    "broken": error(502, "capture_failed", "the capture of broken failed",
                    reason="CRC mismatch"),
    "slow": error(504, "timeout", "no snapshot from slow within 1 s"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json"):
        data = json.dumps(body).encode() if ctype == "application/json" else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        self.server.seen.append(("GET", self.path))
        p = url.path
        if p.startswith("/html/"):
            return self.reply(404, b"<html><body>Not Found</body></html>\n", "text/html")
        if p == "/api/health":
            return self.reply(200, {"version": "0.1.0", "devices_connected": 1, "uptime_s": 5})
        if p == "/api/devices":
            return self.reply(200, self.server.devices)
        if p == "/api/snapshots":
            snaps = [SNAPSHOT, FAILED]
            if "device" in q:
                snaps = [s for s in snaps if s["device_id"] == q["device"][0]]
            return self.reply(200, {"snapshots": snaps})
        if p == "/api/snapshots/2":
            return self.reply(200, dict(SNAPSHOT, summary={"objects": 1}))
        if p == "/api/snapshots/2/download":
            fmt = q.get("format", ["zst"])[0]
            if fmt == "gens":
                return self.reply(404, {"error": "not_found", "message": "snapshot 2 has no generation ranges"})
            return self.reply(200, SNAPSHOT_TEXT if fmt == "gclog" else ZST_BYTES,
                              "application/octet-stream")
        if p == "/api/snapshots/3":
            return self.reply(200, dict(SNAPSHOT, id=3))
        if p == "/api/snapshots/3/download":
            # Promises more than it sends, then hangs up.
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(SNAPSHOT_TEXT)
            self.wfile.flush()
            self.close_connection = True
            return
        return self.reply(*error(404, "not_found", "no snapshot or resource %s" % p))

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(url.query)
        self.server.seen.append(("POST", self.path))
        parts = url.path.split("/")
        if len(parts) == 5 and parts[1:3] == ["api", "devices"] and parts[4] == "capture":
            dev = urllib.parse.unquote(parts[3])
            if dev in CAPTURES:
                return self.reply(*CAPTURES[dev])
            if dev != "dev1":
                return self.reply(*error(404, "not_found", "unknown device %s" % dev))
            if q.get("wait") == ["1"]:
                return self.reply(200, {"request_id": 5, "snapshot_id": 2})
            return self.reply(202, {"request_id": 5, "device_id": "dev1"})
        return self.reply(*error(400, "bad_request", "no such call"))


class FakeCollector:
    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.seen = []
        self.server.devices = DEVICES
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def seen(self):
        return self.server.seen

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
