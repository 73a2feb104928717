#!/usr/bin/env python3
"""make-seeds.py - writes the seed corpora of the collector, agent and http
fuzz targets (corpus/NAME/) again; the reader's seeds are kept by hand.

    make-seeds.py [CORPUS_DIR]      (default: corpus beside this script)

collector: the agent sessions recorded in tests/fixtures/streams, as the
collector's socket received them (length prefix and Envelope per frame),
and small sessions built here, each aimed at one rule: a snapshot with a
continued object and a static root and the right CRC-32, a seq gap, a
snapshot already stored (odd snapshot_id), the agent's Error half way, an
invalid heap with a correct CRC, bad prefixes, a bad Hello.
agent: the control messages the collector sends, well formed and not.
http: requests to every route of the API, with their parameters, bearer
tokens, and malformed targets.

Protobuf is encoded by hand (no Python package needed); the output is the
same on every run."""
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
STREAMS = os.path.join(HERE, "..", "fixtures", "streams")


# ---- protobuf, by hand ------------------------------------------------------

def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


def key(field, wire):
    return varint((field << 3) | wire)


def u(field, v):
    """A varint field (left out when 0, as proto3 writes it)."""
    return key(field, 0) + varint(v) if v else b""


def s(field, data):
    if isinstance(data, str):
        data = data.encode()
    return key(field, 2) + varint(len(data)) + data


def packed(field, values, signed=False):
    if not values:
        return b""
    body = b"".join(varint(zigzag(v) if signed else v) for v in values)
    return s(field, body)


def env(body, msg):
    return s(body, msg)


def frame(e):
    return varint(len(e)) + e


HELLO, WELCOME, CAPTURE, BEGIN, SEC_BEGIN, TYPES, OBJECTS, ROOTS, GENS, SEC_END, END, ACK, \
    ERROR, PING = range(1, 15)


def hello(device="fuzz-device", version=1):
    return env(HELLO, u(1, version) + s(2, "0.1.0") + s(3, device) + s(4, "app") +
               s(5, "x86_64") + u(6, 8) + u(7, 12345))


def begin(snapshot_id, request_id=0):
    return env(BEGIN, u(1, request_id) + u(2, snapshot_id) + u(3, 1) + s(4, "request") +
               u(5, 99))


def section_begin(seq, name, ts):
    return env(SEC_BEGIN, u(1, seq) + u(2, 2) + s(3, name) + u(4, ts))


def section_end(seq, name, ts):
    return env(SEC_END, u(1, seq) + s(2, name) + u(3, ts))


def types(seq, pairs):
    return env(TYPES, u(1, seq) + packed(2, [i for i, _ in pairs]) +
               b"".join(s(3, n) for _, n in pairs))


def objects(seq, objs, continues=False):
    """objs: (id, type, size, [refs]); deltas as the schema says."""
    ids, prev, deltas = [], 0, []
    for o in objs:
        ids.append(o[0] - prev)
        prev = o[0]
        deltas += [r - o[0] for r in o[3]]
    return env(OBJECTS, u(1, seq) + packed(2, ids, True) + packed(3, [o[1] for o in objs]) +
               packed(4, [o[2] for o in objs]) + packed(5, [len(o[3]) for o in objs]) +
               packed(6, deltas, True) + u(7, 1 if continues else 0))


def roots(seq, rs):
    """rs: (id, kind, flags, container or None)."""
    ids, prev = [], 0
    for r in rs:
        ids.append(r[0] - prev)
        prev = r[0]
    return env(ROOTS, u(1, seq) + packed(2, ids, True) + packed(3, [r[1] for r in rs]) +
               packed(4, [r[2] for r in rs]) + packed(5, [r[3] for r in rs if r[1] == 4]))


def generations(seq):
    rng = u(1, 2) + u(2, 0x10000) + u(3, 0x2000) + u(4, 0x8000)
    return env(GENS, u(1, seq) + s(2, rng))


def snapshot_end(seq, text, counts):
    return env(END, u(1, seq) + u(2, counts["sections"]) + u(3, counts["types"]) +
               u(4, counts["objects"]) + u(5, counts["references"]) + u(6, counts["roots"]) +
               u(7, len(text)) + key(8, 0) + varint(zlib.crc32(text)))


def ping(nonce, reply=False):
    return env(PING, u(1, nonce) + u(2, 1 if reply else 0))


def error(code, message, request_id=0):
    return env(ERROR, u(1, code) + s(2, message) + u(3, request_id))


# ---- a small heap, as messages and as the canonical text ----------------------

def small_heap(valid=True):
    """The messages of one section and the text gs_writer makes of it."""
    name, ts = "Domain 1", 0x2A5F00
    tys = [(0x10, "System.Object"), (0x20, "App.Node"), (0x30, "App.Statics")]
    objs = [(0x1000, 0x20, 0x18, [0x1010, 0x1020]), (0x1010, 0x10, 0x10, []),
            (0x1020, 0x20, 0x18, [0x1000])]
    # root kinds are 0 to 5
    rts = [(0x1000, 1, 1, None), (0x1010, 4, 0, 0x30), (0x1020, 2 if valid else 9, 2, None)]
    msgs = [section_begin(1, name, ts), types(2, tys),
            # the first object's references go on in the next batch
            objects(3, [(0x1000, 0x20, 0x18, [0x1010])], continues=True),
            objects(4, [(0x1000, 0x20, 0x18, [0x1020])] + objs[1:]),
            roots(5, rts), generations(6), section_end(7, name, ts)]
    lines = ["a 2 %s %x" % (name, ts)]
    lines += ["t %x %s" % t for t in tys]
    lines += ["o " + " ".join("%x" % v for v in (o[0], o[1], o[2]) + tuple(o[3])) for o in objs]
    lines += ["r %x %x %x" % r[:3] + (" %x" % r[3] if r[1] == 4 else "") for r in rts]
    lines += ["c %s %x" % (name, ts)]
    text = ("\n".join(lines) + "\n").encode()
    counts = {"sections": 1, "types": len(tys), "objects": len(objs),
              "references": sum(len(o[3]) for o in objs), "roots": len(rts)}
    return msgs, text, counts


def snapshot(snapshot_id, valid=True, request_id=0):
    msgs, text, counts = small_heap(valid)
    return [begin(snapshot_id, request_id)] + msgs + [snapshot_end(len(msgs) + 1, text, counts)]


def stream(*envelopes):
    return b"".join(frame(e) for e in envelopes)


# ---- recorded sessions ----------------------------------------------------------

def read_varint(data, at):
    v = shift = 0
    while True:
        b = data[at]
        at += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, at


def gcstream_frames(path):
    data = open(path, "rb").read()
    assert data[:8] == b"GCSTREAM", path
    at = 8
    _, at = read_varint(data, at)          # container version
    _, at = read_varint(data, at)          # protocol version
    n, at = read_varint(data, at)          # device ID
    at += n
    _, at = read_varint(data, at)          # start time
    frames = []
    while at < len(data):
        _, at = read_varint(data, at)      # receive time
        n, at = read_varint(data, at)
        frames.append(data[at:at + n])
        at += n
    return frames


# ---- the corpora -------------------------------------------------------------------

def collector_seeds():
    seeds = {}
    for name in ("mock-once", "demo-request", "mock-twice"):
        frames = gcstream_frames(os.path.join(STREAMS, name + ".gcstream"))
        seeds["recorded-" + name] = stream(*frames)
    good = snapshot(2)
    seeds["stored"] = stream(hello(), ping(7), *good)
    seeds["stored-twice"] = stream(hello(), *(snapshot(2) + [ping(8)] + snapshot(4, request_id=3)))
    seeds["already-stored"] = stream(hello(), *snapshot(5))
    seeds["invalid-heap"] = stream(hello(), *(snapshot(6, valid=False) + [ping(1)]))
    gap = list(good)
    del gap[3]
    seeds["seq-gap"] = stream(hello(), *gap)
    seeds["agent-error"] = stream(hello(), *(good[:4] + [error(10, "heap walk failed")] + good))
    seeds["error-idle"] = stream(hello(), error(11, "stable IDs unsupported", 9), ping(3))
    seeds["hello-bad-version"] = stream(hello(version=2))
    seeds["hello-bad-device"] = stream(hello(device="a\tb"))
    seeds["hello-long-device"] = stream(hello(device="d" * 81))
    seeds["unexpected-ack"] = stream(hello(), env(ACK, u(1, 1)))
    seeds["bad-prefix"] = stream(hello()) + b"\xff\xff\xff\xff\xff\x01"
    seeds["frame-too-large"] = stream(hello()) + varint((4 << 20) + 1)
    seeds["cut-short"] = stream(hello(), *good)[:-7]
    seeds["undecodable"] = stream(hello(), b"\x22\x05\x08")
    return seeds


def agent_seeds():
    welcome = env(WELCOME, u(1, 1) + s(2, "0.1.0") + u(3, 4 << 20))
    capture = env(CAPTURE, u(1, 42) + s(2, u(1, 1)))
    ack = env(ACK, u(1, 42) + u(2, 7) + u(3, 3))
    err = error(9, "a capture is already under way", 42)
    return {
        "session": stream(welcome, capture, ack, ping(5), ping(6, reply=True), err),
        "welcome": stream(welcome),
        "capture": stream(capture),
        "ack": stream(ack),
        "error": stream(err),
        "ping": stream(ping(1)),
        "unknown-fields": stream(env(PING, u(1, 3) + s(9, "later") + key(10, 5) + b"\0\0\0\0") +
                                 s(20, "x")),
        "two-bodies": stream(env(PING, u(1, 1)) + env(ACK, u(2, 2))),
        "repeated-body": stream(env(PING, u(1, 1)) + env(PING, u(2, 1))),
        "wrong-wire-type": stream(env(WELCOME, s(1, "1"))),
        "group": stream(env(ACK, key(4, 3) + key(4, 4))),
        "non-minimal-prefix": b"\x86\x80\x80\x80\x00" + env(PING, u(1, 9)),
        "hello-body": stream(hello()),
        "empty-frame": stream(b""),
        "frame-too-large": varint((64 << 10) + 1),
        "bad-prefix": b"\x80\x80\x80\x80\x80\x01",
        "cut-short": stream(welcome, capture)[:-3],
    }


def http_seeds():
    def get(target, method="GET", body=b"", headers=()):
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1:7411\r\n" % (method, target)
        for h in headers:
            head += h + "\r\n"
        if body:
            head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        return head.encode() + b"\r\n" + body

    sched = b'{"device":"lab-*","every":"5m","jitter":30,"keep":10,"max_bytes":"500M"}'
    return {
        "health": get("/api/health"),
        "devices": get("/api/devices", headers=("Accept: application/json",)),
        "snapshots": get("/api/snapshots?device=dev%20one&status=complete&limit=10"),
        "snapshot": get("/api/snapshots/12"),
        "download": get("/api/snapshots/12/download?format=gclog"),
        "capture": get("/api/devices/lab%2Fa/capture?wait=1&timeout=30&stable_ids=true",
                       method="POST"),
        "captures": get("/api/captures/5"),
        "dominators": get("/api/snapshots/3/dominators?top=20&by_type"),
        "paths": get("/api/snapshots/3/paths?object=1a2b&max=5"),
        "paths-type": get("/api/snapshots/3/paths?type=App.Node+Cache&max=5"),
        "diff": get("/api/diff?old=1&new=2&top=30"),
        "trend": get("/api/devices/d1/trend?last=10&top=10&threshold=20"),
        "schedule-query": get("/api/schedules?device=*&every=1h&start=2026-11-21T08:00:00Z"
                              "&end=1795000000&keep=3&max_bytes=1G", method="POST"),
        "schedule-body": get("/api/schedules", method="POST", body=sched),
        "schedule-delete": get("/api/schedules/4", method="DELETE"),
        "bad-escape": get("/api/snapshots/%zz?device=%4"),
        "nul-escape": get("/api/snapshots?device=a%00b"),
        "too-many-segments": get("/api/a/b/c/d/e/f/g"),
        "trailing-slash": get("/api/devices/?wait=maybe"),
        "absolute-form": get("http://127.0.0.1:7411/api/health"),
        "big-id": get("/api/snapshots/9223372036854775808"),
        "path-only": b"/api/snapshots/1/paths?object=%41%42&&=x&object=2",
        "auth-bearer": get("/api/devices", headers=("Authorization: Bearer 0123abcd",)),
        "auth-spaces": get("/api/health", headers=("authorization: bEaReR    tok en  ",)),
        "auth-basic": get("/api/health", headers=("Authorization: Basic dXNlcjpwdw==",)),
    }


def write(dir_, seeds):
    os.makedirs(dir_, exist_ok=True)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(dir_, name), "wb") as f:
            f.write(data)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "corpus")
    write(os.path.join(out, "collector"), collector_seeds())
    write(os.path.join(out, "agent"), agent_seeds())
    write(os.path.join(out, "http"), http_seeds())


if __name__ == "__main__":
    main()
