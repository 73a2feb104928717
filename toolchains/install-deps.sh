#!/bin/sh
# install-deps.sh - installs the Debian 12 packages gcsnap needs to build and test.
#
# Idempotent: it checks each package with dpkg-query and installs only the
# missing ones, so a second run changes nothing. Runs as root (a fresh Debian
# machine has no sudo); otherwise it re-runs itself through sudo.
set -eu

# One package per line: "name  why". This is the only list of dependencies.
# A quoted here-document, so that any text may follow a name.
PACKAGES=$(cat <<'LIST'
build-essential     C compiler (gcc), make and libc headers
cmake               the build system
pkg-config          finds libzstd, zlib and jansson for the host programs
clang               libFuzzer targets (tests/fuzz) need clang
libclang-rt-14-dev  libFuzzer and sanitizer runtimes for clang 14
libzstd-dev         the collector reads and writes zstd-compressed snapshots
zlib1g-dev          gcsnap reads gzip-compressed dumps (jcmd GC.heap_dump -gz)
libjansson-dev      the collector and CLI write JSON
libyajl-dev         streaming JSON parser: gcsnap reads V8 .heapsnapshot files of hundreds of MB without a DOM (collector/formats)
default-jdk-headless javac, java and jcmd make the real JVM heap dump (HPROF) of the formats tests (tests/formats)
libcmocka-dev       unit tests (tests/unit)
libuv1-dev          event loop of the collector daemon
libprotobuf-c-dev   the collector decodes the wire protocol with protobuf-c
protobuf-c-compiler protoc-c generates that C from proto/gcsnap.proto
protobuf-compiler   protoc --decode checks the messages of the agent in tests
libsqlite3-dev      catalog of devices and snapshots in the collector
libpq-dev           the collector's PostgreSQL catalog, shared by several collectors (libpq)
postgresql-15       a real PostgreSQL server started by the catalog tests (tests/collector)
libh2o-dev          HTTP API of the collector (h2o on the same libuv loop)
libcurl4-openssl-dev the gcsnap CLI talks to the HTTP API of the collector
libssl-dev          OpenSSL: device keys in gcsnapd and gcsnap keys (CSPRNG, SHA-256, HMAC), the API token digest and TLS
openssl             the openssl command makes the test certificates of gcsnapd's HTTPS (tests/collector)
python3             test scripts (tests/agent, tests/cli)
python3-networkx    dominators are checked against networkx (tests/analysis)
zstd                command-line zstd, to check compressed output in tests
nodejs              node --check parses the script of the HTML report (tests/cli); runs the browser tests (tests/browser)
npm                 installs the pinned playwright-core of the browser tests into the build tree (tests/browser)
chromium            the headless browser of the browser tests: the HTML report, the DevTools export (tests/browser)
curl                HTTP API tests of the collector (tests/collector)
iproute2            ip netns and tc for the network fault test (tests/e2e, e2e_netfault)
ca-certificates     lets apt reach HTTPS mirrors on a minimal image
gcc-arm-linux-gnueabi cross compiler for ARMv5TE soft float, the nearest Debian target to CE devices (tests/cross)
libc6-dev-armel-cross C library and headers of that ARM target
qemu-user           qemu-arm runs the ARM agent and its tests on this machine (no binfmt_misc needed)
gcc-mingw-w64-x86-64-win32 cross compiler for the Win32 port layer (tests/cross)
wine64              runs the Win32 agent and its tests (tests/cross)
libcmocka-dev:armel cmocka for the ARM target, so the unit tests of common/ run under qemu-arm
lld                 links the Windows CE API guard against CE's exports only (toolchains/arm-wince.cmake)
llvm                llvm-dlltool makes that guard's import libraries, llvm-readobj checks its PE file
mono-runtime        Mono, the .NET runtime the profiler module (agent/mono) loads into; runs the C# demo and test programs
libmono-2.0-dev     Mono's profiler API headers (mono-2.pc) the module is built against
mono-mcs            mcs compiles the C# demo application and test programs (agent/mono/apps)
cppcheck            static checks of the C code (tests/static)
clang-tidy          static checks of the C code (tests/static)
scdoc               builds the manual pages from their sources (toolchains/scdoc.cmake)
lintian             checks the Debian packages cpack makes (tests/service)
systemd             systemd-analyze verify checks gcsnapd.service (tests/service)
prometheus          promtool check metrics reads gcsnapd's /metrics page (tests/service)
LIST
)

say() { printf 'install-deps: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    say "not root; re-running through sudo"
    exec sudo -- "$0" "$@"
  fi
  say "must run as root (and sudo is not installed)"
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive

# A name without :arch means the machine's own architecture (or all), even
# when the package is also installed for another one.
is_installed() {
  case $1 in
    *:*) status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) ;;
    *) status=$(dpkg-query -W -f='${Status}' "$1:$(dpkg --print-architecture)" 2>/dev/null ||
                dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) ;;
  esac
  [ "$status" = "install ok installed" ] || is_provided "$1"
}

# A name that an installed package provides counts as installed: some nodejs
# builds include npm, provide it and conflict with Debian's npm package.
is_provided() {
  case $1 in *:*) return 1 ;; esac
  dpkg-query -W -f='${Status}\t${Provides}\n' 2>/dev/null | awk -F'\t' -v p="$1" '
    $1 == "install ok installed" {
      n = split($2, a, /, */)
      for (i = 1; i <= n; i++) { sub(/ .*/, "", a[i]); if (a[i] == p) found = 1 }
    }
    END { exit !found }'
}

names=$(printf '%s\n' "$PACKAGES" | awk 'NF { printf "%s%s", sep, $1; sep = " " }')
missing=
for pkg in $names; do
  if ! is_installed "$pkg"; then
    missing="$missing $pkg"
  fi
done

say "checked: $names"
if [ -z "$missing" ]; then
  say "all packages present; nothing to install"
  exit 0
fi

say "installing:$missing"
# Packages of another architecture (name:arch) need it known before the update.
for arch in $(printf '%s\n' $missing | sed -n 's/^[^:]*://p' | sort -u); do
  dpkg --print-foreign-architectures | grep -qx "$arch" || { say "adding the $arch architecture"; dpkg --add-architecture "$arch"; }
done
apt-get update
# $missing is a list of package names; splitting it into words is intended.
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing

still_missing=
for pkg in $missing; do
  is_installed "$pkg" || still_missing="$still_missing $pkg"
done
if [ -n "$still_missing" ]; then
  say "still missing after install:$still_missing"
  exit 1
fi
say "done"
