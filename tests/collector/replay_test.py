#!/usr/bin/env python3
"""replay_test.py - the recorded streams of tests/fixtures/streams replayed
against a fresh gcsnapd with gcsnap replay: every snapshot is stored and
equals the recorded original byte for byte; the collector's own recording
of the replay holds the same frames; a stream cut short (inside a frame, or
between frames inside a snapshot) replays to a failed snapshot, never a
complete one.

usage: replay_test.py BIN_DIR STREAMS_DIR WORK_DIR

Exit 0 when every check passed, 1 when one failed, 77 when gcsnapd is not
built.
"""
import glob
import os
import shutil
import sys
import traceback

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e_lib as L            # noqa: E402


def varint(data, pos):
    value, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7f) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def read_stream(path):
    """(device ID, [(offset_us, frame bytes)], [end offset of each frame
    record]) of a .gcstream, as proto/README.md describes it."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"GCSTREAM":
        raise L.Failure("%s: no GCSTREAM magic" % path)
    pos = 8
    version, pos = varint(data, pos)
    protocol, pos = varint(data, pos)
    if (version, protocol) != (1, 1):
        raise L.Failure("%s: container %d, protocol %d" % (path, version, protocol))
    n, pos = varint(data, pos)
    device = data[pos:pos + n].decode()
    pos += n
    _start, pos = varint(data, pos)
    frames, ends = [], []
    while pos < len(data):
        offset, pos = varint(data, pos)
        n, pos = varint(data, pos)
        frames.append((offset, data[pos:pos + n]))
        pos += n
        ends.append(pos)
    if pos != len(data):
        raise L.Failure("%s: the last frame is cut short" % path)
    return device, frames, ends


def body_of(frame):
    """The Envelope's field number (Hello 1, SnapshotBegin 4, SnapshotEnd 11...)."""
    return frame[0] >> 3 if frame else 0


class Test:
    def __init__(self, bin_dir, streams, work):
        self.gcsnap = os.path.join(bin_dir, "gcsnap")
        self.gcsnapd = os.path.join(bin_dir, "gcsnapd")
        self.streams = streams
        self.work = work
        self.procs = L.Procs()
        self.c = L.Checks()

    def collector(self, name, *extra):
        col = L.Collector(self.procs, self.gcsnapd, self.work, name)
        if extra:      # restart with the extra flags on the same ports and store
            self.procs.stop(col.proc)
            col.proc = self.procs.start([self.gcsnapd, "--listen", col.agent_addr, "--http",
                                         "127.0.0.1:%d" % col.http_port, "--store", col.store]
                                        + list(extra), log=col.log)
            L.wait_until("the collector's HTTP API", col._up, timeout=15)
        return col

    def replay(self, col, path, *extra):
        return L.run([self.gcsnap, "replay", path, "--to", col.agent_addr] + list(extra), timeout=120)

    def fetch(self, col, sid, out):
        r = L.run([self.gcsnap, "fetch", str(sid), "-o", out, "--format", "gclog",
                   "--collector", col.url])
        return self.c.equal(r.returncode, 0, "gcsnap fetch %s: %s" % (sid, r.stderr))

    def check_fixture(self, stream):
        c = self.c
        name = os.path.basename(stream)[:-len(".gcstream")]
        expected = os.path.join(self.streams, name + ".gclog")
        device, frames, _ = read_stream(stream)
        begins = sum(1 for _, f in frames if body_of(f) == 4)
        rec = os.path.join(self.work, name + "-rec")
        col = self.collector(name, "--record", rec)
        r = self.replay(col, stream, "--speed", "max" if begins > 1 else "realtime")
        c.equal(r.returncode, 0, "%s: gcsnap replay exits 0\n%s%s" % (name, r.stdout, r.stderr))
        snaps = col.snapshots("?device=" + device)
        c.equal(len(snaps), begins, "%s: one stored snapshot per SnapshotBegin" % name)
        for s in snaps:
            c.equal(s["status"], "complete", "%s: snapshot %d is complete" % (name, s["id"]))
            got = os.path.join(self.work, "%s-%d.gclog" % (name, s["id"]))
            if s["status"] == "complete" and self.fetch(col, s["id"], got):
                c.ok(L.same_file(got, expected), "%s: snapshot %d equals %s byte for byte"
                     % (name, s["id"], expected), "cmp %s %s" % (got, expected))
        col.stop()
        # The collector's recording of the replay: the same frames, except
        # SnapshotBegin, which replay sends unasked.
        recorded = glob.glob(os.path.join(rec, "*.gcstream"))
        if c.equal(len(recorded), 1, "%s: the replayed session is recorded" % name):
            rdevice, rframes, _ = read_stream(recorded[0])
            c.equal(rdevice, device, "%s: the recording names the device" % name)
            same = [a == b for (_, a), (_, b) in zip(frames, rframes) if body_of(a) != 4]
            c.ok(len(rframes) == len(frames) and all(same),
                 "%s: the recording holds the replayed frames (%d of %d)" % (name, len(rframes), len(frames)))
            c.ok(all(b >= a for (a, _), (b, _) in zip(rframes, rframes[1:])),
                 "%s: receive times do not go back" % name)
        self.check_cut(name, stream, frames)

    def check_cut(self, name, stream, frames):
        """Cut copies: inside the frame after SnapshotBegin, and at the frame
        boundary before SnapshotEnd."""
        c = self.c
        device, _, ends = read_stream(stream)
        first_begin = next(i for i, (_, f) in enumerate(frames) if body_of(f) == 4)
        first_end = next(i for i, (_, f) in enumerate(frames) if body_of(f) == 11)
        with open(stream, "rb") as f:
            data = f.read()
        cuts = {"inside-frame": ends[first_begin + 1] - 3, "between-frames": ends[first_end - 1]}
        col = self.collector(name + "-cut")
        for how, size in sorted(cuts.items()):
            cut = os.path.join(self.work, "%s-%s.gcstream" % (name, how))
            with open(cut, "wb") as f:
                f.write(data[:size])
            dev = "%s-%s" % (device, how)
            r = self.replay(col, cut, "--device-id", dev)
            c.equal(r.returncode, 1, "%s %s: gcsnap replay exits 1\n%s%s" % (name, how, r.stdout, r.stderr))

            def failed():
                return [s for s in col.snapshots("?device=" + dev) if s["status"] == "failed"]
            try:
                L.wait_until("the cut snapshot to be failed", failed, timeout=10)
            except L.Failure as e:
                c.ok(False, "%s %s: %s" % (name, how, e))
            snaps = col.snapshots("?device=" + dev)
            c.equal([s["status"] for s in snaps], ["failed"],
                    "%s %s: one snapshot, failed, none complete" % (name, how))
        # A device ID with a terminal escape: the collector refuses it, and
        # replay shows it (and the collector's message) escaped.
        r = L.run([self.gcsnap, "replay", stream, "--to", col.agent_addr, "--device-id",
                   "\x1b]0;owned\x07dev"], timeout=60)
        out = r.stdout + r.stderr
        c.ok(r.returncode != 0 and "\x1b" not in out and "(device \\x1b]0;owned\\x07dev," in out,
             "%s: replay prints a device ID from the recording escaped" % name, out)
        col.stop()


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    bin_dir, streams, work = sys.argv[1:]
    L.install_signal_exit()
    t = Test(bin_dir, streams, work)
    if not os.access(t.gcsnapd, os.X_OK):
        print("SKIP: gcsnapd is not built")
        return L.SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    fixtures = sorted(glob.glob(os.path.join(streams, "*.gcstream")))
    try:
        t.c.ok(len(fixtures) >= 2, "at least two recorded streams in %s" % streams)
        for stream in fixtures:
            L.log("replaying %s" % os.path.basename(stream))
            t.check_fixture(stream)
    except L.Failure as e:
        t.c.ok(False, str(e))
    except Exception:
        t.c.ok(False, "unexpected error", traceback.format_exc())
    finally:
        t.procs.stop_all()
    print("%d checks passed, %d failed" % (t.c.passed, t.c.failures))
    return 1 if t.c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
