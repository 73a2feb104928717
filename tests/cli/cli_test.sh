#!/usr/bin/env bash
# cli_test.sh - end-to-end tests of the gcsnap command-line tool.
#
# usage: cli_test.sh SUITE GCSNAP DATA_DIR WORK_DIR [PYTHON] [FIXTURE] [AGENT]
#
# Runs one suite (help, validate, summary, convert, zstd_tool, gzip, progress,
# wpfapp, dominators, diff, paths, export, trend, report) against the built
# binary; AGENT (gcsnap-agent) makes the mock dumps of the report suite. Exit 0 when every check passed, 1 when
# one failed, 77 when a check could not run (missing tool or fixture) and
# none failed, so that ctest reports it as skipped rather than passed.
set -u

suite=$1 gcsnap=$2 data=$3 work=$4 python=${5:-} fixture=${6:-} agent=${7:-}
failures=0 skips=0 checks=0

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
cp "$data"/*.gclog .
# The first version of the format, with CRLF line ends, a blank line, runs
# of blanks, uppercase hex and no final newline. Written here rather than
# stored so that no checkout can normalize its line ends.
printf 'a 2 bubblecs.exe\r\nt 2 System.RuntimeType\r\no 7C79F 2 64\r\n\r\no 1CE004 2  18   7c79f\r\nr 7c79f 5 0\r\nc bubblecs.exe' >old.gclog

# ---- helpers ----------------------------------------------------------

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
pass() { checks=$((checks + 1)); }

# run CMD...: stdout in out.txt, stderr in err.txt, exit status in $rc.
run() {
  "$@" >out.txt 2>err.txt
  rc=$?
}

expect_rc() {
  if [ "$rc" -eq "$1" ]; then pass; else
    fail "$2: exit status $rc, expected $1"; sed 's/^/  | /' err.txt | head -5
  fi
}

# expect_line FILE LINE DESC: FILE holds LINE exactly.
expect_line() {
  if grep -Fxq -- "$2" "$1"; then pass; else
    fail "$3: no line '$2' in $1"; sed 's/^/  | /' "$1" | head -20
  fi
}

# expect_regex FILE ERE DESC: some line of FILE matches ERE.
expect_regex() {
  if grep -Eq -- "$2" "$1"; then pass; else
    fail "$3: no line matching /$2/ in $1"; sed 's/^/  | /' "$1" | head -20
  fi
}

expect_no_regex() {
  if grep -Eq -- "$2" "$1"; then fail "$3: unexpected line matching /$2/ in $1"; else pass; fi
}

# expect_count FILE ERE N DESC: exactly N lines of FILE match ERE.
expect_count() {
  local n
  n=$(grep -Ec -- "$2" "$1")
  if [ "$n" -eq "$3" ]; then pass; else fail "$4: $n lines match /$2/, expected $3"; fi
}

expect_empty() {
  if [ ! -s "$1" ]; then pass; else fail "$2: $1 is not empty"; sed 's/^/  | /' "$1" | head -5; fi
}

expect_same() {
  if cmp -s "$1" "$2"; then pass; else fail "$3: $1 and $2 differ"; fi
}

expect_absent() {
  if [ ! -e "$1" ]; then pass; else fail "$2: $1 exists"; fi
}

no_temp_files() {
  local left
  left=$(ls -a | grep -F '.tmp.' || true)
  if [ -z "$left" ]; then pass; else fail "$1: temporary files left: $left"; fi
}

# json_check FILE DESC PYTHON-STATEMENTS: runs the statements with the
# parsed JSON in d; any failed assert fails the check.
json_check() {
  local file=$1 desc=$2 code=$3
  if [ -z "$python" ]; then skip "$desc (no python3 to parse JSON)"; return; fi
  if "$python" - "$file" <<PY >py.txt 2>&1
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
$code
PY
  then pass; else fail "$desc"; sed 's/^/  | /' py.txt | tail -5; fi
}

# Every diagnostic line has the documented shape.
DIAG_RE='^[^:]+(:[0-9]+)?: (error|warning) \[[a-z-]+\]: .+$'

# ---- help and usage ---------------------------------------------------

suite_help() {
  local cmd
  for cmd in "" validate summary convert dominators diff paths export trend report; do
    for flag in --help -h; do
      run "$gcsnap" $cmd $flag
      expect_rc 0 "gcsnap $cmd $flag"
      expect_regex out.txt '^usage: gcsnap' "gcsnap $cmd $flag prints usage to stdout"
      expect_empty err.txt "gcsnap $cmd $flag stderr"
    done
  done
  run "$gcsnap" --version
  expect_rc 0 "--version"
  expect_regex out.txt '^gcsnap [0-9]+\.[0-9]+\.[0-9]+$' "--version output"

  run "$gcsnap"
  expect_rc 2 "no command"
  expect_empty out.txt "no command stdout"
  expect_regex err.txt '^usage: gcsnap' "no command prints usage to stderr"
  run "$gcsnap" frobnicate
  expect_rc 2 "unknown command"
  expect_regex err.txt "unknown command 'frobnicate'" "unknown command message"
  run "$gcsnap" --frobnicate
  expect_rc 2 "unknown global option"

  for cmd in validate summary convert; do
    run "$gcsnap" $cmd --no-such-option small.gclog small2.gclog
    expect_rc 2 "$cmd with an unknown option"
    expect_empty out.txt "$cmd with an unknown option: stdout"
    expect_regex err.txt "^gcsnap $cmd: unknown option '--no-such-option'" "$cmd unknown option message"
    expect_regex err.txt "^usage: gcsnap $cmd" "$cmd unknown option prints usage to stderr"
    run "$gcsnap" $cmd
    expect_rc 2 "$cmd without arguments"
    expect_regex err.txt "^usage: gcsnap $cmd" "$cmd without arguments prints usage"
  done
  run "$gcsnap" validate --max-errors
  expect_rc 2 "--max-errors without its value"
  expect_regex err.txt "needs a value" "--max-errors without its value: message"
  run "$gcsnap" validate --max-errors=many small.gclog
  expect_rc 2 "--max-errors with a non-number"
  run "$gcsnap" validate --json=yes small.gclog
  expect_rc 2 "a flag given a value"
  run "$gcsnap" summary --top -1 small.gclog
  expect_rc 2 "--top with a negative number"
  run "$gcsnap" summary small.gclog old.gclog
  expect_rc 2 "summary with two files"
  run "$gcsnap" convert small.gclog a.gclog b.gclog
  expect_rc 2 "convert with three paths"
  expect_absent a.gclog "convert with three paths writes nothing"
  suite_help_libraries
}

# libpq and libcurl (with TLS, Kerberos and LDAP behind them) are bound only
# by the commands that reach a catalog or a collector: the analyses start
# without them. The dynamic linker's log names every library it loads.
suite_help_libraries() {
  LD_DEBUG=files "$gcsnap" dominators small.gclog >out.txt 2>ld.txt
  rc=$?
  expect_rc 0 "dominators with the linker's log"
  expect_no_regex ld.txt 'file=lib(pq|curl)' "dominators loads neither libpq nor libcurl"
  LD_DEBUG=files "$gcsnap" devices --collector http://127.0.0.1:9 >out.txt 2>ld.txt
  rc=$?
  expect_rc 2 "devices of a collector that is not there"
  expect_regex ld.txt 'file=libcurl\.so\.4 .*dynamically loaded' "devices binds libcurl when it calls"
  expect_regex ld.txt 'cannot reach the collector at http://127\.0\.0\.1:9: .*connect' \
    "devices says it cannot connect"
}

# ---- dominators ---------------------------------------------------------

# Root 10 holds 20 and 30, which both hold 40; 60 holds itself and 70 but no
# strong root reaches it (weak root only). Sizes (hex, like every number in
# the format: 16, 32, 64, 128, 256, 512) make every sum distinct.
make_diamond() {
  cat >diamond.gclog <<'DUMP'
a 2 diamond.exe 0
t 1 App.Root
t 2 App.Branch
t 3 App.Leaf
o 10 1 10 20 30
o 20 2 20 40
o 30 2 40 40
o 40 3 80
o 60 2 100 60 70
o 70 3 200
r 10 1 0
r 60 3 2
c diamond.exe 0
DUMP
}

suite_dominators() {
  make_diamond
  run "$gcsnap" dominators --json --by-type diamond.gclog
  expect_rc 0 "dominators of diamond.gclog"
  json_check out.txt "dominator tree of the diamond" '
s = d["sections"][0]
assert (s["reachable_objects"], s["reachable_bytes"]) == (4, 240), s
assert (s["unreachable_objects"], s["unreachable_bytes"]) == (2, 768), s
top = [(o["id"], o["retained"], o["shallow"], o["type"]) for o in s["top_objects"]]
assert top == [("10", 240, 16, "App.Root"), ("40", 128, 128, "App.Leaf"),
               ("30", 64, 64, "App.Branch"), ("20", 32, 32, "App.Branch")], top
types = {t["type"]: (t["retained"], t["count"], t["shallow"]) for t in s["by_type"]}
assert types == {"App.Root": (240, 1, 16), "App.Leaf": (128, 1, 128),
                 "App.Branch": (96, 2, 96)}, types'
  # A referenced object the dump lacks is a node of the tree, not an object.
  printf 'a 2 x 0\nt 1 A\no 10 1 8 20 30\no 20 1 8 30\no 40 1 8\nr 10 1 0\nc x 0\n' >dangling.gclog
  run "$gcsnap" dominators --json dangling.gclog
  expect_rc 0 "dominators of a dump with a dangling reference"
  json_check out.txt "objects the dump lacks are not counted" '
s = d["sections"][0]
assert (s["reachable_objects"], s["unreachable_objects"]) == (2, 1), s
assert len(s["top_objects"]) == 2, s'
  run "$gcsnap" dominators --top 1 diamond.gclog
  expect_rc 0 "dominators as text"
  expect_regex out.txt '^ +240 +100\.0% +16 +10 +App\.Root$' "the root retains everything reachable"
  expect_regex out.txt 'Unreachable objects +2 \(768 bytes' "unreachable objects are reported apart"
  # Rows are made as they are printed: the columns still fit every row.
  printf 'a 2 w 0\nt 1 A\nt 2 LongerName\no 10 1 8 20\no 20 2 4000000 30\no 30 1 10\nr 10 1 0\nc w 0\n' >wide.gclog
  run "$gcsnap" dominators --top 0 wide.gclog
  expect_rc 0 "dominators of every object as text"
  if [ "$(awk '/ (A|LongerName)$/ { print length($0) - length($NF) }' out.txt | sort -u | wc -l)" -eq 1 ] &&
     [ "$(grep -Ec ' (A|LongerName)$' out.txt)" -eq 3 ]; then pass; else
    fail "every row, the type column aligned"; sed 's/^/  | /' out.txt; fi
  # JSON is printed a section at a time: a later section that cannot be
  # analysed leaves a document that does not parse, and exit status 1.
  printf 'a 2 one 0\nt 1 A\no 10 1 8\nr 10 1 0\nc one 0\na 2 two 0\no 1 1\nc two 0\n' >later.gclog
  run "$gcsnap" dominators --json later.gclog
  expect_rc 1 "dominators of a dump whose second section is invalid"
  if [ -z "$python" ]; then skip "an unfinished document (no python3 to parse JSON)"
  elif "$python" -c 'import json, sys; json.load(open(sys.argv[1]))' out.txt 2>/dev/null; then
    fail "an unfinished document does not parse"; else pass; fi
  run "$gcsnap" dominators bad.gclog
  expect_rc 2 "dominators of a missing file"
  printf 'a 2 x 0\no 1 1\nc x 0\n' >broken.gclog
  run "$gcsnap" dominators broken.gclog
  expect_rc 1 "dominators of an invalid file"
  expect_regex err.txt '^broken\.gclog:2: error \[missing-field\]' "the error names file and line"
  run "$gcsnap" dominators --json broken.gclog
  expect_rc 1 "dominators --json of an invalid file"
  if [ -s out.txt ]; then fail "a first section that cannot be analysed prints nothing"; else pass; fi
  if [ -n "$fixture" ] && [ -r "$fixture" ]; then
    run "$gcsnap" dominators --json --top 0 --by-type "$fixture"
    expect_rc 0 "dominators of wpfapp.gclog"
    json_check out.txt "wpfapp retained sizes add up" '
s = d["sections"][0]
assert s["reachable_objects"] + s["unreachable_objects"] == 138204
assert len(s["top_objects"]) == s["reachable_objects"]
assert s["top_objects"][0]["retained"] <= s["reachable_bytes"]
assert sum(t["retained"] for t in s["by_type"]) >= s["reachable_bytes"]
assert sum(t["shallow"] for t in s["by_type"]) == s["reachable_bytes"]'
  fi
}

# ---- paths --------------------------------------------------------------

suite_paths() {
  make_diamond
  # A second strong root, nearer to 40 than the first.
  sed 's/^c diamond.exe 0$/r 30 3 1\nc diamond.exe 0/' diamond.gclog >rooted.gclog
  run "$gcsnap" paths --json --object 40 rooted.gclog
  expect_rc 0 "paths to an object"
  json_check out.txt "shortest paths, nearest root first" '
p = d["sections"][0]["paths"]
got = [(x["root"]["kind"], x["root"]["flags"], [n["id"] for n in x["path"]]) for x in p]
assert got == [("handle", 1, ["30", "40"]), ("local", 0, ["10", "20", "40"])], got'
  run "$gcsnap" paths --json --type App.Branch rooted.gclog
  expect_rc 0 "paths to a type"
  json_check out.txt "instances grouped by root and first hop" '
s = d["sections"][0]
assert (s["objects"], s["bytes"], s["reachable"]) == (3, 352, 2), s
got = [(g["root_kind"], g["root_type"], g["first_hop_type"], g["objects"], g["bytes"],
        [n["id"] for n in g["example_path"]]) for g in s["groups"]]
assert got == [("handle", "App.Branch", "App.Branch", 1, 64, ["30"]),
               ("local", "App.Root", "App.Branch", 1, 32, ["10", "20"])], got'
  run "$gcsnap" paths --object 70 diamond.gclog
  expect_rc 0 "paths to an unreachable object"
  expect_regex out.txt 'no strong root reaches it' "an unreachable object says so"
  run "$gcsnap" paths --object 99 diamond.gclog
  expect_rc 1 "paths to an object not in the dump"
  expect_regex err.txt 'no object 99' "a missing object is named"
  run "$gcsnap" paths --object 40 --type App.Leaf diamond.gclog
  expect_rc 2 "--object and --type together"

  # A chain 5,000 deep: each path is shown by its 10 first and 10 last
  # objects and the count between, so the output does not grow with the
  # depth (it grew with its square: 25 MB here, 10 GB for 100,000).
  awk 'BEGIN { print "a 2 chain 0"; print "t 1 Node"; print "t 2 Leaf"; n = 5000
    for (i = 1; i < n; i++) printf "o %x 1 10 %x\n", i * 16, (i + 1) * 16
    printf "o %x 2 10\nr 10 1 0\nc chain 0\n", n * 16 }' >chain.gclog
  run "$gcsnap" paths --object 13880 chain.gclog
  expect_rc 0 "paths on a deep chain"
  expect_regex out.txt '^  1\. local root \(no flags\), 4999 references:$' "the whole path's length is said"
  expect_regex out.txt '^ +\.\.\. 4980 more objects on this path \.\.\.$' "the middle of a deep path is counted"
  expect_count out.txt '  Node \(16 bytes\)$|  Leaf \(16 bytes\)$' 20 "a deep path shows its 20 end objects"
  if [ "$(wc -c <out.txt)" -lt 4000 ] && ! grep -Eq '^ {48}' out.txt; then pass; else
    fail "paths on a deep chain: $(wc -c <out.txt) bytes, indented up to $(awk '{ match($0, /^ */); if (RLENGTH > m) m = RLENGTH } END { print m }' out.txt)"; fi
  run "$gcsnap" paths --json --type Leaf chain.gclog
  expect_rc 0 "paths --json --type on a deep chain"
  json_check out.txt "paths --json: a deep example path has its ends and the count between" '
p = d["sections"][0]["groups"][0]["example_path"]
ids = ["%x" % (16 * i) for i in list(range(1, 11)) + list(range(4991, 5001))]
assert [n.get("id") for n in p[:10] + p[11:]] == ids, p
assert p[10] == {"elided": 4980}, p[10]'
  run "$gcsnap" paths --json --object 13880 chain.gclog
  json_check out.txt "paths --json --object on a deep chain" '
p = d["sections"][0]["paths"][0]["path"]
assert len(p) == 21 and p[10] == {"elided": 4980} and p[0]["id"] == "10" and p[-1]["id"] == "13880", p'
}

# ---- export -------------------------------------------------------------

suite_export() {
  make_diamond
  run "$gcsnap" export --format heapsnapshot -o d.heapsnapshot diamond.gclog
  expect_rc 0 "export as a heap snapshot"
  json_check d.heapsnapshot "heap snapshot in V8's layout, every object in it" '
m = d["snapshot"]["meta"]
assert m["node_fields"] == ["type", "name", "id", "self_size", "edge_count", "trace_node_id", "detachedness"]
assert m["edge_fields"] == ["type", "name_or_index", "to_node"]
nf, ef = len(m["node_fields"]), len(m["edge_fields"])
n, e = d["snapshot"]["node_count"], d["snapshot"]["edge_count"]
nodes, edges, strings = d["nodes"], d["edges"], d["strings"]
assert len(nodes) == n * nf and len(edges) == e * ef
assert sum(nodes[i * nf + 4] for i in range(n)) == e
kinds = m["node_types"][0]
objs = [i for i in range(n) if kinds[nodes[i * nf]] == "object"]
assert len(objs) == 6 and sum(nodes[i * nf + 3] for i in objs) == 1008
assert sorted(strings[nodes[i * nf + 1]] for i in objs) == ["App.Branch"] * 3 + ["App.Leaf"] * 2 + ["App.Root"]
assert all(edges[k * ef + 2] % nf == 0 and edges[k * ef + 2] < len(nodes) for k in range(e))
assert len(set(nodes[i * nf + 2] for i in range(n))) == n'
  # Many numbers of every width, through many blocks of the output buffer:
  # object i has size 7^(i mod 19) and i mod 5 references (the sizes add
  # up to less than the format allows).
  if [ -n "$python" ]; then "$python" -c '
print("a 2 widths 0\nt 1 W")
for i in range(1, 30001):
    print("o %x 1 %x" % (16 * i, 7 ** (i % 19)) + "".join(" %x" % (16 * (1 + i * k % 30000)) for k in range(1, i % 5 + 1)))
print("r 10 1 0\nc widths 0")' >widths.gclog; fi
  run "$gcsnap" export --format heapsnapshot -o w.heapsnapshot widths.gclog
  expect_rc 0 "export of numbers of every width"
  json_check w.heapsnapshot "every size and edge count written whole" '
nf, nodes = len(d["snapshot"]["meta"]["node_fields"]), d["nodes"]
objs = [nodes[i:i + nf] for i in range(0, len(nodes), nf) if d["snapshot"]["meta"]["node_types"][0][nodes[i]] == "object"]
assert sorted(o[3] for o in objs) == sorted(7 ** (i % 19) for i in range(1, 30001)), "sizes"
assert sorted(o[4] for o in objs) == sorted(i % 5 for i in range(1, 30001)), "edge counts"'
  # Read back, the export holds what the dump does: an object no root
  # holds stays unreachable.
  printf 'a 2 u 0\nt 1 A\no 10 1 20 18\no 18 1 30\no 20 1 40 10\nr 10 1 0\nc u 0\n' > u.gclog
  run "$gcsnap" export --format heapsnapshot -o u.heapsnapshot u.gclog
  expect_rc 0 "export of a dump with an unreachable object"
  run "$gcsnap" dominators u.heapsnapshot
  expect_regex out.txt '^  Unreachable objects  1 \(64 bytes' "the export read back: the unreachable object"
  expect_regex out.txt '^  Reachable objects    2 \(80 bytes\)' "the export read back: the reachable ones"
  run "$gcsnap" export --format csv -o d.csv diamond.gclog
  expect_rc 0 "export as CSV"
  expect_line d.csv 'type,count,bytes' "CSV header"
  expect_line d.csv '"App.Branch",3,352' "CSV row"
  run "$gcsnap" export --format dot --object 40 -o d.dot diamond.gclog
  expect_rc 0 "export retention paths as dot"
  expect_regex d.dot '^  n10 -> n20;$' "the dot graph holds the path"
  expect_regex d.dot 'local root' "the dot graph names the root"
  run "$gcsnap" export --format dot -o d2.dot diamond.gclog
  expect_rc 2 "dot without --object or --type"
  expect_absent d2.dot "a usage error writes nothing"
  run "$gcsnap" export --format png -o d.png diamond.gclog
  expect_rc 2 "an unknown format"
}

# ---- trend --------------------------------------------------------------

suite_trend() {
  local h='a 2 app [stable-ids] 0\nt 1 Leak\nt 2 Other\n' e='r 4 1 0\nc app [stable-ids] 0\n'
  printf "${h}o 4 2 10 8\no 8 1 20\n${e}" >s1.gclog
  printf "${h}o 4 2 10 8 c\no 8 1 20\no c 1 20\no 10 2 10\n${e}" >s2.gclog
  printf "${h}o 4 2 10 8 c 14\no 8 1 20\no c 1 20\no 14 1 20\n${e}" >s3.gclog
  run "$gcsnap" trend --json s1.gclog s2.gclog s3.gclog
  expect_rc 0 "trend of three snapshots"
  json_check out.txt "the type that grew every interval is the suspect, with its holder" '
s = d["suspects"]
assert [x["type"] for x in s] == ["Leak"], s
x = s[0]
assert (x["counts"], x["bytes"], x["bytes_gained"], x["grew_every_interval"]) == ([1, 2, 3], [32, 64, 96], 64, True), x
h = x["held_by"]
assert (h["root_kind"], h["root_flags"], h["root_type"], h["first_hop_type"], h["objects"]) == ("local", 0, "Other", "Leak", 3), h
assert [n["id"] for n in h["example_path"]] == ["4", "8"], h
assert d["stable_ids"] is True
assert (d["alive_in_every_snapshot"]["objects"], d["alive_in_every_snapshot"]["bytes"]) == (2, 48), d'
  sed 's/ \[stable-ids\]//' s2.gclog >plain2.gclog
  run "$gcsnap" trend --json s1.gclog plain2.gclog s3.gclog
  json_check out.txt "no object comparison unless every snapshot has stable IDs" '
assert d["stable_ids"] is False and "alive_in_every_snapshot" not in d, d'
  run "$gcsnap" trend s1.gclog
  expect_rc 2 "trend of one snapshot"
  # --old-only: gen 2 holds 0-f, gen 0 holds 10-1f; the objects 10 and 14 are young.
  local f
  for f in s1 s2 s3; do
    printf '{"format":"gcsnap-generations/1","dropped":0,"ranges":[%s,%s]}' \
      '{"section":0,"generation":2,"start":"0","used":16,"reserved":16}' \
      '{"section":0,"generation":0,"start":"10","used":16,"reserved":16}' >$f.gclog.gens.json
  done
  run "$gcsnap" trend --old-only --json s1.gclog s2.gclog s3.gclog
  expect_rc 0 "trend of the long-lived objects"
  json_check out.txt "only gen 2 and the large object heap count" '
assert [f["objects"] for f in d["files"]] == [2, 3, 3], d["files"]
x = d["suspects"][0]
assert (x["type"], x["counts"], x["bytes"]) == ("Leak", [1, 2, 2], [32, 64, 64]), x'
  run "$gcsnap" report s3.gclog -o gens.html
  expect_rc 0 "report of a file with its generation ranges"
  if grep -q '<section id="generations">' gens.html &&
     grep -q '"generations":\[{"generation":"0","objects":1,' gens.html; then pass; else
    fail "the report breaks the file down by generation"; fi
  run "$gcsnap" diff --old-only --json s1.gclog s3.gclog
  expect_rc 0 "diff of the long-lived objects"
  json_check out.txt "diff --old-only compares gen 2 and the large object heap only" '
x = [r for r in d["types"] if r["type"] == "Leak"][0]
assert (x["count_before"], x["count_after"]) == (1, 2), x
assert (d["old"]["objects"], d["new"]["objects"]) == (2, 3), d'
  # By generation: in s3, 4, 8 and c lie in gen 2, 14 in gen 0.
  run "$gcsnap" summary s3.gclog
  expect_rc 0 "summary of a file with its generation ranges"
  expect_line out.txt "By generation (2 ranges):" "summary breaks the file down by generation"
  expect_regex out.txt '^2 +3 +80 +71\.4% +Leak, Other$' "summary's gen 2 row"
  expect_regex out.txt '^0 +1 +32 +28\.6% +Leak$' "summary's gen 0 row"
  run "$gcsnap" summary --json s3.gclog
  json_check out.txt "summary --json by generation" '
g = {x["generation"]: (x["objects"], x["bytes"]) for x in d["generations"]}
assert g == {"0": (1, 32), "1": (0, 0), "2": (3, 80), "loh": (0, 0), "poh": (0, 0), "unknown": (0, 0)}, g
assert d["generation_ranges"] == 2, d
assert d["generations"][2]["types"][0] == {"type": "Leak", "count": 2, "bytes": 64}, d["generations"][2]'
  # Each section's objects are placed by that section's ranges.
  printf '{"format":"gcsnap-generations/1","dropped":0,"ranges":[%s,%s]}' \
    '{"section":0,"generation":2,"start":"10","used":128,"reserved":128}' \
    '{"section":1,"generation":0,"start":"100","used":512,"reserved":512}' >small.gclog.gens.json
  run "$gcsnap" summary --json small.gclog
  json_check out.txt "summary --json by generation, section by section" '
g = {x["generation"]: (x["objects"], x["bytes"]) for x in d["generations"]}
assert g == {"0": (2, 80), "1": (0, 0), "2": (8, 488), "loh": (0, 0), "poh": (0, 0), "unknown": (0, 0)}, g'
  rm small.gclog.gens.json
  run "$gcsnap" diff --json s1.gclog s3.gclog
  json_check out.txt "diff --json by generation" '
g = {x["generation"]: (x["objects_before"], x["objects_after"], x["objects_change"], x["bytes_change"]) for x in d["generations"]}
assert g == {"0": (0, 1, 1, 32), "1": (0, 0, 0, 0), "2": (2, 3, 1, 32), "loh": (0, 0, 0, 0), "poh": (0, 0, 0, 0), "unknown": (0, 0, 0, 0)}, g'
  run "$gcsnap" diff s1.gclog s3.gclog
  expect_regex out.txt '^2 +3 +\+1 +80 +\+32$' "diff's table by generation"
  run "$gcsnap" report --baseline s1.gclog s3.gclog -o gensdiff.html
  expect_rc 0 "report with a baseline, both with their ranges"
  if grep -q '<table class="gens">.*<tr><td>2</td><td class="n">3</td><td class="n">+1</td>' gensdiff.html &&
     grep -q '"generations":\[{"generation":"0","objects_before":0,"objects_after":1,' gensdiff.html; then pass; else
    fail "the report's changes by generation"; fi
  rm s3.gclog.gens.json
  run "$gcsnap" summary s3.gclog
  expect_no_regex out.txt '^By generation' "no breakdown without the ranges"
  run "$gcsnap" diff --json s1.gclog s3.gclog
  json_check out.txt "no change by generation unless both files have ranges" '
assert "generations" not in d, d'
  run "$gcsnap" trend --old-only s1.gclog s2.gclog s3.gclog
  expect_rc 2 "trend --old-only without the ranges of a file"
}

# ---- report -------------------------------------------------------------

# html_check HTML DESC PYTHON-STATEMENTS: parses HTML with html.parser,
# requires every element to be closed in order (void elements aside) and
# the JSON island to parse; runs the statements with the island in d, the
# page's text in text and its scripts in scripts; same(value, FILE) asserts
# that value equals the JSON in FILE.
html_check() {
  local file=$1 desc=$2 code=$3
  if [ -z "$python" ]; then skip "$desc (no python3 to parse HTML)"; return; fi
  if "$python" - "$file" <<PY >py.txt 2>&1
import html.parser, json, os, sys
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.doctype, self.text, self.scripts, self.island = [], None, [], [], None
        self.ids, self.in_script = set(), None
    def handle_decl(self, decl):
        self.doctype = decl
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            assert a["id"] not in self.ids, "duplicate id " + a["id"]
            self.ids.add(a["id"])
        for k, v in attrs:
            assert not (k in ("src", "href") and v and not v.startswith("#")), "external reference %s=%s" % (k, v)
        if tag == "script":
            self.in_script = a
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))
    def handle_startendtag(self, tag, attrs):
        assert tag in VOID or tag in ("rect", "circle", "polyline", "path", "line"), "self-closed <%s/>" % tag
    def handle_endtag(self, tag):
        assert tag not in VOID, "end tag of void element %s at %s" % (tag, self.getpos())
        assert self.stack and self.stack[-1][0] == tag, "</%s> at %s closes %s" % (tag, self.getpos(), self.stack[-1:])
        self.stack.pop()
        if tag == "script":
            self.in_script = None
    def handle_data(self, data):
        if self.in_script is not None:
            if self.in_script.get("type") == "application/json":
                assert self.island is None, "two JSON islands"
                self.island = data
            else:
                self.scripts.append(data)
        else:
            self.text.append(data)
p = Page()
with open(sys.argv[1], encoding="utf-8") as f:
    p.feed(f.read())
p.close()
assert p.doctype and p.doctype.lower() == "doctype html", p.doctype
assert not p.stack, "unclosed elements: %s" % p.stack
assert p.island is not None, "no JSON island"
d = json.loads(p.island)
text = " ".join(" ".join(p.text).split())
scripts = p.scripts
def same(a, path):
    with open(path) as f:
        b = json.load(f)
    assert a == b, "%s differs from the island" % path
$code
PY
  then pass; else fail "$desc"; sed 's/^/  | /' py.txt | tail -5; fi
}

# js_check HTML DESC: the page's script parses (node --check).
js_check() {
  if ! command -v node >/dev/null 2>&1 || [ -z "$python" ]; then skip "$2 (no node to parse JavaScript)"; return; fi
  "$python" -c 'import re,sys; s=open(sys.argv[1],encoding="utf-8").read(); open("page.js","w").write(re.findall(r"<script>(.*?)</script>", s, re.S)[-1])' "$1"
  if node --check page.js >py.txt 2>&1; then pass; else fail "$2"; sed 's/^/  | /' py.txt | tail -5; fi
}

suite_report() {
  # A type name full of markup: it must come out as text.
  GS_EVIL='Evil</script><b x="1">&amp;'"'"'q'"'"'<!--'
  export GS_EVIL
  make_diamond
  sed "s|^t 3 App.Leaf\$|t 3 ${GS_EVIL//&/\\&}|" diamond.gclog >evil.gclog
  run "$gcsnap" report -o evil.html evil.gclog
  expect_rc 0 "report of one dump"
  expect_empty out.txt "report writes nothing to stdout"
  "$gcsnap" summary --json --top 0 evil.gclog >sum.json
  "$gcsnap" dominators --json --by-type evil.gclog >dom.json
  html_check evil.html "the report is well-formed HTML with the figures of summary and dominators" '
same(d["summary"], "sum.json")
same(d["dominators"], "dom.json")
assert "diff" not in d and "trend" not in d
evil = os.environ["GS_EVIL"]
assert evil in [t["type"] for t in d["summary"]["by_type"]], d["summary"]["by_type"]
assert text.count(evil) >= 2, "the type name is shown as text in the retainers"
assert "Reachable objects 4" in text and "Unreachable (no strong root) Objects 2 Bytes 768" in text, text
assert "240 100.0% 16 10 App.Root" in text, text'
  expect_count evil.html '</script>' 2 "no name from the dump ends a script"
  expect_no_regex evil.html '<b x=' "no name from the dump becomes markup"
  js_check evil.html "the page's script parses"
  no_temp_files "report of one dump"

  printf 'a 2 app 0\nt 1 Keep\nt 2 Grow\nt 3 Gone\no 8 1 10\no 10 2 20\no 18 3 30\nr 8 1 0\nc app 0\n' >old.gclog
  printf 'a 2 app 0\nt 5 Grow\nt 6 Keep\nt 7 New\no 8 6 10\no 10 5 20\no 18 5 20\no 20 5 20\no 28 7 8\nr 8 1 0\nc app 0\n' >new.gclog
  run "$gcsnap" report new.gclog --baseline old.gclog -o diff.html
  expect_rc 0 "report with a baseline"
  "$gcsnap" diff --json --top 0 old.gclog new.gclog >diff.json
  html_check diff.html "the diff in the report is that of diff --json --top 0" '
same(d["diff"], "diff.json")
assert [t["status"] for t in d["diff"]["types"]] == ["changed", "new", "gone"], d["diff"]
assert "Objects 3 \u2192 5 +2" in text and "1 new, 1 gone" in text, text'

  local h='a 2 app [stable-ids] 0\nt 1 Leak\nt 2 Other\n' e='r 4 1 0\nc app [stable-ids] 0\n'
  printf "${h}o 4 2 10 8\no 8 1 20\n${e}" >s1.gclog
  printf "${h}o 4 2 10 8 c\no 8 1 20\no c 1 20\no 10 2 10\n${e}" >s2.gclog
  printf "${h}o 4 2 10 8 c 14\no 8 1 20\no c 1 20\no 14 1 20\n${e}" >s3.gclog
  run "$gcsnap" report s3.gclog --series s1.gclog s2.gclog -o trend.html
  expect_rc 0 "report with a series"
  "$gcsnap" trend --json s1.gclog s2.gclog s3.gclog >trend.json
  html_check trend.html "the trend in the report is that of trend --json" '
same(d["trend"], "trend.json")
assert [s["type"] for s in d["trend"]["suspects"]] == ["Leak"]
assert "held by a local root (flags 0) of type Other through Leak" in text, text'
  expect_count trend.html '<polyline ' 2 "the chart draws bytes and objects"
  run "$gcsnap" report --series s1.gclog s2.gclog s3.gclog -o trend2.html
  expect_rc 0 "report of the last of a series"
  html_check trend2.html "FILE defaults to the last of the series" 'same(d["trend"], "trend.json")'

  if [ -n "$agent" ] && [ -x "$agent" ]; then
    "$agent" --source mock:objects=3000,types=2500,seed=5 --clock 0 --out m1.gclog >/dev/null &&
    "$agent" --source mock:objects=4000,types=2500,seed=5 --clock 0 --out m2.gclog >/dev/null &&
    "$agent" --source mock:objects=6000,types=2500,sections=2,seed=5 --clock 0 --out m3.gclog.zst >/dev/null
    run "$gcsnap" report m3.gclog.zst --series m1.gclog m2.gclog -o mock.html
    expect_rc 0 "report of mock dumps"
    "$gcsnap" summary --json --top 0 m3.gclog.zst >msum.json
    "$gcsnap" dominators --json --by-type m3.gclog.zst >mdom.json
    "$gcsnap" trend --json m1.gclog m2.gclog m3.gclog.zst >mtrend.json
    html_check mock.html "mock dumps: the island holds every type and the commands figures" '
with open("msum.json") as f:
    msum = json.load(f)
# summary --json has the breakdown by generation (the agent wrote the ranges
# beside each dump); the island keeps it apart, with the same figures.
assert (d["generations"]["ranges"], d["generations"]["generations"]) == (msum.pop("generation_ranges"), msum.pop("generations"))
assert d["summary"] == msum, "msum.json differs from the island"
same(d["dominators"], "mdom.json")
same(d["trend"], "mtrend.json")
assert d["summary"]["by_type_omitted"]["types"] == 0
assert len(d["summary"]["by_type"]) > 1000, len(d["summary"]["by_type"])
assert len(d["dominators"]["sections"]) == 2'
    run "$gcsnap" report m2.gclog --baseline m1.gclog -o mdiff.html
    expect_rc 0 "report of mock dumps with a baseline"
    "$gcsnap" diff --json --top 0 m1.gclog m2.gclog >mdiff.json
    html_check mdiff.html "mock dumps: the diff" 'same(d["diff"], "mdiff.json")'
  else
    skip "mock dumps (no gcsnap-agent)"
  fi

  # A stream of many captures: the page details the first 100 sections
  # and counts the others in its totals.
  local k
  for k in $(seq 0 102); do printf 'a 2 cap%d %x\nt 1 T\no %x 1 10\nr %x 1 0\nc cap%d %x\n' \
    "$k" "$k" $((16 + 16 * k)) $((16 + 16 * k)) "$k" "$k"; done >many.gclog
  run "$gcsnap" report many.gclog -o many.html
  expect_rc 0 "report of 103 sections"
  html_check many.html "the first 100 sections detailed, all 103 counted" '
assert len(d["summary"]["sections"]) == 100 and d["summary"]["sections_omitted"] == 3, d["summary"].keys()
assert len(d["dominators"]["sections"]) == 100 and len(d["tree"]["sections"]) == 100
assert d["summary"]["objects"] == 103 and d["summary"]["sections"][-1]["name"] == "cap99"
assert "Sections 103" in text and text.count("3 more sections after the first 100") == 2, text[:300]'

  run "$gcsnap" report evil.gclog
  expect_rc 2 "report without -o"
  run "$gcsnap" report new.gclog --baseline old.gclog --series s1.gclog -o x.html
  expect_rc 2 "--baseline and --series together"
  run "$gcsnap" report s1.gclog --series -o x.html
  expect_rc 2 "a series of one snapshot"
  run "$gcsnap" report missing.gclog -o x.html
  expect_rc 2 "report of a missing file"
  printf 'a 2 x 0\no 1 1\nc x 0\n' >broken.gclog
  run "$gcsnap" report broken.gclog -o x.html
  expect_rc 1 "report of an invalid file"
  expect_regex err.txt '^broken\.gclog:2: error \[missing-field\]' "the error names file and line"
  expect_absent x.html "a failed report writes nothing"
  no_temp_files "failed reports"
}

# ---- diff ---------------------------------------------------------------

suite_diff() {
  printf 'a 2 app 0\nt 1 Keep\nt 2 Grow\nt 3 Gone\no 8 1 10\no 10 2 20\no 18 3 30\nr 8 1 0\nc app 0\n' >old.gclog
  printf 'a 2 app 0\nt 5 Grow\nt 6 Keep\nt 7 New\no 8 6 10\no 10 5 20\no 18 5 20\no 20 5 20\no 28 7 8\nr 8 1 0\nc app 0\n' >new.gclog
  run "$gcsnap" diff --json old.gclog new.gclog
  expect_rc 0 "diff of two dumps"
  json_check out.txt "diff matches types by name, sorted by growth" '
rows = [(t["type"], t["count_before"], t["count_after"], t["bytes_change"], t["status"]) for t in d["types"]]
assert rows == [("Grow", 1, 3, 64, "changed"), ("New", 0, 1, 8, "new"), ("Gone", 1, 0, -48, "gone")], rows
assert (d["old"]["objects"], d["new"]["objects"], d["bytes_change"]) == (3, 5, 24), d'
  run "$gcsnap" diff --json --all old.gclog new.gclog
  json_check out.txt "diff --all keeps the unchanged types" '
assert [t["type"] for t in d["types"]] == ["Grow", "New", "Keep", "Gone"], d["types"]'
  run "$gcsnap" diff old.gclog new.gclog
  expect_rc 0 "diff as text"
  expect_regex out.txt '^ +0 +-1 +0 +-48 +gone +Gone$' "a vanished type is marked"
  run "$gcsnap" diff old.gclog
  expect_rc 2 "diff with one file"
}

# ---- validate ---------------------------------------------------------

# 30 unknown records inside one section: 30 errors, no warnings.
make_many_errors() {
  { echo "a 2 many.exe 0"; for i in $(seq 1 30); do echo "x $i"; done; echo "c many.exe 0"; } >many.gclog
}

# One object with 30 references to objects not in the dump: 30 warnings.
make_many_warnings() {
  { echo "a 2 warn.exe 0"; echo "t 1 T"
    printf 'o 1 1 8'; for i in $(seq 101 130); do printf ' %x' "$i"; done; echo
    echo "r 1 1 0"; echo "c warn.exe 0"; } >warn.gclog
}

suite_validate() {
  run "$gcsnap" validate small.gclog
  expect_rc 0 "valid file with warnings"
  expect_regex out.txt '^small\.gclog:10: warning \[dangling-reference\]: .+' "dangling reference at line 10"
  expect_regex out.txt '^small\.gclog:11: warning \[undefined-type\]: .+' "undefined type at line 11"
  expect_regex out.txt '^small\.gclog:15: warning \[dangling-root\]: .+' "dangling root at line 15"
  expect_count out.txt "$DIAG_RE" 3 "three diagnostics"
  expect_line out.txt "small.gclog: valid (3 warnings)" "verdict of a valid file"

  run "$gcsnap" validate --strict small.gclog
  expect_rc 1 "--strict makes warnings fail"
  expect_regex out.txt '^small\.gclog: invalid \(0 errors, 3 warnings\)' "--strict verdict"

  run "$gcsnap" validate old.gclog
  expect_rc 0 "first-version file with CRLF"
  expect_line out.txt "old.gclog: valid (0 warnings)" "verdict without warnings"
  run "$gcsnap" validate --strict old.gclog
  expect_rc 0 "--strict on a file without warnings"

  run "$gcsnap" validate invalid.gclog
  expect_rc 1 "invalid file"
  expect_regex out.txt '^invalid\.gclog:3: error \[not-hex\]: .+' "not-hex at line 3"
  expect_regex out.txt '^invalid\.gclog:4: error \[unknown-record\]: .+' "unknown record at line 4"
  expect_regex out.txt '^invalid\.gclog:6: error \[duplicate-object\]: .+' "duplicate object at line 6"
  expect_regex out.txt '^invalid\.gclog:7: error \[root-kind\]: .+' "root kind at line 7"
  expect_regex out.txt '^invalid\.gclog:8: error \[section-name\]: .+' "section name at line 8"
  expect_count out.txt "$DIAG_RE" 5 "five diagnostics"
  expect_line out.txt "invalid.gclog: invalid (5 errors, 0 warnings)" "verdict of an invalid file"

  : >empty.gclog
  run "$gcsnap" validate empty.gclog
  expect_rc 1 "empty file"
  expect_regex out.txt '^empty\.gclog: error \[no-section\]: .+' "diagnostic without a line number"

  run "$gcsnap" validate missing.gclog
  expect_rc 2 "missing file"
  expect_regex err.txt "missing\.gclog" "missing file is named on stderr"
  expect_no_regex out.txt 'valid' "no verdict for a missing file"
  run "$gcsnap" validate small.gclog missing.gclog invalid.gclog
  expect_rc 2 "an I/O error outranks an invalid file"
  expect_line out.txt "small.gclog: valid (3 warnings)" "other files still checked (1)"
  expect_line out.txt "invalid.gclog: invalid (5 errors, 0 warnings)" "other files still checked (2)"
  run "$gcsnap" validate small.gclog invalid.gclog
  expect_rc 1 "one invalid file of two"
  run "$gcsnap" validate .
  expect_rc 2 "a directory"

  run "$gcsnap" validate - <small.gclog
  expect_rc 0 "standard input"
  expect_line out.txt "<stdin>: valid (3 warnings)" "standard input is named <stdin>"

  make_many_errors
  run "$gcsnap" validate many.gclog
  expect_rc 1 "many errors"
  expect_count out.txt "$DIAG_RE" 20 "20 errors shown by default"
  expect_line out.txt "many.gclog: ... and 10 more errors" "count of the errors not shown"
  expect_line out.txt "many.gclog: invalid (30 errors, 0 warnings)" "all errors counted"
  run "$gcsnap" validate --max-errors 5 many.gclog
  expect_count out.txt "$DIAG_RE" 5 "--max-errors 5 shows 5"
  expect_regex out.txt '^many\.gclog:2: error \[unknown-record\]' "the first error is shown first"
  expect_line out.txt "many.gclog: ... and 25 more errors" "--max-errors 5: count of the rest"
  run "$gcsnap" validate --max-errors=0 many.gclog
  expect_count out.txt "$DIAG_RE" 30 "--max-errors=0 shows all"
  expect_no_regex out.txt 'more errors' "--max-errors=0 has no rest"

  make_many_warnings
  run "$gcsnap" validate --max-errors 3 warn.gclog
  expect_rc 0 "many warnings are still valid"
  expect_count out.txt "$DIAG_RE" 3 "--max-errors limits warnings too"
  expect_line out.txt "warn.gclog: ... and 27 more warnings" "count of the warnings not shown"
  expect_line out.txt "warn.gclog: valid (30 warnings)" "all warnings counted"

  run "$gcsnap" validate --json invalid.gclog
  expect_rc 1 "--json on an invalid file"
  json_check out.txt "--json report of an invalid file" '
assert d["file"] == "invalid.gclog", d["file"]
assert d["valid"] is False
assert d["errors"] == 5 and d["warnings"] == 0, (d["errors"], d["warnings"])
assert d["sections"] == 1, d["sections"]
assert isinstance(d["records"], int)
lines = [x["line"] for x in d["diagnostics"]]
codes = [x["code"] for x in d["diagnostics"]]
assert lines == [3, 4, 6, 7, 8], lines
assert codes == ["not-hex", "unknown-record", "duplicate-object", "root-kind", "section-name"], codes
assert all(x["severity"] == "error" and x["message"] for x in d["diagnostics"])
assert d["omitted_errors"] == 0 and d["omitted_warnings"] == 0'

  run "$gcsnap" validate --json small.gclog
  expect_rc 0 "--json on a valid file"
  json_check out.txt "--json report of a valid file" '
assert d["valid"] is True
assert (d["errors"], d["warnings"], d["sections"], d["records"]) == (0, 3, 2, 23), d
assert [(x["line"], x["severity"], x["code"]) for x in d["diagnostics"]] == [
    (10, "warning", "dangling-reference"), (11, "warning", "undefined-type"),
    (15, "warning", "dangling-root")], d["diagnostics"]'

  run "$gcsnap" validate --json --max-errors 4 many.gclog
  json_check out.txt "--json with --max-errors" '
assert len(d["diagnostics"]) == 4
assert d["errors"] == 30 and d["omitted_errors"] == 26, d'

  # Every diagnostic, printed as it comes rather than held to the end.
  awk 'BEGIN { print "a 2 d 0"; print "t 1 T"
    for (i = 1; i <= 50000; i++) printf "o %x 1 8 %x\n", 16 * i, 16 * (i + 100000); print "c d 0" }' >dang.gclog
  run "$gcsnap" validate --json --max-errors 0 dang.gclog
  expect_rc 0 "--json with no limit on a file of 50000 warnings"
  json_check out.txt "--json lists every one of 50000 warnings" '
assert d["warnings"] == 50000 and d["omitted_warnings"] == 0, d["warnings"]
assert len(d["diagnostics"]) == 50000
assert d["diagnostics"][-1]["line"] == 50002 and d["diagnostics"][-1]["code"] == "dangling-reference"'

  run "$gcsnap" validate --json --strict small.gclog
  expect_rc 1 "--json --strict"
  json_check out.txt "--json --strict verdict" 'assert d["valid"] is False and d["strict"] is True'

  run "$gcsnap" validate --json small.gclog invalid.gclog missing.gclog
  expect_rc 2 "--json with several files"
  json_check out.txt "--json with several files: files array" '
assert d["valid"] is False
assert [f["file"] for f in d["files"]] == ["small.gclog", "invalid.gclog", "missing.gclog"]
assert [f["valid"] for f in d["files"]] == [True, False, False]
assert "io_error" in d["files"][2] and "io_error" not in d["files"][0]'
  validate_compressed_again
  validate_utf16
  validate_not_dumps
}

# Files taken for heap dumps that are something else fail in one error
# that says what they are, not once a line as records.
validate_not_dumps() {
  local f
  printf '{"head":{"callFrame":{"functionName":"(root)"},"selfSize":0},"samples":[]}\n' >x.heapprofile
  printf '{"version":2,"type":"Inspector","nodes":[],"nodeClassNames":[]}\n' >jsc.json
  printf '{ "edges":[],"nodes":[],"snapshot":{"meta":{}},"strings":[]}\n' >sorted.heapsnapshot
  printf '\x7fELF\x02\x01\x01\x00' >core.1234
  printf 'Nettrace\x14\x00\x00\x00!FastSerialization.1' >t.nettrace
  gzip -c small.gclog >s.gz
  printf 'PK\x03\x04\x14\x00' >s.zip
  set -- "x.heapprofile:JSON, but not a V8 heap snapshot" "jsc.json:a JavaScriptCore heap snapshot" \
    "sorted.heapsnapshot:a V8 heap snapshot whose members are out of V8's order" "core.1234:an ELF file" "t.nettrace:an EventPipe trace" "s.zip:a zip archive"
  if command -v xz >/dev/null 2>&1; then xz -c small.gclog >s.xz; set -- "$@" "s.xz:xz-compressed"; fi
  for f in "$@"; do
    run "$gcsnap" validate "${f%%:*}"
    expect_rc 1 "validate ${f%%:*}"
    expect_count out.txt "^${f%%:*}: error \[bad-heap-file\]: ${f#*:}" 1 "${f%%:*} is named for what it is"
    expect_line out.txt "${f%%:*}: invalid (1 error, 0 warnings)" "${f%%:*}: one error"
  done
  run "$gcsnap" summary x.heapprofile
  expect_count err.txt "^x\.heapprofile: error \[bad-heap-file\]: JSON, but not" 1 "summary says the same"
  run "$gcsnap" validate s.gz
  expect_rc 0 "gzip is still read as it is"
  rm -f x.heapprofile jsc.json sorted.heapsnapshot core.1234 t.nettrace s.gz s.zip s.xz
}

# A dump saved as UTF-16 (Windows PowerShell's >) is refused in one error
# that says so, with or without a byte order mark; with a UTF-8 one
# (Set-Content -Encoding UTF8) it reads as it is.
validate_utf16() {
  local e
  command -v iconv >/dev/null 2>&1 || { skip "iconv not installed"; return; }
  for e in UTF-16 UTF-16LE UTF-16BE; do
    iconv -f UTF-8 -t $e small.gclog >u16.gclog
    run "$gcsnap" validate --json u16.gclog
    expect_rc 1 "validate a $e dump"
    json_check out.txt "$e: one error that names the encoding" '
assert d["errors"] == 1 and d["records"] == 0, d
assert d["diagnostics"][0]["code"] == "not-text" and "UTF-16" in d["diagnostics"][0]["message"]'
  done
  # The other commands stop at it, with no advice to validate for more.
  run "$gcsnap" summary u16.gclog
  expect_rc 1 "summary of a UTF-16 dump"
  expect_count err.txt "^u16\.gclog: error \[not-text\]: UTF-16 text" 1 "summary names the encoding"
  expect_no_regex err.txt "gcsnap validate" "no advice to validate a file that has one problem"
  run "$gcsnap" convert u16.gclog u16-out.gclog
  expect_line err.txt "gcsnap: nothing written" "convert of a UTF-16 dump writes nothing"
  expect_absent u16-out.gclog "no output from a UTF-16 dump"
  # Advice to validate names what can be validated: - for stdin.
  run "$gcsnap" summary - <invalid.gclog
  expect_line err.txt "gcsnap: run 'gcsnap validate -' on the same input to list every problem" \
    "advice for a dump read from stdin"
  run "$gcsnap" convert invalid.gclog invalid-out.gclog
  expect_line err.txt "gcsnap: nothing written; run 'gcsnap validate invalid.gclog' to list every problem" \
    "advice after convert stopped at a bad record"
  { printf '\xef\xbb\xbf'; cat small.gclog; } >u8.gclog
  run "$gcsnap" validate u8.gclog
  expect_rc 0 "validate a dump with a UTF-8 byte order mark"
  expect_line out.txt "u8.gclog: valid (3 warnings)" "a UTF-8 byte order mark is read past"
  rm -f u16.gclog u8.gclog
}

# A compressed dump is decompressed once more for the lines of its dangling
# references: the same diagnostics as the plain file, from files that the
# parsing workers read (over 1 MiB compressed), with several sections.
validate_compressed_again() {
  if [ -z "$python" ]; then skip "no python3 to generate a dump with dangling references"; return; fi
  "$python" - <<'PY'
import random
random.seed(3)
with open("dangling.gclog", "w") as f:
    for s in range(3):
        f.write("a 2 app.exe %d\nt 1 T\n" % s)
        ids = [0x1000 + 16 * i for i in range(40000)]
        for i, oid in enumerate(ids):
            refs = [random.choice(ids) for _ in range(3)]
            if i % 4999 == 17:
                refs.append(0xdead0000 + 8 * i + s)
            f.write("o %x 1 18 %s\n" % (oid, " ".join("%x" % r for r in refs)))
        f.write("r %x 1 0\nc app.exe %d\n" % (ids[0], s))
PY
  "$gcsnap" validate --max-errors 0 dangling.gclog >dangling.txt 2>&1
  expect_line dangling.txt "dangling.gclog: valid (24 warnings)" "plain dump with dangling references"
  "$gcsnap" convert dangling.gclog dangling.gclog.zst 2>/dev/null
  local z
  for z in zst gz; do
    [ $z = gz ] && { command -v gzip >/dev/null 2>&1 || continue; gzip -c dangling.gclog >dangling.gclog.gz; }
    run "$gcsnap" validate --max-errors 0 dangling.gclog.$z
    sed "s/dangling\.gclog\.$z/dangling.gclog/" out.txt >again.txt
    expect_same again.txt dangling.txt "the dangling references of a .$z dump, at their lines"
  done
}

# ---- summary ----------------------------------------------------------

# small.gclog, by hand (sizes in hex in the file, decimal here):
# section 1 "demo.exe": objects 10(32) 20(48) 30(24) 40(256) 50(40) 60(64)
#   70(16) 80(8): 8 objects, 488 bytes. References: 20->10,30,40; 40->20;
#   50->60; 60->50; 70->99: 7, of which 1 dangling (99 is not in the dump).
#   Roots: 20 local; 50 handle+weak; 70 static+pinned; 90 finalizer, not in
#   the dump (dangling). Strongly reachable: 20 10 30 40 70; the weak root
#   keeps 50 and 60 nowhere, and 80 has no root: 3 unreachable, 112 bytes.
#   Types: String 10 30 50 70 = 4 / 112; Object[] 20 60 = 2 / 112;
#   "Demo.Node With Spaces" 40 = 1 / 256; type 7 undefined: 80 = 1 / 8.
# section 2 "other domain": 100(32)->200(48): 2 objects, 80 bytes, 1
#   reference; root 100 internal+interior; nothing unreachable.
# totals: 10 objects, 568 bytes, 8 references, 5 roots, 3 type names.
SUMMARY_CHECKS='
tot = {"objects": 10, "bytes": 568, "references": 8, "dangling_references": 1,
       "roots": 5, "dangling_roots": 1, "types": 3, "unreachable": 3,
       "unreachable_bytes": 112}
for k, v in tot.items():
    assert d[k] == v, (k, d[k], v)
assert d["roots_by_kind"] == {"internal": 1, "local": 1, "finalizer": 1, "handle": 1,
                              "static": 1, "runtime": 0}, d["roots_by_kind"]
for k, v in {"none": 2, "pinned": 1, "weak": 1, "interior": 1}.items():
    assert d["roots_by_flag"][k] == v, (k, d["roots_by_flag"])
rows = [(r["type"], r["count"], r["bytes"]) for r in d["by_type"]]
assert rows == [("Demo.Node With Spaces", 1, 256), ("System.String", 6, 192),
                ("System.Object[]", 2, 112), ("?7", 1, 8)], rows
s1, s2 = d["sections"]
assert (s1["name"], s1["timestamp"], s2["name"], s2["timestamp"]) == \
       ("demo.exe", 0x1f4, "other domain", 0xa), (s1["name"], s2["name"])
assert (s1["objects"], s1["bytes"], s1["references"], s1["roots"]) == (8, 488, 7, 4)
assert (s1["unreachable"], s1["unreachable_bytes"], s1["types"]) == (3, 112, 3)
assert s1["roots_by_flag"]["interior"] == 0 and s2["roots_by_flag"]["interior"] == 1
assert [(r["type"], r["count"], r["bytes"]) for r in s1["by_type"]] == [
    ("Demo.Node With Spaces", 1, 256), ("System.String", 4, 112),
    ("System.Object[]", 2, 112), ("?7", 1, 8)], s1["by_type"]
assert (s2["objects"], s2["bytes"], s2["references"], s2["roots"]) == (2, 80, 1, 1)
assert (s2["unreachable"], s2["dangling_references"], s2["types"]) == (0, 0, 1)
assert s2["by_type"] == [{"type": "System.String", "count": 2, "bytes": 80,
                          "percent": 100.0}], s2["by_type"]
'

suite_summary() {
  run "$gcsnap" summary --json small.gclog
  expect_rc 0 "summary --json"
  json_check out.txt "summary --json numbers" "$SUMMARY_CHECKS"

  run "$gcsnap" summary --json --top 2 small.gclog
  json_check out.txt "summary --json --top 2" '
assert [r["type"] for r in d["by_type"]] == ["Demo.Node With Spaces", "System.String"]
assert d["by_type_omitted"] == {"types": 2, "count": 3, "bytes": 120}, d["by_type_omitted"]
assert d["objects"] == 10'

  run "$gcsnap" summary small.gclog
  expect_rc 0 "summary text"
  expect_line out.txt "File: small.gclog (2 sections)" "summary title"
  expect_line out.txt "Section 1: demo.exe (line 1, timestamp 1f4)" "first section title"
  expect_line out.txt "Section 2: other domain (line 18, timestamp a)" "second section title"
  sed -n '/^Total of 2 sections$/,$p' out.txt >total.txt
  expect_regex total.txt '^  Objects +10$' "text total objects"
  expect_regex total.txt '^  Bytes +568$' "text total bytes"
  expect_regex total.txt '^  References +8$' "text total references"
  expect_regex total.txt '^  Dangling references +1$' "text dangling references"
  expect_regex total.txt '^  Roots +5$' "text roots"
  expect_regex total.txt '^    static +1$' "text roots by kind"
  expect_regex total.txt '^    weak +1$' "text roots by flag"
  expect_regex total.txt '^  Types +3$' "text types"
  expect_regex total.txt '^  Unreachable objects +3$' "text unreachable objects"
  expect_regex total.txt '^  Unreachable bytes +112$' "text unreachable bytes"
  # 256/568 = 45.07%, 192/568 = 33.80%
  expect_regex total.txt '^ +1 +256 +45\.1%  Demo\.Node With Spaces$' "text type row 1"
  expect_regex total.txt '^ +6 +192 +33\.8%  System\.String$' "text type row 2"
  expect_count total.txt '%  ' 4 "text total has 4 type rows"

  run "$gcsnap" summary --top 1 small.gclog
  sed -n '/^Total of 2 sections$/,$p' out.txt >total.txt
  # the 3 other types: 6+2+1 objects, 192+112+8 = 312 bytes = 54.9%
  expect_regex total.txt '^ +9 +312 +54\.9%  \(3 more types\)$' "text --top 1 rest row"

  run "$gcsnap" summary --json old.gclog
  json_check out.txt "summary of a single-section first-version file" '
assert d["objects"] == 2 and d["references"] == 1 and d["roots"] == 1
# 7c79f is the runtime root; 1ce004 (0x18 = 24 bytes) only refers to it
assert d["roots_by_kind"]["runtime"] == 1
assert d["unreachable"] == 1 and d["unreachable_bytes"] == 24, d
assert len(d["sections"]) == 1 and d["sections"][0]["name"] == "bubblecs.exe"
assert d["sections"][0]["timestamp"] == 0'

  run "$gcsnap" summary invalid.gclog
  expect_rc 1 "summary of an invalid file"
  expect_regex err.txt '^invalid\.gclog:3: error \[not-hex\]: .+' "summary reports the load error"
  expect_regex err.txt "gcsnap validate invalid\.gclog" "summary hints at validate"
  expect_empty out.txt "summary of an invalid file: stdout"

  : >empty.gclog
  run "$gcsnap" summary empty.gclog
  expect_rc 1 "summary of an empty file"
  expect_regex err.txt '^empty\.gclog: error \[no-section\]: .+' "summary of an empty file: message"

  run "$gcsnap" summary missing.gclog
  expect_rc 2 "summary of a missing file"

  # Sizes whose sum passes 2^63-1 are refused, never shown wrapped: in one
  # section (two objects of 2^63 bytes), and across two sections.
  printf 'a 2 big 0\nt 1 Big\no 10 1 8000000000000000\no 18 1 8000000000000000\nr 10 1 0\nc big 0\n' >big.gclog
  printf 'a 2 one 0\nt 1 Big\no 10 1 7000000000000000\nc one 0\na 2 two 0\nt 1 Big\no 10 1 7000000000000000\nc two 0\n' >big2.gclog
  # (dominators reports each section apart: big2's are right as they are.)
  for f in big big2; do
    for cmd in validate summary dominators diff; do
      [ $f$cmd = big2dominators ] && continue
      if [ $cmd = diff ]; then run "$gcsnap" diff small.gclog $f.gclog; else run "$gcsnap" $cmd $f.gclog; fi
      expect_rc 1 "$cmd of $f.gclog, whose bytes pass 2^63-1"
      cat out.txt err.txt >all.txt
      expect_regex all.txt "^$f\.gclog:[0-9]+: error \[bytes-overflow\]: " "$cmd of $f.gclog names bytes-overflow"
    done
  done
  run "$gcsnap" validate --json big.gclog
  json_check out.txt "validate --json: one bytes-overflow, at the first object past the limit" '
assert [(x["line"], x["code"]) for x in d["diagnostics"]] == [(3, "bytes-overflow")], d'

  # Many small sections: the first 1000 are listed, each with its top
  # types; the totals count them all.
  awk 'BEGIN { for (i = 1; i <= 1003; i++)
    printf "a 2 s%d 0\nt 1 A\nt 2 B\nt 3 C\no 10 1 8\no 20 2 10\no 30 3 18\nr 10 1 0\nc s%d 0\n", i, i }' >many.gclog
  run "$gcsnap" summary --json --top 2 many.gclog
  expect_rc 0 "summary of 1003 sections"
  json_check out.txt "summary --json lists 1000 sections of 1003" '
assert len(d["sections"]) == 1000 and d["sections_omitted"] == 3, (len(d["sections"]), d.get("sections_omitted"))
assert d["objects"] == 3009 and d["types"] == 3 and d["bytes"] == 1003 * 48
assert [r["type"] for r in d["by_type"]] == ["C", "B"]
assert d["by_type_omitted"] == {"types": 1, "count": 1003, "bytes": 1003 * 8}, d["by_type_omitted"]
s = d["sections"][999]
assert s["name"] == "s1000" and s["types"] == 3 and s["objects"] == 3
assert [(r["type"], r["count"], r["bytes"]) for r in s["by_type"]] == [("C", 1, 24), ("B", 1, 16)]
assert s["by_type_omitted"] == {"types": 1, "count": 1, "bytes": 8}, s["by_type_omitted"]'
  run "$gcsnap" summary --top 2 many.gclog
  expect_line out.txt "File: many.gclog (1003 sections)" "summary of 1003 sections: title"
  expect_count out.txt '^Section [0-9]+: ' 1000 "summary of 1003 sections lists 1000"
  expect_line out.txt "(3 more sections, in the total only: at most 1000 are listed)" \
    "summary of 1003 sections says what it leaves out"
  expect_line out.txt "Total of 1003 sections" "summary of 1003 sections: total"
  expect_regex out.txt '^ +1 +8 +16\.7%  \(1 more type\)$' "a section's folded type row"

  run "$gcsnap" summary --json - <small.gclog
  expect_rc 0 "summary of standard input"
  json_check out.txt "summary of standard input" "assert d['file'] == '<stdin>'
$SUMMARY_CHECKS"
}

# ---- convert ----------------------------------------------------------

suite_convert() {
  run "$gcsnap" convert small.gclog out.gclog
  expect_rc 0 "convert canonical input"
  expect_same out.gclog small.gclog "canonical input converts to the same bytes"
  expect_empty out.txt "convert to a file prints nothing"
  no_temp_files "convert success"

  run "$gcsnap" convert small.gclog -o out2.gclog
  expect_rc 0 "convert with -o OUT, as export and report take it"
  expect_same out2.gclog small.gclog "convert -o writes the same bytes"
  run "$gcsnap" convert small.gclog out3.gclog -o out4.gclog
  expect_rc 2 "convert with OUT given twice"
  expect_absent out3.gclog "OUT given twice writes nothing"
  expect_absent out4.gclog "OUT given twice writes nothing at -o either"
  run "$gcsnap" convert old.gclog old.out.gclog
  expect_rc 0 "convert the first version"
  expect_same old.out.gclog old.expected.gclog "first version is normalized"

  "$gcsnap" convert - - <small.gclog >piped.gclog
  rc=$?
  expect_rc 0 "convert stdin to stdout"
  expect_same piped.gclog small.gclog "convert stdin to stdout bytes"

  run "$gcsnap" convert small.gclog small.gclog.zst
  expect_rc 0 "convert to .zst"
  if [ "$(od -An -tx1 -N4 small.gclog.zst | tr -d ' ')" = "28b52ffd" ]; then pass; else
    fail ".zst output starts with the zstd magic"; fi
  run "$gcsnap" validate small.gclog.zst
  expect_rc 0 "validate .zst"
  expect_line out.txt "small.gclog.zst: valid (3 warnings)" "validate .zst verdict"
  expect_regex out.txt '^small\.gclog\.zst:10: warning \[dangling-reference\]' "line numbers in .zst"
  run "$gcsnap" summary --json small.gclog.zst
  expect_rc 0 "summary .zst"
  json_check out.txt "summary .zst numbers" "$SUMMARY_CHECKS"
  run "$gcsnap" summary --json - <small.gclog.zst
  json_check out.txt "summary of .zst on standard input" "$SUMMARY_CHECKS"
  run "$gcsnap" convert small.gclog.zst back.gclog
  expect_rc 0 "convert .zst back"
  expect_same back.gclog small.gclog ".zst round trip"

  expect_cut_refused small.gclog.zst 'zstd'
  printf '\x28\xb5\x2f\xfdnot zstd at all' >garbage.gclog.zst
  run "$gcsnap" validate garbage.gclog.zst
  expect_rc 2 "validate bad zstd data"

  echo "previous content" >kept.gclog
  run "$gcsnap" convert invalid.gclog kept.gclog
  expect_rc 1 "convert an invalid file"
  expect_regex err.txt '^invalid\.gclog:3: error \[not-hex\]: .+' "convert names the error"
  expect_line kept.gclog "previous content" "convert failure keeps the old OUT"
  run "$gcsnap" convert invalid.gclog new.gclog
  expect_absent new.gclog "convert failure creates no OUT"
  run "$gcsnap" convert invalid.gclog new.gclog.zst
  expect_rc 1 "convert an invalid file to .zst"
  expect_absent new.gclog.zst "convert failure creates no .zst"
  head -n 9 small.gclog >unterminated.gclog
  run "$gcsnap" convert unterminated.gclog new.gclog
  expect_rc 1 "convert a file that ends inside a section"
  expect_regex err.txt '\[unterminated\]' "unterminated section is named"
  expect_absent new.gclog "convert of an unterminated file creates no OUT"
  no_temp_files "convert failures"

  run "$gcsnap" convert missing.gclog new.gclog
  expect_rc 2 "convert a missing file"
  expect_absent new.gclog "convert of a missing file creates no OUT"
  run "$gcsnap" convert small.gclog no-such-dir/new.gclog
  expect_rc 2 "convert into a missing directory"
  mkdir -p adir
  run "$gcsnap" convert small.gclog adir
  expect_rc 2 "convert onto a directory"
  expect_regex err.txt "'adir' is a folder" "convert onto a directory: the message"
  no_temp_files "convert onto a directory"

  # A device or pipe is written in place: a rename would put a file there.
  run "$gcsnap" convert small.gclog -o /dev/null
  expect_rc 0 "convert to the null device"
  if [ -c /dev/null ]; then pass; else fail "convert -o /dev/null replaced the device"; fi
  rm -f pipe && mkfifo pipe
  timeout 10 cat pipe >from-pipe.gclog &
  run timeout 10 "$gcsnap" convert small.gclog -o pipe
  wait $!
  expect_rc 0 "convert into a FIFO"
  if [ -p pipe ]; then pass; else fail "convert -o FIFO replaced the FIFO"; fi
  expect_same from-pipe.gclog small.gclog "the FIFO's reader gets the records"
  no_temp_files "convert into a FIFO"
}

# The first 40 bytes of the compressed FILE: validate, summary and convert
# fail (exit 2) with a message matching REGEX, and convert writes nothing.
expect_cut_refused() {
  local cut="cut.${1#*.}" c
  head -c 40 "$1" >"$cut"
  for c in validate summary convert; do
    if [ $c = convert ]; then run "$gcsnap" convert "$cut" t.gclog; else run "$gcsnap" $c "$cut"; fi
    expect_rc 2 "$c of a truncated $cut"
    expect_regex err.txt "$2" "$c of a truncated $cut: the message"
  done
  expect_absent t.gclog "convert of a truncated $cut writes nothing"
}

# ---- interoperability with the zstd tool -------------------------------

suite_zstd_tool() {
  if ! command -v zstd >/dev/null 2>&1; then skip "zstd command not installed"; return; fi
  zstd -q -c small.gclog >tool.gclog.zst
  run "$gcsnap" validate tool.gclog.zst
  expect_rc 0 "validate a file compressed by zstd"
  expect_line out.txt "tool.gclog.zst: valid (3 warnings)" "zstd-compressed verdict"
  cat tool.gclog.zst tool.gclog.zst >frames.gclog.zst
  run "$gcsnap" summary --json frames.gclog.zst
  expect_rc 0 "summary of two concatenated frames"
  json_check out.txt "two frames: four sections" 'assert len(d["sections"]) == 4 and d["objects"] == 20'
  "$gcsnap" convert small.gclog ours.gclog.zst
  zstd -q -d -c ours.gclog.zst >ours.gclog
  expect_same ours.gclog small.gclog "zstd decompresses gcsnap's output"
}

# ---- gzip-compressed input ----------------------------------------------

suite_gzip() {
  if ! command -v gzip >/dev/null 2>&1; then skip "gzip command not installed"; return; fi
  gzip -c small.gclog >small.gclog.gz
  run "$gcsnap" validate small.gclog.gz
  expect_rc 0 "validate a file compressed by gzip"
  expect_line out.txt "small.gclog.gz: valid (3 warnings)" "gzip-compressed verdict"
  expect_regex out.txt '^small\.gclog\.gz:10: warning \[dangling-reference\]' "line numbers in .gz"
  run "$gcsnap" summary --json - <small.gclog.gz
  expect_rc 0 "summary of .gz on standard input"
  json_check out.txt "summary .gz numbers" "$SUMMARY_CHECKS"
  # Members back to back, cut inside a line, as the JDK writes a dump.
  head -c 100 small.gclog | gzip -c >members.gclog.gz
  tail -c +101 small.gclog | gzip -c >>members.gclog.gz
  run "$gcsnap" convert members.gclog.gz back.gclog
  expect_rc 0 "convert two gzip members"
  expect_same back.gclog small.gclog "two members give the whole text"

  expect_cut_refused small.gclog.gz 'bad gzip data in the member at byte 0: the input ends inside a member'
  { cat small.gclog.gz; printf 'not gzip'; } >tail.gclog.gz
  run "$gcsnap" summary tail.gclog.gz
  expect_rc 2 "summary of a .gz with bytes after its member"
  expect_regex err.txt "bad gzip data in the member at byte $(wc -c <small.gclog.gz | tr -d ' '): " "the stray bytes' offset"
  printf '\x1f\x8bnot deflate' >garbage.gclog.gz
  run "$gcsnap" validate garbage.gclog.gz
  expect_rc 2 "validate bad gzip data"
  expect_regex err.txt 'bad gzip data in the member at byte 0: ' "bad gzip data message"
}

# ---- progress ---------------------------------------------------------

suite_progress() {
  if [ -z "$python" ]; then skip "no python3 to generate a large input"; return; fi
  if ! command -v script >/dev/null 2>&1; then skip "no script(1) to give stderr a terminal"; return; fi
  "$python" - <<'PY'
with open("big.gclog", "w") as f:
    f.write("a 2 big.exe 0\nt 1 T\n")
    n = 0
    while f.tell() < 66 << 20:
        f.write("".join("o %x 1 18\n" % i for i in range(n, n + 100000)))
        n += 100000
    f.write("r 0 1 0\nc big.exe 0\n")
PY
  run "$gcsnap" validate big.gclog
  expect_rc 0 "validate a large file"
  expect_empty err.txt "no progress when stderr is not a terminal"
  script -qec "$gcsnap validate big.gclog" typescript.txt >/dev/null 2>&1
  expect_regex typescript.txt 'big\.gclog: +[0-9]+%' "progress shown on a terminal"
  if grep -q $'\033\\[K' typescript.txt; then pass; else fail "progress line erased at the end"; fi
  expect_regex typescript.txt 'big\.gclog: valid \(0 warnings\)' "verdict after the progress"
  rm -f big.gclog
}

# ---- real heap --------------------------------------------------------

suite_wpfapp() {
  if [ -z "$fixture" ] || [ ! -r "$fixture" ]; then
    skip "fixture wpfapp.gclog not available (GS_SHARED_DIR)"; return
  fi
  run "$gcsnap" summary --json --top 0 "$fixture"
  expect_rc 0 "summary of wpfapp.gclog"
  json_check out.txt "wpfapp.gclog numbers from its README" '
assert d["objects"] == 138204, d["objects"]
assert d["references"] == 230761, d["references"]
assert d["roots"] == 2185, d["roots"]
assert sum(r["count"] for r in d["by_type"]) == d["objects"]
assert sum(r["bytes"] for r in d["by_type"]) == d["bytes"]
assert 120000 < d["unreachable"] < d["objects"], d["unreachable"]'
  run "$gcsnap" validate "$fixture"
  expect_rc 0 "wpfapp.gclog is valid"
  run "$gcsnap" convert "$fixture" wpfapp.gclog.zst
  expect_rc 0 "convert wpfapp.gclog to .zst"
  run "$gcsnap" convert wpfapp.gclog.zst wpfapp.gclog
  expect_same wpfapp.gclog "$fixture" "wpfapp.gclog survives a .zst round trip"
}

case "$suite" in
  help) suite_help ;;
  validate) suite_validate ;;
  summary) suite_summary ;;
  convert) suite_convert ;;
  zstd_tool) suite_zstd_tool ;;
  gzip) suite_gzip ;;
  progress) suite_progress ;;
  wpfapp) suite_wpfapp ;;
  dominators) suite_dominators ;;
  diff) suite_diff ;;
  paths) suite_paths ;;
  export) suite_export ;;
  trend) suite_trend ;;
  report) suite_report ;;
  *) echo "unknown suite '$suite'"; exit 2 ;;
esac

echo "$suite: $checks passed, $failures failed, $skips skipped"
if [ "$failures" -gt 0 ]; then exit 1; fi
if [ "$skips" -gt 0 ]; then exit 77; fi
exit 0
