#!/bin/sh
# wine-run.sh - runs a Win32 program under wine64, quietly, in a Wine prefix
# of its own that is made once and then reused.
#
# usage: wine-run.sh PREFIX PROGRAM [ARGS...]
#
# PREFIX is the WINEPREFIX folder (a cross build uses <build>/wineprefix).
# Making it takes seconds; a lock makes tests that start together wait for
# one maker. Exits 127 with a message when wine64 is missing, so that a
# machine without Wine fails the cross tests rather than skipping them.
set -u
[ $# -ge 2 ] || { echo "usage: wine-run.sh PREFIX PROGRAM [ARGS...]" >&2; exit 2; }
prefix=$1
shift
export WINEPREFIX=$prefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="

# Debian installs wine64 outside PATH unless the wine package is there too.
wine=$(command -v wine64 || true)
[ -n "$wine" ] || { [ -x /usr/lib/wine/wine64 ] && wine=/usr/lib/wine/wine64; }
[ -n "$wine" ] ||
  { echo "wine-run: wine64 not found; run toolchains/install-deps.sh" >&2; exit 127; }

server=$(dirname "$wine")/wineserver
[ -x "$server" ] || server=/usr/lib/wine/wineserver

# The processes wineboot leaves running must not inherit the lock (9>&-),
# or they would hold it for as long as they live; and the prefix is whole
# (system.reg written) only once its server has ended (-w).
if [ ! -f "$prefix/system.reg" ]; then
  mkdir -p "$(dirname "$prefix")"
  (
    flock 9
    if [ ! -f "$prefix/system.reg" ]; then
      "$wine" wineboot --init >/dev/null 2>&1 9>&- ||
        { echo "wine-run: wineboot could not make $prefix" >&2; exit 1; }
      [ -x "$server" ] && "$server" -w 9>&-
    fi
  ) 9>"$prefix.lock" || exit 1
fi
# A wineserver lingers a few seconds after its last program ends; a program
# starting just as it goes fails ("recvmsg: Connection reset by peer"). So
# keep one running for the whole run (tests/run-all.sh stops it with -k);
# when one runs already, this exits at once.
[ -x "$server" ] && "$server" -p >/dev/null 2>&1 9>&-
exec "$wine" "$@"
