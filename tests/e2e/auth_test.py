#!/usr/bin/env python3
"""auth_test.py - end-to-end tests of the device keys: gcsnap keys, the
collector's challenge and the agent's proof, on loopback.

usage: auth_test.py SUITE BIN_DIR WORK_DIR

Suites:
  keys    gcsnap keys add/list/rm, with and without --json and --key-file;
          the catalog holds no key bytes, only their verifiers
  agent   the real agent: the right key stores a capture; a wrong key is
          refused, logged by the collector, and the agent waits a minute
          before it tries again (--once: exit 4); a device without a key
          is refused once keys exist, and with --require-keys before
  proof   a scripted agent: the proof computed here from the documented
          scheme is accepted; each connection gets a new nonce; a proof
          replayed to a new nonce, a proof for another device ID and a
          malformed proof are refused

Exit status 0 when every check passed, 1 when one failed, 77 (skipped) when
the suite cannot run here (no gcsnapd built, no --connect in the agent).
"""
import glob
import hashlib
import hmac
import json
import os
import socket
import stat
import subprocess
import sys
import time

sys.dont_write_bytecode = True        # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_lib as L            # noqa: E402
import e2e_test as T           # noqa: E402
import fake_agent as F         # noqa: E402

AUTH_CHALLENGE, AUTH_PROOF = 15, 16
E_AUTH = 15
SCHEME = b"gcsnap-key-1"
PROTOCOL_VERSION = 1


def proof_of(key, nonce, device_id, version=PROTOCOL_VERSION):
    """The proof as proto/gcsnap.proto defines it, computed independently of
    the C code: K XOR HMAC-SHA-256(SHA-256(K), M)."""
    m = SCHEME + b"\0" + nonce + version.to_bytes(4, "big") + device_id.encode()
    mac = hmac.new(hashlib.sha256(key).digest(), m, hashlib.sha256).digest()
    return bytes(a ^ b for a, b in zip(key, mac))


def keys(env, *args):
    return env.cli("keys", *args)


def add_key(env, store, device_id):
    """A new key for device_id (bytes), through gcsnap keys add --json."""
    r = keys(env, "add", device_id, "--store", store, "--json")
    if r.returncode != 0:
        raise L.Failure("gcsnap keys add %s: %s" % (device_id, r.stderr))
    return bytes.fromhex(json.loads(r.stdout)["key"])


def store_bytes(store):
    """Every byte of the catalog's files (the database and its WAL)."""
    data = b""
    for path in glob.glob(os.path.join(store, "catalog.db*")):
        with open(path, "rb") as f:
            data += f.read()
    return data


class Handshake:
    """A scripted agent up to its Welcome (or refusal)."""

    def __init__(self, addr, device_id):
        host, port = addr.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=20)
        self.agent = F.FakeAgent.__new__(F.FakeAgent)      # only its framing
        self.agent.sock, self.agent.buf, self.agent.device_id = self.sock, b"", device_id
        hello = (F.f_uint(1, PROTOCOL_VERSION) + F.f_bytes(2, "fake-0.1") +
                 F.f_bytes(3, device_id) + F.f_bytes(4, "fake app.exe") +
                 F.f_bytes(5, "x86_64") + F.f_uint(6, 8) + F.f_uint(7, 1000))
        self.agent.send(F.frame(F.envelope(F.HELLO, hello)))

    def recv(self):
        return self.agent.recv()

    def challenge(self):
        """(nonce, scheme), or raises when the answer is not AuthChallenge."""
        kind, body = self.recv()
        if kind != AUTH_CHALLENGE:
            raise L.Failure("expected AuthChallenge, got message %s %r" % (kind, body))
        f = F.fields(body)
        return f.get(1, [b""])[0], f.get(2, [b""])[0]

    def prove(self, proof):
        """What the collector answers a proof: ("welcome",), ("error", code,
        message) or ("closed",)."""
        self.agent.send(F.frame(F.envelope(AUTH_PROOF, F.f_bytes(1, proof))))
        kind, body = self.recv()
        if kind == F.WELCOME:
            return ("welcome",)
        if kind == F.ERROR:
            f = F.fields(body)
            return ("error", f.get(1, [0])[0], f.get(2, [b""])[0].decode(errors="replace"))
        return ("closed",) if kind is None else ("message", kind)

    def close(self):
        self.sock.close()


# ---- suites ---------------------------------------------------------------

def suite_keys(env):
    c = env.c
    store = env.path("store")
    # add, --json: the key once, 64 hex digits
    r = keys(env, "add", "pos-1", "--store", store, "--json")
    c.equal(r.returncode, 0, "keys add --json exit status: %s" % r.stderr)
    added = json.loads(r.stdout) if r.returncode == 0 else {}
    c.equal(added.get("device_id"), "pos-1", "keys add --json device_id")
    key1 = added.get("key", "")
    c.ok(len(key1) == 64 and all(ch in "0123456789abcdef" for ch in key1),
         "keys add --json prints 64 hex digits", key1)
    # add, text: the key on its own line
    r = keys(env, "add", "pos 2 \u00e9", "--store", store)
    c.equal(r.returncode, 0, "keys add (text) exit status: %s" % r.stderr)
    key2 = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    c.ok(len(key2) == 64, "keys add prints the key on the last line", r.stdout)
    # --key-file: 0600, not printed
    kf = env.path("pos-3.key")
    r = keys(env, "add", "pos-3", "--store", store, "--key-file", kf)
    c.equal(r.returncode, 0, "keys add --key-file exit status: %s" % r.stderr)
    key3 = open(kf).read().strip() if os.path.exists(kf) else ""
    c.ok(len(key3) == 64, "--key-file holds the key", key3)
    c.ok(key3 not in r.stdout, "--key-file: the key is not printed", r.stdout)
    if os.path.exists(kf):
        c.equal(stat.S_IMODE(os.stat(kf).st_mode), 0o600, "--key-file mode")
    # an existing key file is refused, and no key is stored for it
    r = keys(env, "add", "pos-4", "--store", store, "--key-file", kf)
    c.equal(r.returncode, 2, "keys add --key-file onto an existing file")
    c.equal(open(kf).read().strip(), key3, "the existing key file is left alone")
    # a device with a key: refused, then --replace
    r = keys(env, "add", "pos-1", "--store", store)
    c.equal(r.returncode, 1, "keys add for a device that has a key: %s" % r.stderr)
    c.ok("already has a key" in r.stderr, "keys add says the device has a key", r.stderr)
    r = keys(env, "add", "pos-1", "--store", store, "--replace", "--json")
    c.equal(r.returncode, 0, "keys add --replace: %s" % r.stderr)
    key1b = json.loads(r.stdout).get("key", "") if r.returncode == 0 else ""
    c.ok(len(key1b) == 64 and key1b != key1, "--replace makes a new key")
    # list, both forms
    r = keys(env, "list", "--store", store, "--json")
    c.equal(r.returncode, 0, "keys list --json: %s" % r.stderr)
    listed = json.loads(r.stdout)["keys"] if r.returncode == 0 else []
    c.equal([k["device_id"] for k in listed], ["pos 2 \u00e9", "pos-1", "pos-3"],
            "keys list --json devices")
    c.ok(all(isinstance(k.get("created"), int) and k["created"] > 1.6e9 for k in listed),
         "keys list --json: created is Unix seconds", listed)
    c.ok(all(set(k) == {"device_id", "created"} for k in listed),
         "keys list --json shows nothing of the keys", listed)
    r = keys(env, "list", "--store", store)
    c.ok(r.returncode == 0 and "pos-3" in r.stdout and "DEVICE" in r.stdout, "keys list (text)",
         r.stdout + r.stderr)
    # the catalog holds the verifiers, never the keys
    data = store_bytes(store)
    for name, k in (("pos-1", key1b), ("pos 2", key2), ("pos-3", key3), ("pos-1 old", key1)):
        if len(k) != 64:
            continue
        raw = bytes.fromhex(k)
        c.ok(raw not in data and k.encode() not in data and k.upper().encode() not in data,
             "the catalog does not hold the key of %s" % name)
    if len(key3) == 64:
        c.ok(hashlib.sha256(bytes.fromhex(key3)).digest() in data,
             "the catalog holds SHA-256 of the key of pos-3 (the check itself can fail)")
    # rm
    r = keys(env, "rm", "pos-3", "--store", store, "--json")
    c.ok(r.returncode == 0 and json.loads(r.stdout) == {"device_id": "pos-3", "removed": True},
         "keys rm --json", r.stdout + r.stderr)
    r = keys(env, "rm", "pos-3", "--store", store)
    c.equal(r.returncode, 1, "keys rm of a device without a key")
    c.ok("has no key" in r.stderr, "keys rm says the device has no key", r.stderr)
    r = keys(env, "rm", "pos 2 \u00e9", "--store", store)
    c.ok(r.returncode == 0 and "removed" in r.stdout, "keys rm (text)", r.stdout + r.stderr)
    r = keys(env, "list", "--store", store, "--json")
    c.equal([k["device_id"] for k in json.loads(r.stdout)["keys"]], ["pos-1"],
            "keys list after rm")
    # usage errors and a missing store
    for args, what in ((("add",), "add without DEVICE"), (("frob", "x"), "unknown action"),
                       (("list", "x"), "list with an argument"),
                       (("rm", "x", "--key-file", "f"), "--key-file with rm"),
                       (("add", "a\tb"), "a device ID with a control character"),
                       (("add", "x" * 81), "a device ID above 80 bytes")):
        r = keys(env, *args, "--store", store)
        c.equal(r.returncode, 2, "keys %s: exit status" % what)
    r = keys(env, "list", "--store", env.path("no-such-store"))
    c.equal(r.returncode, 2, "keys list on a missing store")
    c.ok(not os.path.exists(env.path("no-such-store")), "keys list does not make a store")


def count_lines(text, needle):
    return sum(1 for line in text.splitlines() if needle in line)


def suite_agent(env):
    env.need_collector()
    c = env.c
    work = env.work
    source = "mock:objects=5000,seed=3"
    # A key added before gcsnapd ever ran (keys add makes the store).
    pre_key = add_key(env, os.path.join(work, "gcsnapd-store"), "pre-1")
    col = L.Collector(env.procs, env.gcsnapd, work)
    r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
               "pre-1", "--key", pre_key.hex(), "--once"], timeout=60)
    c.equal(r.returncode, 0, "a key added before gcsnapd first ran: exit status (%s)"
            % r.stderr.strip())
    # Keys added while the collector runs hold from the next Hello on.
    kf = env.path("good.key")
    r = keys(env, "add", "good-1", "--store", col.store, "--key-file", kf)
    c.equal(r.returncode, 0, "keys add while gcsnapd runs: %s" % r.stderr)
    add_key(env, col.store, "wrong-1")

    # The right key: connected, and a capture is stored.
    good = env.start_agent(col, source, "good-1", "--key-file", kf)
    col.wait_connected("good-1")
    T.check_stored(env, col, "good-1", source, "good")
    env.procs.stop(good)
    with open(env.path("agent-good-1.log"), errors="replace") as f:
        c.ok("key accepted" in f.read(), "the agent says its key was accepted")

    # A wrong key: refused and logged; the agent does not hammer.
    bad_kf = env.path("bad.key")
    with open(bad_kf, "w") as f:
        f.write("ab" * 32 + "\n")
    bad_log = env.path("agent-wrong-1.log")
    bad = env.start_agent(col, source, "wrong-1", "--key-file", bad_kf, "--retry-max", "1",
                          log=bad_log)
    watch = 8.0
    time.sleep(watch)
    still_running = bad.poll() is None
    env.procs.stop(bad)
    refusals = count_lines(col.log_text(), "wrong key for device 'wrong-1'")
    c.ok(refusals >= 1, "the collector logs the wrong key", col.log_text()[-2000:])
    c.ok(refusals <= 1, "a refused agent tries at most once in %.0f s (not with --retry-max 1)"
         % watch, "%d refusals" % refusals)
    c.ok(still_running, "a refused agent without --once keeps running")
    with open(bad_log, errors="replace") as f:
        text = f.read()
    c.ok("collector error 15 (auth): wrong key for device 'wrong-1'" in text,
         "the agent prints the collector's refusal", text)
    waits = [float(line.split("reconnecting in ")[1].split()[0])
             for line in text.splitlines() if "reconnecting in " in line]
    c.ok(waits and all(60 <= w <= 75 for w in waits),
         "the agent waits 60 to 75 s after a refusal", text)
    d = col.device("wrong-1")
    c.ok(d is None or not d.get("connected"), "a refused device is never connected", d)

    # --once: a refused key exits 4, and so does a missing one.
    r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
               "wrong-1", "--key", "cd" * 32, "--once"], timeout=60)
    c.equal(r.returncode, 4, "--once with a wrong key: exit status (%s)" % r.stderr.strip())
    r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
               "wrong-1", "--once"], timeout=60)
    c.equal(r.returncode, 4, "--once without a key where one is needed: exit status")
    c.ok("requires a key for device wrong-1" in r.stderr, "the agent says a key is needed",
         r.stderr)
    # A device without a key, once keys exist: refused with a clear message.
    r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
               "stranger", "--once"], timeout=60)
    c.equal(r.returncode, 4, "--once for a device without a key: exit status")
    c.ok("device 'stranger' has no key at this collector" in r.stderr,
         "the agent prints why a device without a key is refused", r.stderr)
    c.ok("device 'stranger' has no key" in col.log_text(), "the collector logs it")
    # --key, right: stored.
    key = add_key(env, col.store, "once-key")
    r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
               "once-key", "--key", key.hex(), "--once"], timeout=60)
    c.equal(r.returncode, 0, "--once with --key: exit status (%s)" % r.stderr.strip())
    c.equal([s["status"] for s in col.snapshots("?device=once-key")], ["complete"],
            "--once with --key: one complete snapshot")
    # Malformed keys are usage errors.
    for extra in (["--key", "abc"], ["--key-file", env.path("missing.key")],
                  ["--key", "00" * 32, "--key-file", kf]):
        r = L.run([env.agent, "--source", source, "--connect", col.agent_addr, "--device-id",
                   "x", "--once"] + extra, timeout=30)
        c.equal(r.returncode, 2, "gcsnap-agent %s: exit status" % " ".join(extra))
    col.stop()

    # --require-keys with no key in the catalog: keyless devices are refused.
    strict = L.Collector(env.procs, env.gcsnapd, work, name="strict", extra=["--require-keys"])
    r = L.run([env.agent, "--source", source, "--connect", strict.agent_addr, "--device-id",
               "open-1", "--once"], timeout=60)
    c.equal(r.returncode, 4, "--require-keys: a device without a key is refused")
    strict.stop()
    # Without keys and without --require-keys: open, as before.
    open_col = L.Collector(env.procs, env.gcsnapd, work, name="open")
    r = L.run([env.agent, "--source", source, "--connect", open_col.agent_addr, "--device-id",
               "open-1", "--key", "00" * 32, "--once"], timeout=60)
    c.equal(r.returncode, 0, "no keys at the collector: an agent with a key is let in too")
    c.ok("did not ask for the key" in r.stderr, "the agent says no key was asked for", r.stderr)
    open_col.stop()


def suite_proof(env):
    env.need_collector()
    c = env.c
    col = L.Collector(env.procs, env.gcsnapd, env.work)
    key = add_key(env, col.store, "dev-1")
    add_key(env, col.store, "dev-2")

    h = Handshake(col.agent_addr, "dev-1")
    nonce1, scheme = h.challenge()
    c.equal(scheme, SCHEME, "AuthChallenge scheme")
    c.equal(len(nonce1), 32, "AuthChallenge nonce length")
    proof1 = proof_of(key, nonce1, "dev-1")
    c.equal(h.prove(proof1), ("welcome",), "the documented proof is accepted")
    col.wait_connected("dev-1")
    h.close()

    def refused(device_id, make_proof, what):
        hs = Handshake(col.agent_addr, device_id)
        nonce, _ = hs.challenge()
        ans = hs.prove(make_proof(nonce))
        hs.close()
        c.ok(ans[0] == "error" and ans[1] == E_AUTH, what, ans)
        return nonce

    wait_gone = lambda: L.wait_until("dev-1 to disconnect",  # noqa: E731
                                     lambda: not col.device("dev-1")["connected"])
    wait_gone()
    nonce2 = refused("dev-1", lambda n: proof1, "a proof replayed to a new nonce is refused")
    c.ok(nonce2 != nonce1, "each connection gets a new nonce")
    refused("dev-2", lambda n: proof_of(key, n, "dev-2"),
            "dev-1's key does not prove dev-2")
    refused("dev-1", lambda n: proof_of(key, n, "dev-1", version=2),
            "a proof for another protocol version is refused")
    refused("dev-1", lambda n: proof_of(key, n, "dev-1")[:31], "a short proof is refused")
    c.ok("wrong key for device 'dev-1'" in col.log_text(), "the collector logs refusals")
    # Hello again instead of the proof: a protocol error.
    hs = Handshake(col.agent_addr, "dev-1")
    hs.challenge()
    hs.agent.send(F.frame(F.envelope(F.HELLO, F.f_uint(1, 1) + F.f_bytes(3, "dev-1"))))
    kind, body = hs.recv()
    c.ok(kind == F.ERROR and F.fields(body).get(1, [0])[0] == 1,
         "Hello instead of AuthProof: Error protocol", (kind, body))
    hs.close()
    # The right proof still works after all that.
    hs = Handshake(col.agent_addr, "dev-1")
    nonce, _ = hs.challenge()
    c.equal(hs.prove(proof_of(key, nonce, "dev-1")), ("welcome",), "a fresh proof is accepted")
    hs.close()
    status, body = col.api("/api/devices")
    c.ok(status == 200 and "dev-2" not in [d["device_id"] for d in body["devices"]],
         "a device never admitted is not in the catalog", body)
    col.stop()


SUITES = {"keys": suite_keys, "agent": suite_agent, "proof": suite_proof}


def make_env(bin_dir, work):
    return T.Env(bin_dir, work)


if __name__ == "__main__":
    sys.exit(L.main("auth_test.py", SUITES, make_env))
