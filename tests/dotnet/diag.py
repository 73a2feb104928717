#!/usr/bin/env python3
"""diag.py - both ends of a .NET program's diagnostics IPC, for the tests
of `gcsnap-agent --source dotnet` that need no .NET (replay_test.py,
tests/cross/dotnet-replay.sh and dotnet-pipe.sh). Python 3 standard
library only.

usage: diag.py record --pid PID --out FILE [--buffer-mb N]
       diag.py serve (--socket PATH | --tcp HOST:PORT) --trace FILE [--info FILE.info] [FAULTS]
       diag.py blocks FILE

record: a client of a running program's diagnostics socket
($TMPDIR/dotnet-diagnostic-PID-KEY-socket, TMPDIR as the program has it):
saves the payload of its ProcessInfo2 reply to FILE.info, opens a tracing
session with the provider and keywords the agent asks for, and saves the
NetTrace stream that follows the session's reply to FILE. It stops the
session (StopTracing on a connection of its own) once the stream has been
quiet for 2 s (at the latest after 60 s) and saves the stream to its end.

serve: a stand-in for the program, on a Unix socket (--socket PATH) or on
TCP (--tcp HOST:PORT, port 0 for a free one: for tests/cross/pipe-relay.c,
which serves it as a named pipe): each connection carries one command,
each served by a thread of its own. ProcessInfo2 is answered with
FILE.info (or a made-up description of "Heap" on .NET 10.0.0); ProcessInfo
with its first three strings; CollectTracing2 with OK and a session ID,
then the bytes of the trace (of FILE.gz: the bytes it holds compressed);
StopTracing with OK, after which that session's connection is closed.
Faults, on the trace's connection: --truncate N (close after N bytes),
--stall-after N (send N bytes and then nothing, the connection kept open),
--error-hresult HEX (refuse the session with that HRESULT), --garbage-at N
(the 16 bytes at offset N replaced by 0xa5; repeatable),
--close-after-reply (close right after the OK); and --before-net6 (refuse
ProcessInfo2 as a runtime before .NET 6 does, an unknown command, and
answer ProcessInfo only). --once: exit when the first session has ended.
Prints "listening PATH" (or "listening HOST:PORT", with the port bound)
once the socket accepts, then a line for each command: "process-info2" (or
"process-info2 refused", "process-info"), "collect session=ID buffer-mb=N
format=N rundown=N providers=N provider=NAME keywords=HEX level=N
filter=TEXT" (or "collect refused ..."), "stop session=ID", and "end
session=ID HOW" when a session's connection closes (HOW: stopped,
client-closed, or cut by a fault). Exits 0 on SIGTERM or SIGINT.

blocks: the objects of a stream's framing, a line each: type name (Trace,
MetadataBlock, StackBlock, EventBlock, SPBlock), offset of its tag, offset
and size of its content; for faults aimed at one part of a stream.
"""
import argparse
import glob
import gzip
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

MAGIC = b"DOTNET_IPC_V1\0"
HEADER = 20
SET_EVENTPIPE, SET_PROCESS, SET_SERVER = 0x02, 0x04, 0xFF
EP_STOP, EP_COLLECT2 = 0x01, 0x03
PROCESS_INFO, PROCESS_INFO2 = 0x00, 0x04
REPLY_OK, REPLY_ERROR = 0x00, 0xFF
E_UNKNOWN_COMMAND = 0x80131384       # what the runtime answers to a command it lacks
E_INVALID_ARG = 0x80070057
RUNTIME_PROVIDER = "Microsoft-Windows-DotNETRuntime"
HEAP_KEYWORDS = 0x1D80001            # the agent's: GC, types, the heap walk and its names
LEVEL_VERBOSE = 5
GARBAGE = b"\xa5" * 16


# ---- messages ----------------------------------------------------------------

def message(cset, cid, payload=b""):
    return MAGIC + struct.pack("<HBBH", HEADER + len(payload), cset, cid, 0) + payload


def ipc_string(s):
    if not s:
        return struct.pack("<I", 0)
    units = (s + "\0").encode("utf-16-le")
    return struct.pack("<I", len(units) // 2) + units


def read_string(b, off):
    """The IPC string at off: (text, offset after it)."""
    (units,) = struct.unpack_from("<I", b, off)
    off += 4
    text = b[off:off + 2 * units].decode("utf-16-le", "replace").rstrip("\0")
    return text, off + 2 * units


def recv_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError("the connection closed after %d of %d bytes" % (len(buf), n))
        buf += chunk
    return buf


def recv_message(sock):
    """(command set, command ID, payload) of the next message."""
    head = recv_exact(sock, HEADER)
    if head[:14] != MAGIC:
        raise ValueError("not a diagnostics IPC message: %r" % head[:14])
    size, cset, cid, _ = struct.unpack_from("<HBBH", head, 14)
    if size < HEADER:
        raise ValueError("a message of %d bytes" % size)
    return cset, cid, recv_exact(sock, size - HEADER)


def parse_info(payload):
    """The fields of a ProcessInfo2 payload."""
    (pid,) = struct.unpack_from("<Q", payload, 0)
    off = 24                             # the pid, then the runtime's 16-byte cookie
    fields = {"pid": pid}
    for name in ("command_line", "os", "arch", "assembly", "version"):
        if off >= len(payload):
            break
        fields[name], off = read_string(payload, off)
    return fields


def blocks(b):
    """The objects of a NetTrace stream's FastSerialization framing, after
    its magic and header: [(type name, offset of the object's tag, offset
    of its content, content size)]."""
    (n,) = struct.unpack_from("<i", b, 8)          # after the magic "Nettrace"
    p = 12 + n
    out = []
    while p < len(b) and b[p] == 5:                # BeginPrivateObject
        start = p
        (nl,) = struct.unpack_from("<i", b, p + 11)   # two tags, a null, two versions
        name = b[p + 15:p + 15 + nl].decode("ascii", "replace")
        p += 15 + nl + 1                           # and the type's EndObject
        if name == "Trace":
            size = 48
        else:
            (size,) = struct.unpack_from("<i", b, p)
            p = (p + 4 + 3) & ~3                   # a block's content is 4-aligned
        out.append((name, start, p, size))
        p += size + 1                              # the object's EndObject
    return out


# ---- record ------------------------------------------------------------------

def find_socket(pid):
    tmp = "/tmp"
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            for var in f.read().split(b"\0"):
                if var.startswith(b"TMPDIR=") and len(var) > 7:
                    tmp = var[7:].decode()
    except OSError:
        pass
    found = glob.glob(os.path.join(tmp, "dotnet-diagnostic-%d-*-socket" % pid))
    if not found:
        sys.exit("diag.py: no diagnostics socket of process %d in %s" % (pid, tmp))
    return max(found, key=os.path.getmtime)


def command(path, msg):
    """Sends msg on a new connection: (the connection, the reply's payload)."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(msg)
    cset, cid, payload = recv_message(s)
    if cset != SET_SERVER or cid != REPLY_OK:
        code = struct.unpack_from("<I", payload)[0] if len(payload) >= 4 else 0
        s.close()
        sys.exit("diag.py: %s refused the command (set %#x id %#x, HRESULT %#010x)"
                 % (path, cset, cid, code))
    return s, payload


def record(args):
    path = find_socket(args.pid)
    s, info = command(path, message(SET_PROCESS, PROCESS_INFO2))
    s.close()
    with open(args.out + ".info", "wb") as f:
        f.write(info)
    collect = struct.pack("<IIBI", args.buffer_mb, 1, 0, 1) + \
        struct.pack("<QI", HEAP_KEYWORDS, LEVEL_VERBOSE) + ipc_string(RUNTIME_PROVIDER) + ipc_string("")
    stream, reply = command(path, message(SET_EVENTPIPE, EP_COLLECT2, collect))
    (session,) = struct.unpack_from("<Q", reply)
    data = bytearray()
    t0 = last = time.monotonic()
    while time.monotonic() - t0 < 60:
        if not select.select([stream], [], [], 0.1)[0]:
            if data and time.monotonic() - last >= 2:
                break
            continue
        chunk = stream.recv(1 << 16)
        if not chunk:
            break
        data += chunk
        last = time.monotonic()
    stopper, _ = command(path, message(SET_EVENTPIPE, EP_STOP, struct.pack("<Q", session)))
    stream.settimeout(30)
    while True:
        chunk = stream.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    stopper.close()
    stream.close()
    with open(args.out, "wb") as f:
        f.write(data)
    fields = parse_info(info)
    print("recorded %d bytes of process %d (%s, .NET %s) to %s" %
          (len(data), args.pid, fields.get("assembly", "?"), fields.get("version", "?"), args.out))
    return 0


# ---- serve -------------------------------------------------------------------

def made_up_info():
    return struct.pack("<Q", os.getpid()) + bytes(16) + ipc_string("/usr/bin/dotnet Heap.dll") + \
        ipc_string("Linux") + ipc_string("x64") + ipc_string("Heap") + ipc_string("10.0.0")


class Server:
    def __init__(self, args):
        self.a = args
        opener = gzip.open if args.trace.endswith(".gz") else open
        with opener(args.trace, "rb") as f:
            trace = bytearray(f.read())
        for off in args.garbage_at:
            trace[off:off + len(GARBAGE)] = GARBAGE[:max(0, len(trace) - off)]
        self.trace = bytes(trace)
        if args.info:
            with open(args.info, "rb") as f:
                self.info = f.read()
        else:
            self.info = made_up_info()
        self.lock = threading.Lock()
        self.sessions = {}               # session ID -> Event set by its StopTracing
        self.next_session = 0x5E5510
        self.done = threading.Event()    # --once: the first session has ended

    def log(self, line):
        with self.lock:
            print(line, flush=True)

    def serve(self, conn):
        try:
            cset, cid, payload = recv_message(conn)
            if cset == SET_PROCESS and cid == PROCESS_INFO2 and self.a.before_net6:
                self.log("process-info2 refused")
                conn.sendall(message(SET_SERVER, REPLY_ERROR, struct.pack("<I", E_UNKNOWN_COMMAND)))
            elif cset == SET_PROCESS and cid == PROCESS_INFO2:
                self.log("process-info2")
                conn.sendall(message(SET_SERVER, REPLY_OK, self.info))
            elif cset == SET_PROCESS and cid == PROCESS_INFO:
                self.log("process-info")
                conn.sendall(message(SET_SERVER, REPLY_OK, self.info_v1()))
            elif cset == SET_EVENTPIPE and cid == EP_COLLECT2:
                self.collect(conn, payload)
            elif cset == SET_EVENTPIPE and cid == EP_STOP and len(payload) >= 8:
                (session,) = struct.unpack_from("<Q", payload)
                self.log("stop session=%x" % session)
                with self.lock:
                    stopped = self.sessions.get(session)
                if stopped is None:
                    conn.sendall(message(SET_SERVER, REPLY_ERROR, struct.pack("<I", E_INVALID_ARG)))
                else:
                    stopped.set()        # before the reply, after which the client may close
                    conn.sendall(message(SET_SERVER, REPLY_OK, struct.pack("<Q", session)))
            else:
                self.log("unknown command set=%#x id=%#x" % (cset, cid))
                conn.sendall(message(SET_SERVER, REPLY_ERROR, struct.pack("<I", E_UNKNOWN_COMMAND)))
        except (EOFError, ValueError, struct.error) as e:
            self.log("malformed request: %s" % e)
        except OSError:                  # the client went: nothing to tell it
            pass
        finally:
            conn.close()

    def info_v1(self):
        """ProcessInfo's payload: ProcessInfo2's less its last two strings."""
        off = 24
        for _ in range(3):
            _, off = read_string(self.info, off)
        return self.info[:off]

    @staticmethod
    def describe_collect(p):
        """CollectTracing2's request in words, as the log line has it."""
        buffer_mb, fmt, rundown, count = struct.unpack_from("<IIBI", p)
        words = ["buffer-mb=%d format=%d rundown=%d providers=%d" % (buffer_mb, fmt, rundown, count)]
        off = 13
        for _ in range(count):
            keywords, level = struct.unpack_from("<QI", p, off)
            name, off = read_string(p, off + 12)
            flt, off = read_string(p, off)
            words.append("provider=%s keywords=%#x level=%d filter=%s" % (name, keywords, level, flt))
        if off != len(p):
            raise ValueError("%d bytes after the providers" % (len(p) - off))
        return " ".join(words)

    def collect(self, conn, payload):
        a = self.a
        session, stopped, how = None, None, "cut"   # how the session's connection ended
        try:
            try:
                request = self.describe_collect(payload)
            except (struct.error, ValueError) as e:
                self.log("malformed collect: %s" % e)
                conn.sendall(message(SET_SERVER, REPLY_ERROR, struct.pack("<I", E_INVALID_ARG)))
                return
            if a.error_hresult is not None:
                self.log("collect refused hresult=%08x %s" % (a.error_hresult, request))
                conn.sendall(message(SET_SERVER, REPLY_ERROR, struct.pack("<I", a.error_hresult)))
                return
            with self.lock:
                session = self.next_session
                self.next_session += 1
                stopped = self.sessions[session] = threading.Event()
            self.log("collect session=%x %s" % (session, request))
            conn.sendall(message(SET_SERVER, REPLY_OK, struct.pack("<Q", session)))
            if a.close_after_reply:
                return
            data = self.trace
            if a.truncate is not None:
                conn.sendall(data[:a.truncate])
                return
            if a.stall_after is not None:
                data = data[:a.stall_after]
            conn.sendall(data)
            # Like the runtime: the session's connection stays open until the
            # session is stopped or the client goes.
            while not stopped.is_set():
                if select.select([conn], [], [], 0.1)[0] and not conn.recv(4096):
                    break
            how = "stopped" if stopped.is_set() else "client-closed"
        except OSError:                  # the client went while the trace went out
            how = "stopped" if stopped and stopped.is_set() else "client-closed"
        finally:
            if session is not None:
                self.log("end session=%x %s" % (session, how))
            if a.once:
                self.done.set()

    def listen(self):
        """The listening socket and the name it is printed by."""
        if self.a.tcp:
            host, port = self.a.tcp
            family = socket.AF_INET6 if ":" in host else socket.AF_INET
            lsock = socket.socket(family)
            # Restarted on the same port (another fault), while the last
            # run's connections linger in TIME_WAIT.
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind((host, port))
            port = lsock.getsockname()[1]
            return lsock, ("[%s]:%d" if family == socket.AF_INET6 else "%s:%d") % (host, port)
        path = self.a.socket
        if os.path.lexists(path):
            os.unlink(path)
        lsock = socket.socket(socket.AF_UNIX)
        lsock.bind(path)
        return lsock, path

    def run(self):
        lsock, name = self.listen()
        lsock.listen(16)
        lsock.settimeout(0.2)

        def stop(signum, frame):
            self.done.set()
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        print("listening %s" % name, flush=True)
        try:
            while not self.done.is_set():
                try:
                    conn, _ = lsock.accept()
                except socket.timeout:
                    continue
                except InterruptedError:
                    continue
                conn.settimeout(None)
                threading.Thread(target=self.serve, args=(conn,), daemon=True).start()
        finally:
            lsock.close()
            if not self.a.tcp:
                try:
                    os.unlink(name)
                except OSError:
                    pass
        return 0


def host_port(text):
    """HOST:PORT (an IPv6 host in brackets) as (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError("not HOST:PORT: %r" % text)
    return host.strip("[]"), int(port)


def main():
    ap = argparse.ArgumentParser(description="both ends of a .NET program's diagnostics IPC")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="record a program's heap walk stream")
    r.add_argument("--pid", type=int, required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--buffer-mb", type=int, default=256)
    b = sub.add_parser("blocks", help="list the objects of a stream's framing")
    b.add_argument("trace")
    s = sub.add_parser("serve", help="stand in for a program, from a recorded stream")
    where = s.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", metavar="PATH")
    where.add_argument("--tcp", type=host_port, metavar="HOST:PORT")
    s.add_argument("--trace", required=True)
    s.add_argument("--info")
    s.add_argument("--truncate", type=int, metavar="N")
    s.add_argument("--stall-after", type=int, metavar="N")
    s.add_argument("--error-hresult", type=lambda x: int(x, 16), metavar="HEX")
    s.add_argument("--garbage-at", type=int, action="append", default=[], metavar="N")
    s.add_argument("--close-after-reply", action="store_true")
    s.add_argument("--before-net6", action="store_true")
    s.add_argument("--once", action="store_true")
    args = ap.parse_args()
    if args.cmd == "record":
        return record(args)
    if args.cmd == "blocks":
        opener = gzip.open if args.trace.endswith(".gz") else open
        with opener(args.trace, "rb") as f:
            for name, tag, content, size in blocks(f.read()):
                print(name, tag, content, size)
        return 0
    return Server(args).run()


if __name__ == "__main__":
    sys.exit(main())
