#!/bin/bash
# formats_test.sh - gcsnap on the heap files of other tools (collector/formats).
#
#   formats_test.sh SUITE GCSNAP WORKDIR
#
#   bytes  hand-made HPROF (8- and 4-byte IDs, and as Android writes it) and
#          V8 files (as Chromium and Node write them): exact figures, also
#          zstd-compressed; a .gcdump PerfView
#          sampled is read with a warning (GS_TEST_GCDUMP writes it); every cut is
#          reported truncated (exit 1); a bad sub-record names its byte; no
#          byte flip crashes the tool; an array of 3.5 million elements
#          converts and reads back; V8 IDs and sizes of 32 bits and more
#          written whole; a V8 node of 70000 edges written in parts; the analyses' temporary file of
#          converted records (same figures, removed, a failed write named)
#   v8     a real Node heap: N objects of a named class held by a Map
#   hprof  a real JVM heap (javac, jcmd GC.heap_dump): N instances, the
#          static field's class as container, the list's retained size
#          though a WeakReference names each too; objects a SoftReference
#          alone holds unreachable; a lambda's class named as Java names it;
#          the same counted in a gzip-compressed dump (GC.heap_dump -gz=1)
#          Both real heaps: every object's retained size equals networkx's
#          (tests/analysis/nx_check.py; without networkx the suite passes
#          its other checks and exits 77)
#   upload gcsnap upload into a real gcsnapd: stored with format and note,
#          listed, fetched back equal, trend over the device; a cut file
#          refused with its reason (exit 1), nothing left behind
# Exits 77 (skipped) when node, or javac/java/jcmd, is missing.
set -u
suite=$1 gcsnap=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 2
fails=0 skipped=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
skip() { echo "SKIPPED: $*"; exit 77; }

# Every object's retained size in FILE, a real heap, against networkx's
# dominator tree; a check that cannot run makes the suite a skip.
check_networkx() {
  local py=python3
  [[ -x /usr/bin/python3 ]] && py=/usr/bin/python3   # where Debian installs networkx
  "$py" "$here/../analysis/nx_check.py" "$gcsnap" nx --no-random "$1"
  case $? in
    0) ;;
    77) echo "SKIPPED: $1 against networkx"; skipped=1 ;;
    *) fail "$1: retained sizes differ from networkx's" ;;
  esac
}

# summary --json of FILE compared with the expectation JSON (figures and
# the count of each type named).
check_summary() {
  "$gcsnap" summary --json --top 0 "$1" > sum.json || { fail "$1: summary exit $?"; return; }
  python3 - "$2" sum.json <<'PY' || fail "$1: summary differs"
import json, sys
want = json.loads(sys.argv[1]); got = json.load(open(sys.argv[2]))
types = {t["type"]: t["count"] for t in got["by_type"]}
bad = [(k, want[k], got[k]) for k in want if k != "types" and got[k] != want[k]]
bad += [(t, n, types.get(t)) for t, n in want["types"].items() if types.get(t) != n]
for b in bad: print("  %s: want %s, got %s" % b)
sys.exit(1 if bad else 0)
PY
}

# Every cut of FILE from byte FROM on, every STEP bytes, exits 1 with CODE.
check_cuts() {
  local file=$1 from=$2 step=$3 size n out
  size=$(stat -c %s "$file")
  for ((n = from; n < size; n += step)); do
    head -c $n "$file" > cut
    out=$("$gcsnap" summary cut 2>&1); rc=$?
    [[ $rc == 1 && $out == *"[truncated-heap-file]"*"byte $n "* ]] ||
      { fail "$file cut at $n: exit $rc: $out"; return; }
  done
}

# No single-byte change makes the tool crash: exit 0 or 1 only.
check_flips() {
  python3 - "$gcsnap" "$1" <<'PY' || fail "$1: a changed byte crashed the tool"
import subprocess, sys
gcsnap, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
for i in range(0, len(data), 9):
    d = bytearray(data); d[i] ^= 0xa5
    open("flip", "wb").write(d)
    rc = subprocess.run([gcsnap, "validate", "flip"], capture_output=True).returncode
    if rc not in (0, 1):
        print("byte %d changed: exit %d" % (i, rc)); sys.exit(1)
PY
}

suite_bytes() {
  local f want
  for f in s8.hprof:8 s4.hprof:4 a.hprof:android m.hprof:hprof2 s.heapsnapshot:v8 c.heapsnapshot:chrome \
           n.heapsnapshot:node; do
    case ${f#*:} in
    v8|chrome|node|android|hprof2) want=$(python3 "$here/make_heaps.py" "${f#*:}" "${f%:*}") ;;
    *) want=$(python3 "$here/make_heaps.py" hprof "${f%:*}" "${f#*:}") ;;
    esac
    f=${f%:*}
    check_summary "$f" "$want"
    zstd -q -f "$f" -o "$f.zst" && check_summary "$f.zst" "$want"
    "$gcsnap" convert "$f" "$f.gclog" || fail "$f: convert"
    "$gcsnap" validate --strict "$f.gclog" > /dev/null || fail "$f: the converted records are not valid"
    check_summary "$f.gclog" "$want"
    check_flips "$f"
  done
  # Each dump of a file that holds two is a section of its own.
  "$gcsnap" summary --json m.hprof | python3 -c 'import json, sys
s = json.load(sys.stdin)["sections"]
sys.exit(not (len(s) == 2 and all(x["objects"] == 10 and x["unreachable"] == 3 for x in s)))' ||
    fail "m.hprof: its two dumps are not two sections of 10 objects each"
  # Many empty dumps after many classes: a section each, each at the cost of
  # what it holds (not of every class the file named).
  python3 -c 'import struct, sys
rec = lambda tag, body: struct.pack(">BII", tag, 0, len(body)) + body
out = [b"JAVA PROFILE 1.0.2\0", struct.pack(">IQ", 8, 0), rec(1, struct.pack(">Q", 1) + b"C")]
out += [rec(2, struct.pack(">IQIQ", i, 0x1000 + 16 * i, 0, 1)) for i in range(20000)]
out += [rec(0x0c, b"")] * 50000
sys.stdout.buffer.write(b"".join(out))' > many.hprof
  "$gcsnap" summary many.hprof | grep -qx "File: many.hprof (50000 sections)" ||
    fail "many.hprof: not 50000 sections"
  rm -f many.hprof
  check_cuts s8.hprof 31 5
  check_cuts s4.hprof 32 11
  check_cuts a.hprof 32 7
  check_cuts s.heapsnapshot 12 13
  # A .gcdump PerfView sampled: the sample's figures, and a warning that
  # says so; none for the whole heap.
  "$GS_TEST_GCDUMP" --write-sampled sampled.gcdump && "$GS_TEST_GCDUMP" --write-sample whole.gcdump ||
    fail "writing the .gcdump samples"
  "$gcsnap" summary --json sampled.gcdump > sampled.json 2> sampled.err || fail "summary of a sampled .gcdump"
  grep -qx "sampled.gcdump: warning: PerfView kept a sample of this heap, about 1 object in 4.0: objects, bytes and references are the sample's, not scaled" sampled.err ||
    fail "no warning for a sampled .gcdump: $(cat sampled.err)"
  "$gcsnap" summary --json whole.gcdump > whole.json 2> whole.err || fail "summary of a whole .gcdump"
  [[ ! -s whole.err ]] || fail "a warning for a whole .gcdump: $(cat whole.err)"
  cmp -s sampled.json <(sed 's/whole.gcdump/sampled.gcdump/' whole.json) || fail "a sampled .gcdump sums up differently"
  # A sub-record tag HPROF does not define, at a known offset.
  python3 - <<'PY'
d = bytearray(open("s8.hprof", "rb").read())
at = d.index(b"\x21\x00\x00\x00\x00\x00\x00\x20\x00")   # the first instance dump
d[at] = 0x42
open("bad.hprof", "wb").write(d)
PY
  at=$(python3 -c 'd=open("s8.hprof","rb").read(); print(d.index(b"\x21\x00\x00\x00\x00\x00\x00\x20\x00"))')
  out=$("$gcsnap" validate bad.hprof); rc=$?
  [[ $rc == 1 && $out == *"error [bad-heap-file]: HPROF: byte $at: unknown heap dump sub-record 0x42"* ]] ||
    fail "bad sub-record: exit $rc: $out"
  out=$("$gcsnap" convert bad.hprof out.gclog 2>&1); rc=$?
  [[ $rc == 1 && ! -e out.gclog ]] || fail "convert of a bad file: exit $rc, $(ls)"
  # IDs and sizes of 32 bits and more (V8's are 32 bits; the converter keeps
  # the others apart): every one written as it was.
  python3 - <<'PY'
import json
d = json.load(open("s.heapsnapshot"))
n = d["nodes"]               # type, name, id, self_size, edge_count
n[6 * 5 + 2] = 0x10000000d   # a Widget
n[7 * 5 + 2] = 0xffffffff    # the Widget that holds it
n[5 * 5 + 3] = 5000000000    # the Map's size
json.dump(d, open("wide.heapsnapshot", "w"))
PY
  "$gcsnap" convert wide.heapsnapshot wide.gclog || fail "wide.heapsnapshot: convert exit $?"
  grep -Eq '^o b [0-9a-f]+ 12a05f200 10000000d ffffffff 11$' wide.gclog &&
    grep -Eq '^o ffffffff [0-9a-f]+ 18 10000000d$' wide.gclog && grep -Eq '^o 10000000d [0-9a-f]+ 18$' wide.gclog ||
    fail "wide IDs or sizes: $(grep '^o' wide.gclog | tr '\n' '|')"
  # A node with more edges than the converter holds at once is written in
  # parts; the weak roots its edges make after the first part follow it.
  python3 - <<'PY'
import json
n, types = 70000, ["hidden", "array", "string", "object", "code", "closure", "regexp", "number",
                   "native", "synthetic"]
nodes = [9, 0, 1, 0, 1, 3, 1, 3, 16, n + 2] + [v for i in range(n) for v in (3, 2, 5 + 2 * i, 8, 0)]
edges = [1, 0, 5]
for i in range(n):
    edges += [1, i, 10 + 5 * i]
    if i in (100, 68000):
        edges += [6, 0, 10 + 5 * i]
doc = {"snapshot": {"meta": {"node_fields": ["type", "name", "id", "self_size", "edge_count"],
                             "node_types": [types], "edge_fields": ["type", "name_or_index", "to_node"],
                             "edge_types": [["context", "element", "property", "internal", "hidden",
                                             "shortcut", "weak"]]},
                    "node_count": n + 2, "edge_count": n + 3},
       "nodes": nodes, "edges": edges, "strings": ["(root)", "Array", "E"]}
json.dump(doc, open("parts.heapsnapshot", "w"))
PY
  "$gcsnap" convert parts.heapsnapshot parts.gclog || fail "parts.heapsnapshot: convert exit $?"
  "$gcsnap" validate --strict parts.gclog > /dev/null || fail "parts.gclog is not valid"
  [[ $(awk '$1 == "o" && $2 == "3" { print NF - 4 }' parts.gclog) == 70000 ]] &&
    awk '/^o 3 / { o = NR } / 3 2$/ { r[++n] = NR } END { exit !(n == 2 && r[1] < o && r[2] > o) }' parts.gclog ||
    fail "an object written in parts: $(awk '{ print $1, NF }' parts.gclog | sort | uniq -c | tr '\n' '|')"
  # Values gcsnap reads past may nest deeper than the snapshot's own
  # structure (the allocation trace tree), up to a limit.
  python3 - <<'PY'
d = open("s.heapsnapshot").read()
i = d.index('"strings"')
for name, depth in (("nested", 5000), ("overnested", (1 << 20) + 2)):
    open(name + ".heapsnapshot", "w").write(d[:i] + '"trace_tree": ' + "[" * depth + "]" * depth + ", " + d[i:])
PY
  check_summary nested.heapsnapshot "$(python3 "$here/make_heaps.py" v8 /dev/null)"
  # Saved by a Windows tool, with a byte order mark first.
  { printf '\xef\xbb\xbf'; cat s.heapsnapshot; } > bom.heapsnapshot
  check_summary bom.heapsnapshot "$(python3 "$here/make_heaps.py" v8 /dev/null)"
  rm -f bom.heapsnapshot
  # The locations (four numbers a closure) are read past, over many blocks
  # and from either side of a block's end; a byte that is no number's is
  # named at its offset, and a file that ends among them is cut short.
  python3 - <<'PY'
d = open("s.heapsnapshot", "rb").read()
i = d.index(b'"strings"')
locs = b",".join(b"%d,3,%d,%s" % (5 * k, k, b"-1" if k % 7 == 0 else b"12") for k in range(40000))
open("loc.heapsnapshot", "wb").write(d[:i] + b'"locations": [' + locs + b'],\n' + d[i:])
pad = b" " * (65536 - len(d[:i]) - len(b'"locations": '))
open("locsplit.heapsnapshot", "wb").write(d[:i] + pad + b'"locations": [' + locs + b'],\n' + d[i:])
at = i + len(b'"locations": [') + 300000
open("locbad.heapsnapshot", "wb").write(d[:i] + b'"locations": [' + locs[:300000] + b'"' + locs[300001:] + b'],\n' + d[i:])
open("locbad.at", "w").write("%d\n" % at)
open("loccut.heapsnapshot", "wb").write(d[:i] + b'"locations": [' + locs[:300000])
PY
  for f in loc locsplit; do
    check_summary $f.heapsnapshot "$(python3 "$here/make_heaps.py" v8 /dev/null)"
  done
  out=$("$gcsnap" validate locbad.heapsnapshot 2>&1); rc=$?
  [[ $rc == 1 && $out == *"byte $(cat locbad.at): JSON: something other than a number among the locations"* ]] ||
    fail "a quote among the locations (byte $(cat locbad.at)): exit $rc: $out"
  out=$("$gcsnap" validate loccut.heapsnapshot 2>&1); rc=$?
  [[ $rc == 1 && $out == *"the file ends at byte $(stat -c %s loccut.heapsnapshot) inside the JSON"* ]] ||
    fail "a snapshot cut among the locations: exit $rc: $out"
  rm -f loc*.heapsnapshot locbad.at
  out=$("$gcsnap" validate overnested.heapsnapshot 2>&1); rc=$?
  [[ $rc == 1 && $out == *"JSON nested deeper than 1048576 levels in a value read past"* ]] ||
    fail "a trace tree nested too deep: exit $rc: $out"
  rm -f nested.heapsnapshot overnested.heapsnapshot
  # Strings of megabytes (a script's source, a large payload) are read only
  # as far as a name needs: the class name comes out cut at 1024 bytes, at
  # a character, escapes and UTF-8 alike; a JSON error after such strings
  # is named at its byte.
  python3 - <<'PY'
import json
d = open("s.heapsnapshot").read()
long_name = "W" + "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9" * 50000 + "\u00e9" * 1000000
big = d.replace('"Widget"', json.dumps(long_name, ensure_ascii=False), 1)
big = big.replace('"hello"', json.dumps("h" * 3000000 + "\"" * 1000), 1)
open("longnames.heapsnapshot", "w").write(big)
open("longnames.name", "w").write(("W" + "\u00e9" * 511) + "\n")
i = big.rindex("]")
open("longbad.heapsnapshot", "w").write(big[:i] + ", ]" + big[i + 1:])
print(len(big[:i].encode()) + 3, file=open("longbad.at", "w"))  # yajl names the byte after
PY
  "$gcsnap" convert longnames.heapsnapshot longnames.gclog || fail "long strings: convert exit $?"
  awk '$1 == "t" && substr($3, 1, 1) == "W" { sub(/^t [0-9a-f]+ /, ""); print }' longnames.gclog > longnames.got
  cmp -s longnames.got longnames.name || fail "a long class name: $(head -c 80 longnames.got)..., $(wc -c < longnames.got) bytes"
  [[ $(grep -c '^o ' longnames.gclog) == 6 ]] || fail "long strings: $(grep -c '^o ' longnames.gclog) objects"
  out=$("$gcsnap" validate longbad.heapsnapshot 2>&1); rc=$?
  [[ $rc == 1 && $out == *"V8 heap snapshot: byte $(cat longbad.at): JSON: "* ]] ||
    fail "an error after long strings: want byte $(cat longbad.at); exit $rc: $out"
  rm -f longnames.* longbad.*
  # The analyses convert a V8 or .gcdump file whole into an unlinked file in
  # TMPDIR before they build the graph; without a folder to write in, the
  # records stream as they are converted, to the same figures.
  mkdir spool
  TMPDIR=$PWD/spool "$gcsnap" summary --json s.heapsnapshot > spooled.json || fail "spooled summary: exit $?"
  [[ -z $(ls -A spool) ]] || fail "the temporary file was left behind: $(ls -A spool)"
  TMPDIR=$PWD/none "$gcsnap" summary --json s.heapsnapshot > streamed.json || fail "streamed summary: exit $?"
  cmp -s spooled.json streamed.json || fail "spooled and streamed summaries differ"
  out=$(trap '' XFSZ; ulimit -f 0; TMPDIR=$PWD/spool "$gcsnap" dominators s.heapsnapshot 2>&1); rc=$?
  [[ $rc == 2 && $out == *"s.heapsnapshot: cannot write the converted records to a temporary file: File too large"* ]] ||
    fail "a failed write to the temporary file: exit $rc: $out"
  # The nodes and edges are read apart from the rest of the JSON: what is
  # not a list of whole numbers there, or an edge to no node, is named at
  # its byte.
  python3 - <<'PY' > cases.txt
d = open("s.heapsnapshot").read()
for n, (old, new, at, why) in enumerate([
        ('"nodes": [9, 0, 1,', '"nodes": [9, 0, -1,', 16, "a node field is not a whole number"),
        ('"nodes": [9, 0, 1,', '"nodes": [9, 0, 1.5,', 17, "a node field is not a whole number"),
        ('"nodes": [9, 0, 1,', '"nodes": [9, 0, [1],', 16, "a node field is not a whole number"),
        ('"nodes": [9, 0, 1,', '"nodes": [9, 0, 99999999999999999999,', 35, "a node field is not a whole number"),
        ('"edges": [1, 1, 5', '"edges": [1, , 5', 13, "JSON: a number is missing"),
        ('"edges": [1, 1, 5', '"edges": [1 1, 5', 12, "JSON: a comma is missing between two numbers"),
        ('"edges": [1', '"edges": [,1', 10, "JSON: a number is missing"),
        ('"edges": [1, 1, 5', '"edges": [1, 1, 6', 17, "edge to_node 6 is not the index of a node")]):
    i = d.index(old)
    name = "num%d.heapsnapshot" % n
    open(name, "w").write(d[:i] + new + d[i + len(old):])
    print(name, i + at, why)
# Edges wait a few places for their nodes: one with thousands after it is
# still named at its own byte.
d = open("parts.heapsnapshot").read()
i = d.index("1, 1000, 5010, ") + len("1, 1000, ")
open("edge1000.heapsnapshot", "w").write(d[:i] + "5011" + d[i + 4:])
print("edge1000.heapsnapshot", i + 4, "edge to_node 5011 is not the index of a node")
PY
  local name at why
  while read -r name at why; do
    out=$("$gcsnap" validate "$name" 2>&1); rc=$?
    [[ $rc == 1 && $out == *"[bad-heap-file]: V8 heap snapshot: byte $at: $why"* ]] ||
      fail "$name: want byte $at: $why; exit $rc: $out"
  done < cases.txt
  # An object array of 3.5 million elements (more than the converters took
  # before): its record, one line of 17 MB, is parsed as it arrives.
  want=$(python3 "$here/make_heaps.py" hprof big.hprof 8 3500000)
  "$gcsnap" convert big.hprof big.gclog || fail "big.hprof: convert exit $?"
  "$gcsnap" validate --strict big.gclog > /dev/null || fail "big.hprof: the converted records are not valid"
  check_summary big.gclog "$want"
  check_summary big.hprof "$want"
  rm -f big.hprof big.gclog
}

suite_v8() {
  command -v node > /dev/null || skip "node is not installed"
  node -e '
    class LeakyWidget { constructor(i) { this.i = i; this.name = "w" + i; } }
    function build(n) { const m = new Map(); for (let i = 0; i < n; i++) m.set(i, new LeakyWidget(i)); return m; }
    globalThis.keep = build(2000);
    require("v8").writeHeapSnapshot("node.heapsnapshot");' || fail "node"
  "$gcsnap" summary --json --top 0 node.heapsnapshot > sum.json || fail "summary exit $?"
  python3 - <<'PY' || fail "summary of the Node heap"
import json
d = json.load(open("sum.json"))
n = [t["count"] for t in d["by_type"] if t["type"] == "LeakyWidget"]
assert n == [2000], n
assert d["roots_by_kind"]["handle"] > 0 and d["roots_by_flag"]["weak"] > 0, d["roots_by_kind"]
PY
  "$gcsnap" paths --type LeakyWidget --json node.heapsnapshot > paths.json || fail "paths exit $?"
  python3 - <<'PY' || fail "paths of the Node heap"
import json
s = json.load(open("paths.json"))["sections"][0]
assert s["objects"] == 2000 and s["reachable"] == 2000, s
g = s["groups"]
assert sum(x["objects"] for x in g) == 2000, g
for x in g:
    types = [n["type"] for n in x["example_path"]]
    assert "Map" in types and types[-1] == "LeakyWidget", types
PY
  check_networkx node.heapsnapshot
  # With allocations tracked, the snapshot holds the trace tree, which
  # nests as deep as the stacks that allocated: here 60 calls.
  node --track-heap-objects -e '
    class Deep { constructor(i) { this.i = i; } }
    const keep = [];
    function down(d) { if (d === 0) { for (let i = 0; i < 500; i++) keep.push(new Deep(i)); } else down(d - 1); }
    down(60);
    globalThis.keep = keep;
    require("v8").writeHeapSnapshot("traced.heapsnapshot");' || fail "node --track-heap-objects"
  "$gcsnap" summary --json --top 0 traced.heapsnapshot > traced.json || fail "summary of a traced heap: exit $?"
  python3 - <<'PY' || fail "summary of the traced Node heap"
import json
d = json.load(open("traced.json"))
assert [t["count"] for t in d["by_type"] if t["type"] == "Deep"] == [500], d["by_type"][:5]
t = json.load(open("traced.heapsnapshot"))["trace_tree"]
depth = lambda x: 1 + max([depth(c) for c in x if isinstance(c, list)] or [0])
assert depth(t) > 60, depth(t)
PY
}

suite_hprof() {
  local n=3000 pid
  command -v javac > /dev/null && command -v jcmd > /dev/null || skip "javac or jcmd is not installed"
  cat > Leak.java <<'JAVA'
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
public class Leak {
  static final ArrayList<Leak> KEEP = new ArrayList<>();
  static final ArrayList<Object> REFS = new ArrayList<>();
  static class Soft { byte[] data = new byte[1000]; }
  static final Runnable TASK = () -> { };
  Leak next; long a, b;
  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    for (int i = 0; i < n; i++) KEEP.add(new Leak());
    for (int i = 0; i < n; i++) KEEP.get(i).next = KEEP.get((i + 1) % n);   // one cycle
    for (int i = 0; i < n; i++) REFS.add(new WeakReference<>(KEEP.get(i)));  // KEEP retains them
    for (int i = 0; i < 100; i++) REFS.add(new SoftReference<>(new Soft()));  // held softly only
    System.out.println("ready");
    System.out.flush();
    Thread.sleep(120000);
  }
}
JAVA
  javac Leak.java || { fail "javac"; return; }
  java -Xmx64m -XX:+UseSerialGC -XX:SoftRefLRUPolicyMSPerMB=1000000 -cp . Leak $n > java.out &
  pid=$!
  for _ in $(seq 100); do grep -q ready java.out && break; sleep 0.1; done
  jcmd $pid GC.heap_dump "$PWD/java.hprof" > /dev/null || fail "jcmd GC.heap_dump"
  jcmd $pid GC.heap_dump -gz=1 "$PWD/java.hprof.gz" > /dev/null || fail "jcmd GC.heap_dump -gz=1"
  kill $pid; wait $pid 2> /dev/null
  "$gcsnap" summary --json --top 0 java.hprof > sum.json || fail "summary exit $?"
  "$gcsnap" summary --json --top 0 java.hprof.gz > sum.gz.json || fail "summary of the -gz dump: exit $?"
  python3 - <<'PY' || fail "the -gz dump differs from the plain one"
import json
a, b = json.load(open("sum.json")), json.load(open("sum.gz.json"))
leak = lambda d: [t["count"] for t in d["by_type"] if t["type"] == "Leak"]
assert leak(a) == leak(b) and a["roots_by_kind"]["static"] == b["roots_by_kind"]["static"], (leak(a), leak(b))
PY
  "$gcsnap" paths --type Leak --json java.hprof > paths.json || fail "paths exit $?"
  list=$(python3 -c 'import json; print(json.load(open("paths.json"))["sections"][0]["groups"][0]["example_path"][0]["id"])')
  one=$(python3 -c 'import json; print(json.load(open("paths.json"))["sections"][0]["groups"][0]["example_path"][-1]["id"])')
  "$gcsnap" paths --object "$one" --json java.hprof > one.json || fail "paths --object exit $?"
  "$gcsnap" dominators --top 0 --json java.hprof > dom.json || fail "dominators exit $?"
  "$gcsnap" paths --type 'Leak$Soft' --json java.hprof > soft.json || fail "paths --type Leak\$Soft exit $?"
  python3 - $n "$list" <<'PY' || fail "the JVM heap"
import json, re, sys
n, lst = int(sys.argv[1]), sys.argv[2]
d = json.load(open("sum.json"))
leak = [t for t in d["by_type"] if t["type"] == "Leak"]
assert len(leak) == 1 and leak[0]["count"] == n, leak
size = leak[0]["bytes"] // n
g = json.load(open("paths.json"))["sections"][0]["groups"]
assert len(g) == 1 and g[0]["objects"] == n and g[0]["root_kind"] == "static", g
assert g[0]["example_path"][0]["type"] == "java.util.ArrayList", g[0]
root = json.load(open("one.json"))["sections"][0]["paths"][0]["root"]
assert root["kind"] == "static" and root["container"] == "Leak", root
top = json.load(open("dom.json"))["sections"][0]["top_objects"]
kept = [o["retained"] for o in top if o["id"] == lst]
assert kept and kept[0] >= n * size, (kept, n, size)    # the weak references retain none
soft = json.load(open("soft.json"))["sections"][0]
assert soft["objects"] == 100 and soft["reachable"] == 0, soft
assert d["roots_by_flag"]["weak"] >= n + 100, d["roots_by_flag"]
lam = [t for t in d["by_type"] if t["type"].startswith("Leak$$Lambda")]
assert lam and all(re.fullmatch(r"Leak\$\$Lambda\$?\d*/0x[0-9a-f]+", t["type"]) for t in lam), lam
PY
  check_networkx java.hprof
}

suite_upload() {
  local gcsnapd=${gcsnap%/*}/gcsnapd daemon api out
  command -v curl > /dev/null || skip "curl is not installed"
  python3 "$here/make_heaps.py" hprof s.hprof > /dev/null
  python3 "$here/make_heaps.py" v8 s.heapsnapshot > /dev/null
  zstd -q s.heapsnapshot -o s.heapsnapshot.zst
  head -c 300 s.hprof > cut.hprof
  "$gcsnapd" --listen 127.0.0.1:0 --http 127.0.0.1:0 --store store 2> d.log &
  daemon=$!
  for _ in $(seq 100); do grep -qs "HTTP API on" d.log && break; sleep 0.1; done
  api=http://$(sed -n 's|.*HTTP API on http://\([0-9.:]*\)/api/.*|\1|p' d.log)
  out=$("$gcsnap" upload s.hprof --device jvm-1 --note "before the fix" --collector "$api") ||
    fail "upload s.hprof: exit $?"
  [[ $out == "Snapshot 1 of jvm-1 stored from s.hprof (hprof): 10 objects, 280 bytes, 10 roots." ]] ||
    fail "upload said: $out"
  "$gcsnap" upload s.hprof --device jvm-1 --collector "$api" > /dev/null || fail "second upload"
  "$gcsnap" upload s.heapsnapshot.zst --device node-1 --collector "$api" --json > up.json ||
    fail "upload of a zstd heapsnapshot: exit $?"
  out=$("$gcsnap" upload cut.hprof --device jvm-1 --collector "$api" 2>&1); rc=$?
  [[ $rc == 1 && $out == *"refused cut.hprof (snapshot 4): the uploaded file: error [truncated-heap-file]: HPROF: the file ends at byte 300"* ]] ||
    fail "upload of a cut file: exit $rc: $out"
  "$gcsnap" snapshots --json --collector "$api" > list.json || fail "snapshots exit $?"
  python3 - <<'PY' || fail "the catalog of uploads"
import json
up = json.load(open("up.json"))
assert up["status"] == "complete" and up["source_format"] == "heapsnapshot" and up["objects"] == 6, up
s = {e["id"]: e for e in json.load(open("list.json"))["snapshots"]}
assert s[1]["source_format"] == "hprof" and s[1]["note"] == "before the fix" and s[1]["trigger"] == "upload", s[1]
assert s[1]["device_id"] == "jvm-1" and s[1]["status"] == "complete" and s[1]["roots"] == 10, s[1]
assert s[4]["status"] == "failed" and s[4]["source_format"] == "hprof", s[4]
PY
  "$gcsnap" fetch 1 -o back.gclog --collector "$api" > /dev/null || fail "fetch"
  "$gcsnap" convert s.hprof local.gclog && cmp -s back.gclog local.gclog || fail "the stored records differ"
  "$gcsnap" trend --device jvm-1 --collector "$api" > /dev/null || fail "trend over uploads: exit $?"
  ls store/snapshots/*/ | grep -q upload && fail "an uploaded file was left: $(ls store/snapshots/*/)"
  kill $daemon; wait $daemon 2> /dev/null
}

command -v python3 > /dev/null || skip "python3 is not installed"
case $suite in
  bytes) suite_bytes ;;
  v8) suite_v8 ;;
  hprof) suite_hprof ;;
  upload) suite_upload ;;
  *) echo "unknown suite $suite"; exit 2 ;;
esac
[[ $fails == 0 ]] || { echo "$fails failure(s)"; exit 1; }
[[ $skipped == 0 ]] || exit 77
echo "PASS: $suite"
