#!/bin/sh
# mono-arm.sh - the gcsnap profiler module in Debian's armel Mono under
# qemu-arm: the cross-built module inside armel mono-sgen, the cross-built
# agent reading it, and a dump that validates strictly and has the
# structure of the host capture of the same program.
#
# usage: mono-arm.sh HOST_BIN AGENT MODULE_DIR APPS_DIR WORK_DIR
#
# HOST_BIN holds the host build's gcsnap and gcsnap-agent, with the host
# module in HOST_BIN/../lib; AGENT runs the cross-built agent (a launcher
# through qemu-arm); MODULE_DIR holds the cross-built module; APPS_DIR the
# C# programs. armel Mono (mono-runtime-sgen, libmono-2.0-1,
# mono-runtime-common) cannot be installed beside the build machine's Mono
# (not Multi-Arch): its packages are fetched with apt-get download into
# WORK_DIR/../armel-mono once and unpacked with dpkg-deb -x; it runs with the
# multiarch libc6:armel (the cross toolchain's C library crashes it at
# start-up), its class libraries are the build machine's (CIL). Roots.exe
# uses no System.Native call, which fails there (libmono-native.so needs
# libgssapi-krb5-2:armel). Exit 0 pass, 1 fail, 77 skipped: no host build,
# no host Mono, or armel Mono cannot be fetched (offline).
set -u

[ $# -eq 5 ] || { echo "usage: mono-arm.sh HOST_BIN AGENT MODULE_DIR APPS_DIR WORK_DIR" >&2; exit 2; }
bin=$1 agent=$2 modules=$3 apps=$4 work=$5
cache=$(dirname "$work")/armel-mono
root=$cache/root

die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

for tool in gcsnap gcsnap-agent; do
  [ -x "$bin/$tool" ] || skip "$bin/$tool not found; configure with -DGS_HOST_BIN=<host build>/bin"
done
[ -f "$bin/../lib/libmono-profiler-gcsnap.so" ] && command -v mono >/dev/null 2>&1 ||
  skip "no host Mono or host module to compare with"
[ -f /usr/lib/mono/4.5/mscorlib.dll ] || skip "no Mono class libraries (mono-runtime)"

# armel Mono, fetched once into the build tree.
if [ ! -x "$root/usr/bin/mono-sgen" ]; then
  rm -rf "$cache"
  mkdir -p "$cache/debs"
  (cd "$cache/debs" && apt-get download mono-runtime-sgen:armel libmono-2.0-1:armel \
     mono-runtime-common:armel >"$cache/download.log" 2>&1) ||
    skip "cannot download armel Mono (offline? see $cache/download.log)"
  for deb in "$cache"/debs/*.deb; do dpkg-deb -x "$deb" "$root" || die "dpkg-deb -x $deb"; done
  ln -s /usr/lib/mono "$root/usr/lib/mono"     # the class libraries (CIL) of the build machine
fi
[ -f /lib/ld-linux.so.3 ] || skip "libc6:armel is not installed (toolchains/install-deps.sh)"

rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1

# capture NAME AGENT MONO-COMMAND...: runs Roots.exe, captures it with stable
# IDs into NAME.gclog.
capture() {
  name=$1 agent_cmd=$2
  shift 2
  sock=$work/$name.sock
  fifo=$work/$name.in
  mkfifo "$fifo"
  "$@" "--profile=gcsnap:socket=$sock,ids=stable" "$apps/Roots.exe" <"$fifo" >"$name.out" 2>"$name.log" &
  app=$!
  exec 3>"$fifo"
  i=0
  until grep -q ready "$name.out" 2>/dev/null; do
    i=$((i + 1))
    [ "$i" -lt 600 ] || { kill "$app"; die "$name: Roots.exe not ready in 120 s: $(tail -3 "$name.log")"; }
    kill -0 "$app" 2>/dev/null || die "$name: Roots.exe exited: $(cat "$name.out") $(tail -3 "$name.log")"
    sleep 0.2
  done
  $agent_cmd --source "mono:$sock" --stable-ids --out "$name.gclog" --json >"$name.json" 2>"$name.agent.log" ||
    { kill "$app"; die "$name: the agent failed: $(cat "$name.agent.log")"; }
  echo >&3
  exec 3>&-
  wait "$app" || die "$name: Roots.exe exited with $?: $(tail -3 "$name.log")"
  "$bin/gcsnap" validate --strict "$name.gclog" | grep -q '(0 warnings)' ||
    die "$name.gclog does not validate strictly"
  echo "$name: $(cat "$name.json")"
}

capture host "$bin/gcsnap-agent" env LD_LIBRARY_PATH="$bin/../lib" mono
capture arm "$agent" env LD_LIBRARY_PATH="$root/usr/lib:$modules" qemu-arm "$root/usr/bin/mono-sgen"

# The program's own objects: same types, counts, sizes' order, roots by kind and flags.
python3 - host.gclog arm.gclog <<'PY' || exit 1
import sys
own = {"Node", "Local", "Pending", "Blocker", "Cycle", "HandleTarget", "WeakTarget", "Registry"}
def shape(path):
    types, objs, roots = {}, {}, []
    for line in open(path):
        f = line.split()
        if f[0] == "t": types[f[1]] = line.rstrip("\n").split(" ", 2)[2]
        elif f[0] == "o": objs[f[1]] = f[2]
        elif f[0] == "r": roots.append((f[1], f[2], f[3]))
    counts, kinds = {}, set()
    for i, t in objs.items():
        if types[t] in own: counts[types[t]] = counts.get(types[t], 0) + 1
    for i, k, fl in roots:
        if i in objs and types[objs[i]] in own: kinds.add((types[objs[i]], k, fl))
    return counts, kinds
h, a = shape(sys.argv[1]), shape(sys.argv[2])
if h != a:
    print("FAIL: the ARM capture differs from the host's:\n host %s\n arm  %s" % (h, a), file=sys.stderr)
    sys.exit(1)
print("same structure: %s; roots %s" % (sorted(h[0].items()), sorted(h[1])))
PY
