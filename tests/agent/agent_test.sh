#!/usr/bin/env bash
# agent_test.sh - end-to-end tests of gcsnap-agent.
#
# usage: agent_test.sh SUITE AGENT GCSNAP DATA_DIR FIXTURE_DIR WORK_DIR [PYTHON] [SANITIZED]
#
# Runs one suite (usage, validate, determinism, counts, expected, roundtrip,
# atomic, readonly, stable_ids, json, rss, demo, gens) against the built agent.
# GCSNAP (the host tool, for validate and summary) and PYTHON (to read JSON)
# may be empty; checks that need them are then skipped. SANITIZED is 1 in
# ASan builds and under an emulator, whose memory figures mean nothing.
# Exit 0 when every check passed, 1 when one failed, 77 when a check could
# not run and none failed, so that ctest reports a skip rather than a pass.
set -u

suite=$1 agent=$2 gcsnap=$3 data=$4 fixtures=$5 work=$6 python=${7:-} sanitized=${8:-0}
failures=0 skips=0 checks=0

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

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

# Messages of a Windows agent end in CR LF; the regexes speak of lines.
expect_regex() {
  if tr -d '\r' <"$1" | grep -Eq -- "$2"; then pass; else
    fail "$3: no line matching /$2/ in $1"; sed 's/^/  | /' "$1" | head -10
  fi
}

expect_empty() {
  if [ ! -s "$1" ]; then pass; else fail "$2: $1 is not empty"; sed 's/^/  | /' "$1" | head -5; fi
}

expect_same() {
  if cmp -s "$1" "$2"; then pass; else
    fail "$3: $1 and $2 differ"; diff "$1" "$2" | head -10 | sed 's/^/  | /'
  fi
}

expect_differ() {
  if cmp -s "$1" "$2"; then fail "$3: $1 and $2 are identical"; else pass; fi
}

expect_absent() {
  if [ ! -e "$1" ]; then pass; else fail "$2: $1 exists"; fi
}

# no_temp_files DIR DESC: the agent left no PATH.tmp.PID behind.
no_temp_files() {
  local left
  left=$(ls -a "$1" | grep -F '.tmp.' || true)
  if [ -z "$left" ]; then pass; else fail "$2: temporary files left in $1: $left"; fi
}

# capture OUT SPEC [ARGS...]: runs the agent into OUT; a failure fails the check.
capture() {
  local out=$1 spec=$2
  shift 2
  run "$agent" --source "$spec" --out "$out" "$@"
  expect_rc 0 "capture $spec $*"
}

have_gcsnap() {
  [ -n "$gcsnap" ] && [ -x "$gcsnap" ] && return 0
  skip "$1 (no gcsnap host tool in this build)"
  return 1
}

# strict_valid FILE DESC: gcsnap validate --strict finds no error and no warning.
strict_valid() {
  have_gcsnap "$2" || return
  "$gcsnap" validate --strict "$1" >val.txt 2>&1
  if [ $? -eq 0 ] && grep -Fq "valid (0 warnings)" val.txt; then pass; else
    fail "$2: $1 does not validate cleanly"; sed 's/^/  | /' val.txt | head -10
  fi
}

# json_check FILE DESC PYTHON-STATEMENTS: the statements run with the parsed
# JSON in d; any failed assert fails the check.
json_check() {
  local file=$1 desc=$2 code=$3
  if [ -z "$python" ]; then skip "$desc (no python3 to read JSON)"; return; fi
  if "$python" - "$file" <<PY >py.txt 2>&1
import json, sys
with open(sys.argv[1]) as f:
    d = json.load(f)
$code
PY
  then pass; else fail "$desc"; sed 's/^/  | /' py.txt | tail -5; fi
}

# summary FILE: gcsnap summary --json FILE into summary.json.
summary() {
  "$gcsnap" summary --json "$1" >summary.json 2>summary.err ||
    fail "gcsnap summary $1: $(cat summary.err)"
}

# ---- usage ------------------------------------------------------------

suite_usage() {
  local flag bad knob
  for flag in --help -h; do
    run "$agent" $flag
    expect_rc 0 "$flag"
    expect_regex out.txt '^usage: gcsnap-agent --source SPEC --out FILE' "$flag prints usage"
    expect_empty err.txt "$flag stderr"
  done
  # --help documents every knob of every source built in
  run "$agent" --help
  for knob in objects= types= seed= sections= garbage= large= roots= kinds= pinned= \
              weak= interior= degree= degree-dist= cycles= file:PATH --stable-ids --clock \
              --json 'Exit status'; do
    expect_regex out.txt -- "$knob" "--help mentions $knob"
  done
  if "$agent" --help | grep -q '^  demo'; then
    expect_regex out.txt 'objects=N' "--help documents the demo knobs"
  fi
  run "$agent" --version
  expect_rc 0 "--version"
  expect_regex out.txt '^gcsnap-agent [0-9]+\.[0-9]+\.[0-9]+$' "--version output"

  # each: exit 2, a message naming the program, no output file
  # each but the first four is run with --out x.gclog
  for bad in "" "--out x.gclog" "--source mock" "--source mock --out" \
             "--frobnicate --source mock" "--source nosuch" "--source mock:objects=-5" \
             "--source mock:objects=12x" "--source mock:types=1" "--source mock:garbage=101" \
             "--source mock:large=abc" "--source mock:large=0.00001" \
             "--source mock:sections=0" "--source mock:kinds=1/2/3" \
             "--source mock:kinds=0/0/0/0/0/0" "--source mock:pinned=60,weak=50" \
             "--source mock:degree=lots" "--source mock:degree-dist=normal" \
             "--source mock:cycles=2" "--source mock:frob=1" "--source mock:objects" \
             "--source mock --clock soon" "--source file:" \
             "--source file:data.gclog --stable-ids"; do
    cp "$data/mock-small.gclog" data.gclog
    case $bad in ""|"--out x.gclog"|"--source mock"|"--source mock --out") ;;
                 *) bad="$bad --out x.gclog" ;; esac
    run "$agent" $bad
    expect_rc 2 "gcsnap-agent $bad"
    expect_regex err.txt '^gcsnap-agent: ' "gcsnap-agent $bad: message"
    expect_absent x.gclog "gcsnap-agent $bad: no output"
  done
  run "$agent" --source mock:types=1 --out x.gclog
  expect_regex err.txt "mock: types: out of range 2-1000000: '1'" \
               "a bad knob is named with its value"
  run "$agent" --source file:data.gclog --stable-ids --out x.gclog
  expect_regex err.txt "stable-ids.*file" "--stable-ids refusal names the source"
  no_temp_files . "usage errors"
}

# ---- every dump validates ---------------------------------------------

suite_validate() {
  local spec i=0
  for spec in "mock" "mock:objects=20000,sections=3,garbage=12.5,large=1,seed=9" \
              "mock:objects=5000,degree=3" "mock:objects=5000,degree=2.5,degree-dist=uniform" \
              "mock:objects=5000,degree=1.25,degree-dist=fixed" "mock:objects=5000,cycles=0" \
              "mock:objects=5000,kinds=0/0/0/1/0/0,pinned=10,weak=20,interior=5" \
              "mock:objects=3000,garbage=100" "mock:objects=3000,garbage=0,large=50" \
              "mock:objects=0" "mock:objects=7,types=2" "mock:objects=4000,types=5000" \
              "mock:objects=5000,roots=100,kinds=1/1/1/1/1/1"; do
    i=$((i + 1))
    capture "v$i.gclog" "$spec"
    strict_valid "v$i.gclog" "$spec"
  done
  capture stable.gclog mock:objects=5000,sections=2 --stable-ids
  strict_valid stable.gclog "mock --stable-ids"
  run "$agent" --source mock:objects=5000 --out -
  expect_rc 0 "capture to standard output"
  cp out.txt stdout.gclog
  strict_valid stdout.gclog "mock to standard output"
  capture replay.gclog "file:v2.gclog"
  strict_valid replay.gclog "file source"
}

# ---- determinism ------------------------------------------------------

suite_determinism() {
  local knobs=objects=20000,garbage=12.5,large=1,sections=3
  capture a1.gclog "mock:$knobs,seed=7" --clock 5000
  capture a2.gclog "mock:$knobs,seed=7" --clock 5000
  capture b.gclog "mock:$knobs,seed=8" --clock 5000
  capture c.gclog "mock:$knobs,seed=7,types=300" --clock 5000
  capture d.gclog "mock:$knobs,seed=7,degree=2" --clock 5000
  expect_same a1.gclog a2.gclog "same seed and knobs"
  expect_differ a1.gclog b.gclog "another seed"
  expect_differ a1.gclog c.gclog "another type count"
  expect_differ a1.gclog d.gclog "another degree"
  run "$agent" --source "mock:$knobs,seed=7" --clock 5000 --out -
  cp out.txt stdout.gclog
  expect_same a1.gclog stdout.gclog "standard output gives the same bytes as a file"
  # without --clock only the a and c records (the time) may differ
  capture t.gclog "mock:$knobs,seed=7"
  grep -v '^[ac] ' a1.gclog >a1.body
  grep -v '^[ac] ' t.gclog >t.body
  expect_same a1.body t.body "the clock changes only a and c records"
  if [ "$(grep -c '^[ac] ' t.gclog)" -eq 6 ]; then pass; else
    fail "three sections, six a/c records"; fi
}

# ---- counts match the knobs -------------------------------------------

suite_counts() {
  have_gcsnap "counts" || return
  # 20000 objects in chunks of 1024 whose last round(1024 * 10%) = 102 are
  # garbage: 19 full chunks, and the last 544 objects are all live
  capture c1.gclog mock:objects=20000,types=300,garbage=10,seed=3
  summary c1.gclog
  json_check summary.json "objects, types, garbage of mock:objects=20000,types=300" '
assert d["objects"] == 20000, d["objects"]
assert d["types"] == 300, d["types"]
assert d["unreachable"] == 19 * 102, d["unreachable"]
assert d["dangling_references"] == 0 and d["dangling_roots"] == 0
r = d["roots"]
assert 250 <= r <= 450, r
for k in ("internal", "local", "finalizer", "handle", "static", "runtime"):
    assert d["roots_by_kind"][k] > 0, k
for f in ("none", "pinned", "weak", "interior"):
    assert d["roots_by_flag"][f] > 0, f'

  # three sections of 4000, chunks of 1024 with 256 garbage (25%): per
  # section 3 * 256 garbage and a last chunk of 928 with 768 live
  capture c2.gclog mock:objects=12000,sections=3,types=50,garbage=25
  summary c2.gclog
  json_check summary.json "sections, per-section garbage" '
s = d["sections"]
assert len(s) == 3, len(s)
assert [x["name"] for x in s] == ["Contoso.Inventory.exe", "Contoso Plugin Host 1",
                                  "Contoso Plugin Host 2"], s
for x in s:
    assert x["objects"] == 4000 and x["types"] == 50, x
    assert x["unreachable"] == 3 * 256 + 928 - 768, x["unreachable"]
assert d["objects"] == 12000
assert d["types"] == 50'

  # only handle roots, one in ten live objects, a third of them weak
  capture c3.gclog mock:objects=30000,garbage=0,roots=10,kinds=0/0/0/1/0/0,weak=33,seed=4
  summary c3.gclog
  json_check summary.json "roots by kind and flag" '
k = d["roots_by_kind"]
assert k["handle"] == d["roots"], k
f = d["roots_by_flag"]
assert f["pinned"] == 0 and f["interior"] == 0, f
share = d["roots"] / 30000
assert 0.10 <= share <= 0.12, share
weak = f["weak"] / d["roots"]
assert 0.30 <= weak <= 0.36, weak
assert d["unreachable"] == 0'

  # mean out-degree follows degree=MEAN for each spread
  local dist
  for dist in geometric uniform fixed; do
    capture "c4-$dist.gclog" "mock:objects=50000,degree=4.5,degree-dist=$dist,large=0"
    summary "c4-$dist.gclog"
    json_check summary.json "degree=4.5 with degree-dist=$dist" '
mean = d["references"] / d["objects"]
assert 4.4 <= mean <= 4.6, mean'
  done

  # large=PCT: objects of 85000 (0x14c08) bytes or more; hex compared as
  # text, longer first, so that any awk will do
  capture c5.gclog mock:objects=20000,large=5,seed=2
  local large
  large=$(awk '$1 == "o" && (length($4) > 5 || (length($4) == 5 && ($4 "") >= "14c08")) { n++ }
               END { print n + 0 }' c5.gclog)
  if [ "$large" -ge 900 ] && [ "$large" -le 1100 ]; then pass; else
    fail "large=5 gave $large large objects of 20000"
  fi

  # cycles=0: every reference goes to a later object
  capture c6.gclog mock:objects=20000,cycles=0,degree=3
  if awk '$1 == "o" { for (i = 5; i <= NF; i++)
            if (length($i) < length($2) || (length($i) == length($2) && ($i "") <= ($2 ""))) bad++ }
          END { exit bad > 0 }' c6.gclog; then
    pass; else fail "cycles=0 has a reference to an earlier object"; fi
  summary c6.gclog
  json_check summary.json "cycles=0 keeps every live object reachable" '
assert d["unreachable"] == 19 * 102, d["unreachable"]'
}

# ---- a small heap, exactly ----------------------------------------------

suite_expected() {
  capture small.gclog mock:objects=12,types=4,garbage=25,large=0,kinds=0/0/0/1/0/0 --clock 1000
  expect_same "$data/mock-small.gclog" small.gclog "mock-small.gclog"
  capture stable.gclog \
          mock:objects=10,types=2,sections=2,garbage=20,large=0,kinds=0/0/0/1/0/0,roots=0,seed=3 \
          --stable-ids --clock 0x2710
  expect_same "$data/mock-stable.gclog" stable.gclog "mock-stable.gclog"
  strict_valid small.gclog "mock-small.gclog"
  strict_valid stable.gclog "mock-stable.gclog"
}

# ---- file source --------------------------------------------------------

suite_roundtrip() {
  local f
  for f in canonical/generated.gclog canonical/seed000-canonical.gclog; do
    capture rt.gclog "file:$fixtures/$f"
    expect_same "$fixtures/$f" rt.gclog "file source re-emits $f"
  done
  # the first version of the format comes out in the canonical form
  capture rt.gclog "file:$fixtures/seeds/seed000-example.gclog"
  expect_same "$fixtures/canonical/seed000-canonical.gclog" rt.gclog "seed000 example, canonical"
  # a mock dump survives a replay byte for byte
  capture m.gclog mock:objects=30000,sections=2 --clock 77
  capture m2.gclog file:m.gclog
  expect_same m.gclog m2.gclog "mock dump replayed"

  # malformed input: exit 1, FILE:LINE and the reason, no output
  printf 'a 2 app 0\nt 1 T\no 10 1 zz\nc app 0\n' >bad.gclog
  run "$agent" --source file:bad.gclog --out out.gclog
  expect_rc 1 "malformed input"
  expect_regex err.txt '^gcsnap-agent: bad\.gclog:3: .*\[not-hex\]' "malformed input: FILE:LINE"
  expect_absent out.gclog "malformed input: no output"
  printf 'a 2 app 0\nt 1 T\n' >open.gclog
  run "$agent" --source file:open.gclog --out out.gclog
  expect_rc 1 "unterminated input"
  expect_regex err.txt "open\.gclog: input ends inside section 'app' of line 1" \
               "unterminated input: message"
  printf 'a 2 app 0\nc other 0\n' >names.gclog
  run "$agent" --source file:names.gclog --out out.gclog
  expect_rc 1 "section names differ"
  expect_regex err.txt "names\.gclog:2: section end names 'other'" "section names differ: message"
  printf 'o 1 1 8\n' >outside.gclog
  run "$agent" --source file:outside.gclog --out out.gclog
  expect_rc 1 "record outside a section"
  expect_regex err.txt 'outside\.gclog:1: record outside a section' \
               "record outside a section: message"
  : >empty.gclog
  run "$agent" --source file:empty.gclog --out out.gclog
  expect_rc 1 "empty input"
  run "$agent" --source file:missing.gclog --out out.gclog
  expect_rc 1 "missing input"
  expect_regex err.txt "cannot open 'missing\.gclog'" "missing input: message"
  expect_absent out.gclog "failed replays: no output"
  no_temp_files . "failed replays"
}

# ---- atomic output ------------------------------------------------------

suite_atomic() {
  mkdir out
  echo "the previous dump" >out/keep.gclog
  cp out/keep.gclog keep.orig

  # a write that fails half way: the file size limit (EFBIG, the signal ignored)
  local limited="trap '' XFSZ; ulimit -f 64; exec \"\$0\" --source mock:objects=100000 --out"
  run bash -c "$limited out/big.gclog" "$agent"
  expect_rc 3 "write beyond the file size limit"
  expect_regex err.txt "^gcsnap-agent: cannot write 'out/big\.gclog\.tmp\.[0-9]+'" \
               "write failure: message"
  expect_absent out/big.gclog "write failure: no output"
  run bash -c "$limited out/keep.gclog" "$agent"
  expect_rc 3 "failed write over an existing dump"
  expect_same keep.orig out/keep.gclog "failed write keeps the previous dump"

  # a source that fails half way
  { echo "a 2 app 0"; echo "t 1 T"; for i in $(seq 1 5000); do printf 'o %x 1 8\n' "$i"; done
    echo "o 1 zz 8"; echo "c app 0"; } >bad.gclog
  run "$agent" --source file:bad.gclog --out out/keep.gclog
  expect_rc 1 "failed capture over an existing dump"
  expect_same keep.orig out/keep.gclog "failed capture keeps the previous dump"

  # a device that refuses the bytes
  if [ -w /dev/full ]; then
    run "$agent" --source mock:objects=1000 --out /dev/full
    expect_rc 3 "writing to /dev/full"
    expect_regex err.txt "^gcsnap-agent: cannot write '/dev/full': " "/dev/full: message"
    no_temp_files /dev "/dev/full"
  else
    skip "/dev/full not available"
  fi
  # a folder that does not exist, and a folder as output
  run "$agent" --source mock:objects=1000 --out no/such/dir/x.gclog
  expect_rc 3 "output in a missing folder"
  expect_regex err.txt "cannot create 'no/such/dir/x\.gclog\.tmp\.[0-9]+'" "missing folder: message"
  run "$agent" --source mock:objects=1000 --out out
  expect_rc 3 "a folder as output"
  # the null device is written directly, never replaced
  run "$agent" --source mock:objects=1000 --out /dev/null
  expect_rc 0 "writing to /dev/null"
  if [ -c /dev/null ]; then pass; else fail "/dev/null is no longer a device"; fi
  no_temp_files out "failures"
  no_temp_files . "failures"

  # an interrupt half way: the temporary file goes with the process. Wine
  # turns no POSIX signal into the console event a Windows agent handles.
  if [ "${GS_AGENT_WINDOWS:-0}" = 1 ]; then
    skip "interrupted capture: no console events under Wine"
  else
    "$agent" --source mock:objects=50000000 --out out/int.gclog 2>int.err &
    local pid=$! waited=0 tmp
    while [ "$waited" -lt 100 ]; do
      tmp=$(ls out | grep -F 'int.gclog.tmp.' || true)
      [ -n "$tmp" ] && [ "$(wc -c <"out/$tmp")" -gt 1000000 ] && break
      sleep 0.1
      waited=$((waited + 1))
    done
    kill -TERM "$pid" 2>/dev/null
    wait "$pid"
    rc=$?
    if [ "$rc" -eq 143 ]; then pass; else fail "interrupted capture: exit status $rc, expected 143"; fi
    expect_absent out/int.gclog "interrupted capture: no output"
    no_temp_files out "interrupted capture"
  fi

  # a success replaces the previous dump in one step
  capture out/keep.gclog mock:objects=1000
  expect_differ keep.orig out/keep.gclog "a capture replaces the previous dump"
  strict_valid out/keep.gclog "the replacing dump"
}

# A read-only folder refuses the temporary file. Root writes anyway.
suite_readonly() {
  if [ "$(id -u)" -eq 0 ]; then skip "read-only folder (running as root)"; return; fi
  mkdir ro
  chmod 555 ro
  run "$agent" --source mock:objects=1000 --out ro/x.gclog
  expect_rc 3 "output in a read-only folder"
  expect_regex err.txt "cannot create 'ro/x\.gclog\.tmp\.[0-9]+': " "read-only folder: message"
  expect_absent ro/x.gclog "read-only folder: no output"
  chmod 755 ro
}

# ---- stable IDs -----------------------------------------------------------

suite_stable_ids() {
  capture s.gclog mock:objects=20000,sections=3 --stable-ids --clock 9
  capture p.gclog mock:objects=20000,sections=3 --clock 9
  if [ "$(grep -c '^[ac] .* \[stable-ids\] 9$' s.gclog)" -eq 6 ]; then pass; else
    fail "--stable-ids marks every a and c record"; grep '^[ac] ' s.gclog | head -6
  fi
  if grep -q 'stable-ids' p.gclog; then fail "no mark without --stable-ids"; else pass; fi
  grep -v '^[ac] ' s.gclog >s.body
  grep -v '^[ac] ' p.gclog >p.body
  expect_same s.body p.body "--stable-ids changes only the section names"
  # the same mock object has the same ID in two captures
  capture s2.gclog mock:objects=20000,sections=3 --stable-ids
  grep '^o ' s.gclog >s.objects
  grep '^o ' s2.gclog >s2.objects
  expect_same s.objects s2.objects "two captures, same IDs"
  strict_valid s.gclog "--stable-ids dump"
  # a replayed marked dump keeps its mark
  capture r.gclog file:s.gclog
  expect_same s.gclog r.gclog "a marked dump replayed"
}

# ---- statistics -------------------------------------------------------------

suite_json() {
  run "$agent" --source mock:objects=10000,sections=2 --out j.gclog --json
  expect_rc 0 "--json"
  cp out.txt j.json
  expect_empty err.txt "--json with a file: nothing on stderr"
  json_check j.json "--json keys and counts" '
assert d["source"] == "mock"
assert d["objects"] == 10000 and d["sections"] == 2
import os
assert d["bytes"] == os.path.getsize("j.gclog"), d["bytes"]
for k in ("references", "roots", "types", "generations", "seconds", "objects_per_second",
          "pause_us", "peak_rss_kb"):
    assert k in d, k
assert d["generations"] == 6 and d["pause_us"] == 0
assert d["types"] == 2 * 100'
  if [ "$(wc -l <j.json)" -eq 1 ]; then pass; else fail "--json prints one line"; fi
  run "$agent" --source mock:objects=1000 --out - --json
  expect_rc 0 "--json with standard output"
  cp err.txt j2.json
  json_check j2.json "--json goes to stderr when the dump is on stdout" '
assert d["objects"] == 1000'
  expect_regex out.txt '^a 2 ' "the dump is on stdout"
}

# ---- generation ranges beside the dump ------------------------------------------

suite_gens() {
  run "$agent" --source mock:objects=5000,sections=2 --out g.gclog --json
  expect_rc 0 "a dump with generation ranges"
  cp out.txt g.json
  json_check g.gclog.gens.json "--out writes FILE.gens.json, every range the walk counted" '
with open("g.json") as f:
    walked = json.load(f)
assert d["format"] == "gcsnap-generations/1" and d["dropped"] == 0, d
assert len(d["ranges"]) == walked["generations"] == 6, (len(d["ranges"]), walked)
assert sorted({r["section"] for r in d["ranges"]}) == [0, 1], d
assert all(0 <= r["generation"] <= 3 and int(r["start"], 16) > 0 and r["used"] <= r["reserved"] for r in d["ranges"]), d'
  no_temp_files . "no temporary side file left"
  strict_valid g.gclog "the dump beside its side file validates cleanly"
  if have_gcsnap "summary by generation"; then
    "$gcsnap" summary --json g.gclog >s.json 2>err.txt
    json_check s.json "gcsnap summary places every object in a range" '
g = {x["generation"]: x["objects"] for x in d["generations"]}
assert g["unknown"] == 0 and sum(g.values()) == d["objects"] == 5000, g'
  fi
  # A dump without ranges over g.gclog: the old side file goes with the old dump.
  run "$agent" --source file:g.gclog --out g.gclog
  expect_rc 0 "a dump without ranges over one with them"
  expect_absent g.gclog.gens.json "the side file of the previous dump is removed"
  run "$agent" --source mock:objects=100 --out -
  expect_rc 0 "standard output"
  expect_absent ./-.gens.json "no side file for standard output"
  # A side file that cannot be written is an error, named.
  mkdir -p h.gclog.gens.json/x
  run "$agent" --source mock:objects=100 --out h.gclog
  expect_rc 3 "a side file that cannot be written"
  expect_regex err.txt "h\.gclog\.gens\.json" "the message names the side file"
  no_temp_files . "no temporary file left after the failure"
}

# ---- walk memory ---------------------------------------------------------------

# Peak RSS of a 1M-object walk; the walk streams, so it stays small.
RSS_BOUND_KB=16384

suite_rss() {
  if [ "$sanitized" = 1 ]; then skip "peak RSS under sanitizers or an emulator"; return; fi
  run "$agent" --source mock:objects=1000000 --out /dev/null --json
  expect_rc 0 "1M-object walk"
  cp out.txt rss.json
  json_check rss.json "1M-object walk below $RSS_BOUND_KB KB peak RSS" "
rss = d['peak_rss_kb']
print('peak_rss_kb', rss)
assert 0 < rss < $RSS_BOUND_KB, rss"
}

# ---- demo source --------------------------------------------------------------

suite_demo() {
  if ! "$agent" --help | grep -q '^  demo'; then skip "no demo source in this build"; return; fi
  capture d.gclog demo:objects=20000
  strict_valid d.gclog "demo source"
  capture ds.gclog demo:objects=20000 --stable-ids
  strict_valid ds.gclog "demo source with --stable-ids"
  if grep -q '^a .* \[stable-ids\] [0-9a-f]*$' ds.gclog; then pass; else
    fail "demo --stable-ids marks its sections"; fi
  run "$agent" --source demo:objects=20000 --out /dev/null --json
  expect_rc 0 "demo --json"
  cp out.txt demo.json
  json_check demo.json "demo reports its pause" '
assert d["source"] == "demo"
assert d["pause_us"] > 0, d["pause_us"]
assert d["objects"] > 0, d["objects"]'
}

case $suite in
  usage|validate|determinism|counts|expected|roundtrip|atomic|readonly|stable_ids|json|rss|demo|gens)
    "suite_$suite" ;;
  *) echo "agent_test.sh: unknown suite '$suite'" >&2; exit 2 ;;
esac

echo "$suite: $checks passed, $failures failed, $skips skipped"
if [ "$failures" -gt 0 ]; then exit 1; fi
if [ "$skips" -gt 0 ]; then exit 77; fi
exit 0
