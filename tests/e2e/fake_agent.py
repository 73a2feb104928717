"""fake_agent.py - a scripted agent for the protocol-fault tests.

Speaks the wire protocol of proto/gcsnap.proto with protobuf encoded by
hand (varints, zigzag, packed fields, length-delimited messages), so that
it can send exactly the wrong thing: garbage frames, a frame above the
4 MiB limit, a stream cut half way, a wrong CRC, a sequence gap. Without a
fault it streams a small valid snapshot, which must be stored byte for byte
as text() gives it: that checks the fake itself against the collector.
"""
import socket
import struct
import zlib

MAX_FRAME = 4 << 20

# Envelope body field numbers.
HELLO, WELCOME, CAPTURE_REQUEST, SNAPSHOT_BEGIN, SECTION_BEGIN = 1, 2, 3, 4, 5
TYPES, OBJECTS, ROOTS, GENERATIONS, SECTION_END, SNAPSHOT_END = 6, 7, 8, 9, 10, 11
ACK, ERROR, PING = 12, 13, 14

FAULTS = ("garbage", "oversize", "cut", "crc", "seq")


# ---- encoding ----------------------------------------------------------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def zigzag(n):
    return n * 2 if n >= 0 else -n * 2 - 1


def f_uint(field, v):
    return varint(field << 3) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return varint(field << 3 | 2) + varint(len(b)) + b


def f_packed(field, values, signed=False):
    body = b"".join(varint(zigzag(v) if signed else v) for v in values)
    return f_bytes(field, body) if values else b""


def envelope(field, body):
    return f_bytes(field, body)


def frame(env):
    return varint(len(env)) + env


# ---- decoding ----------------------------------------------------------

def read_varint(buf, pos):
    n = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7


def fields(buf):
    """{field: [value, ...]} of a message; varints as ints, the rest as bytes."""
    out, pos = {}, 0
    while pos < len(buf):
        key, pos = read_varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = read_varint(buf, pos)
        elif wt == 2:
            n, pos = read_varint(buf, pos)
            v, pos = bytes(buf[pos:pos + n]), pos + n
        elif wt == 1:
            v, pos = struct.unpack_from("<Q", buf, pos)[0], pos + 8
        elif wt == 5:
            v, pos = struct.unpack_from("<I", buf, pos)[0], pos + 4
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


# ---- the snapshot ------------------------------------------------------

class Heap:
    """A small heap: one section, two types, objects in a chain, two roots."""

    def __init__(self, objects=300, name="fake app.exe", timestamp=0x1F4):
        self.name, self.timestamp = name, timestamp
        self.types = [(1, "System.Object"), (2, "Fake.Node With Spaces")]
        self.objects = []
        for i in range(objects):
            oid = 0x10000 + i * 0x20
            refs = [oid + 0x20] if i + 1 < objects else []
            if i % 7 == 3 and i + 2 < objects:
                refs.append(oid + 0x40)
            self.objects.append((oid, 1 + i % 2, 0x20, refs))
        self.roots = [(0x10000, 1, 0, None), (0x10020, 4, 1, 2), (0x10040, 3, 2, None)]

    def text(self):
        lines = ["a 2 %s %x" % (self.name, self.timestamp)]
        lines += ["t %x %s" % t for t in self.types]
        for oid, tid, size, refs in self.objects:
            lines.append(" ".join(["o %x %x %x" % (oid, tid, size)] + ["%x" % r for r in refs]))
        for oid, kind, flags, container in self.roots:
            lines.append("r %x %x %x" % (oid, kind, flags) + (" %x" % container if container else ""))
        lines.append("c %s %x" % (self.name, self.timestamp))
        return ("\n".join(lines) + "\n").encode()

    def data_messages(self, batch=100):
        """[(field, body without seq)] in record order; seq is added later."""
        msgs = [(SECTION_BEGIN, lambda s: f_uint(1, s) + f_uint(2, 2) + f_bytes(3, self.name) +
                 f_uint(4, self.timestamp))]
        msgs.append((TYPES, lambda s: f_uint(1, s) + f_packed(2, [t[0] for t in self.types]) +
                     b"".join(f_bytes(3, t[1]) for t in self.types)))
        for i in range(0, len(self.objects), batch):
            msgs.append((OBJECTS, self._objects(self.objects[i:i + batch])))
        msgs.append((ROOTS, self._roots()))
        msgs.append((SECTION_END, lambda s: f_uint(1, s) + f_bytes(2, self.name) +
                     f_uint(3, self.timestamp)))
        return msgs

    @staticmethod
    def _objects(objs):
        prev, deltas = 0, []
        for o in objs:
            deltas.append(o[0] - prev)
            prev = o[0]
        body = (f_packed(2, deltas, signed=True) + f_packed(3, [o[1] for o in objs]) +
                f_packed(4, [o[2] for o in objs]) + f_packed(5, [len(o[3]) for o in objs]) +
                f_packed(6, [r - o[0] for o in objs for r in o[3]], signed=True))
        return lambda s: f_uint(1, s) + body

    def _roots(self):
        prev, deltas = 0, []
        for r in self.roots:
            deltas.append(r[0] - prev)
            prev = r[0]
        body = (f_packed(2, deltas, signed=True) + f_packed(3, [r[1] for r in self.roots]) +
                f_packed(4, [r[2] for r in self.roots]) +
                f_packed(5, [r[3] for r in self.roots if r[1] == 4]))
        return lambda s: f_uint(1, s) + body

    def end(self, seq, crc_xor=0):
        text = self.text()
        refs = sum(len(o[3]) for o in self.objects)
        return (f_uint(1, seq) + f_uint(2, 1) + f_uint(3, len(self.types)) +
                f_uint(4, len(self.objects)) + f_uint(5, refs) + f_uint(6, len(self.roots)) +
                f_uint(7, len(text)) + f_uint(8, (zlib.crc32(text) ^ crc_xor) & 0xFFFFFFFF))


# ---- the session -------------------------------------------------------

class FakeAgent:
    def __init__(self, addr, device_id, timeout=20, source=None):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout,
                                             source_address=(source, 0) if source else None)
        self.buf = b""
        self.device_id = device_id
        hello = (f_uint(1, 1) + f_bytes(2, "fake-0.1") + f_bytes(3, device_id) +
                 f_bytes(4, "fake app.exe") + f_bytes(5, "x86_64") + f_uint(6, 8) + f_uint(7, 1000))
        self.send(frame(envelope(HELLO, hello)))
        kind, body = self.recv()
        if kind != WELCOME:
            raise RuntimeError("expected Welcome, got message %s %r" % (kind, body))

    def send(self, data):
        self.sock.sendall(data)

    def recv(self):
        """(field, body) of the next envelope; (None, None) at end of stream."""
        while True:
            if self.buf:
                try:
                    n, pos = read_varint(self.buf, 0)
                except IndexError:
                    n, pos = None, 0
                if n is not None and len(self.buf) >= pos + n:
                    env, self.buf = self.buf[pos:pos + n], self.buf[pos + n:]
                    f = fields(env)
                    (kind, values), = f.items()
                    return kind, values[0]
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, socket.timeout):
                chunk = b""
            if not chunk:
                return None, None
            self.buf += chunk

    def wait_capture(self):
        """The request_id of the next CaptureRequest (answering pings)."""
        while True:
            kind, body = self.recv()
            if kind is None:
                raise RuntimeError("the collector closed the session before asking for a capture")
            if kind == PING:
                f = fields(body)
                if not f.get(2, [0])[0]:
                    self.send(frame(envelope(PING, f_uint(1, f.get(1, [0])[0]) + f_uint(2, 1))))
            elif kind == CAPTURE_REQUEST:
                return fields(body).get(1, [0])[0]

    def stream(self, request_id, heap, fault=None, snapshot_id=1):
        """Sends one snapshot, spoiled by fault (None for a good one)."""
        begin = (f_uint(1, request_id) + f_uint(2, snapshot_id) + f_bytes(4, "request") +
                 f_uint(5, 1000))
        self.send(frame(envelope(SNAPSHOT_BEGIN, begin)))
        seq = 0
        for i, (kind, body) in enumerate(heap.data_messages()):
            if i == 3 and fault in ("garbage", "oversize", "cut"):
                return self._break(fault)
            seq += 1
            if i == 3 and fault == "seq":
                seq += 1
            self.send(frame(envelope(kind, body(seq))))
        seq += 1
        self.send(frame(envelope(SNAPSHOT_END, heap.end(seq, 0x5A5A5A5A if fault == "crc" else 0))))

    def _break(self, fault):
        if fault == "garbage":
            # A length that fits, then bytes that are no Envelope (a varint
            # key running past 64 bits).
            self.send(varint(16) + b"\xff" * 16)
        elif fault == "oversize":
            self.send(varint(MAX_FRAME + 1024) + b"\0" * 1024)
        elif fault == "cut":
            self.sock.shutdown(socket.SHUT_RDWR)
            self.sock.close()
            self.sock = None

    def answer(self):
        """What the collector says after a snapshot: ("ack", stored_id),
        ("error", code, message) or ("closed",)."""
        while True:
            kind, body = self.recv()
            if kind is None:
                return ("closed",)
            if kind == ACK:
                return ("ack", fields(body).get(3, [0])[0])
            if kind == ERROR:
                f = fields(body)
                return ("error", f.get(1, [0])[0], f.get(2, [b""])[0].decode(errors="replace"))

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None
