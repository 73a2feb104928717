#!/bin/sh
# gcdump_summary: `gcsnap summary --json` of wpfapp.gcdump, converted by the
# .gcdump reader, against that of wpfapp.gclog, which was made from it: the
# objects, bytes, references, roots by kind and flag, types by bytes and
# unreachable objects must all agree, once the six objects a COM object
# stands behind (RCWs, "[RCW ...]"), which wpfapp.gclog leaves out, are left
# out with their roots and the references to them. Exits 77 (skipped)
# without the files.
#   summary_test.sh GCDUMP2GCLOG GCSNAP FIXTURES_DIR WORK_DIR
set -eu
conv=$1 gcsnap=$2 fixtures=$3 work=$4
if [ ! -f "$fixtures/wpfapp.gcdump" ] || [ ! -f "$fixtures/wpfapp.gclog" ]; then
  echo "$fixtures/wpfapp.gcdump or wpfapp.gclog not found: skipped"
  exit 77
fi
out="$work/wpfapp-from-gcdump.gclog"
"$conv" "$fixtures/wpfapp.gcdump" "$out.all"
python3 - "$out.all" "$out" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
types = {l.split()[1] for l in lines if l.startswith("t ") and l.split(" ", 2)[2].startswith("[RCW ")}
objs = {l.split()[1] for l in lines if l.startswith("o ") and l.split()[2] in types}
out, roots, refs = [], 0, 0
for l in lines:
    f = l.split(" ")
    if (f[0] == "t" and f[1] in types) or (f[0] == "o" and f[1] in objs):
        continue
    if f[0] == "r" and f[1] in objs:
        roots += 1
        continue
    if f[0] == "o":
        kept = f[:4] + [r for r in f[4:] if r not in objs]
        refs += len(f) - len(kept)
        l = " ".join(kept)
    out.append(l)
open(sys.argv[2], "w").write("\n".join(out) + "\n")
if (len(types), len(objs), roots, refs) != (2, 6, 4, 6):
    print("RCWs: %d types, %d objects, %d roots, %d references; want 2, 6, 4, 6" % (len(types), len(objs), roots, refs))
    sys.exit(1)
PY
"$gcsnap" summary --json --top 0 "$out" > "$out.json"
"$gcsnap" summary --json --top 0 "$fixtures/wpfapp.gclog" > "$work/wpfapp.json"
# The whole heap (PerfView's count multiplier 1): read without a warning.
"$gcsnap" summary "$fixtures/wpfapp.gcdump" > /dev/null 2> "$work/wpfapp.err"
if [ -s "$work/wpfapp.err" ]; then echo "unexpected: $(cat "$work/wpfapp.err")"; exit 1; fi
python3 - "$out.json" "$work/wpfapp.json" <<'PY'
import json, sys
got, want = (json.load(open(p)) for p in sys.argv[1:3])
keys = ["objects", "bytes", "references", "dangling_references", "roots", "roots_by_kind",
        "roots_by_flag", "dangling_roots", "types", "unreachable", "unreachable_bytes", "by_type"]
bad = [k for k in keys if got.get(k) != want.get(k)]
for k in bad:
    print("%s differs: %s from the .gcdump, %s from the .gclog" % (k, str(got.get(k))[:200], str(want.get(k))[:200]))
if want["objects"] != 138204 or len(want["by_type"]) != want["types"]:
    print("unexpected reference summary: %s objects, %d of %s types listed" % (want["objects"], len(want["by_type"]), want["types"]))
    bad.append("reference")
print("compared %d fields of %d objects and %d types: %s" % (len(keys), got["objects"], got["types"], "differ" if bad else "same"))
sys.exit(1 if bad else 0)
PY
