#!/bin/sh
# run.sh - runs one browser test (tests/browser/*.test.js) under node.
#
# usage: run.sh TEST.js BIN_DIR OUT_DIR MODULES_DIR [SHARED_DIR]
#
# Exits 77 (ctest: skipped) when Chromium, node or npm is missing. Otherwise
# installs the node modules pinned by package-lock.json into MODULES_DIR (in
# the build tree, never the source tree) with `npm ci`, once per change of
# the lock file and under a lock so that tests started together install
# once, then runs TEST.js with:
#   GS_BIN          BIN_DIR: gcsnap, gcsnap-agent, gcsnapd
#   GS_OUT          OUT_DIR, emptied first: screenshots, dumps, logs
#   GS_SHARED_DIR   SHARED_DIR (fixtures/wpfapp.gclog), may be empty
#   GS_CHROMIUM     the browser (default /usr/bin/chromium)
#   NODE_PATH       MODULES_DIR/node_modules, so require('playwright-core') works
# A failed install fails the test: only absent programs make it skip.
set -u

[ $# -ge 4 ] || { echo "usage: run.sh TEST.js BIN_DIR OUT_DIR MODULES_DIR [SHARED_DIR]" >&2; exit 2; }
test_js=$1 bin=$2 out=$3 modules=$4 shared=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
chromium=${GS_CHROMIUM:-/usr/bin/chromium}

skip() { echo "SKIP: $*"; exit 77; }
[ -x "$chromium" ] || skip "no Chromium at $chromium (Debian package chromium; toolchains/install-deps.sh)"
command -v node >/dev/null 2>&1 || skip "no node (Debian package nodejs)"
command -v npm >/dev/null 2>&1 || skip "no npm (Debian package npm)"

mkdir -p "$modules" || exit 1
(
  flock 9 || exit 1
  if ! cmp -s "$here/package-lock.json" "$modules/package-lock.json" ||
     [ ! -f "$modules/node_modules/playwright-core/package.json" ]; then
    rm -f "$modules/package-lock.json"
    cp "$here/package.json" "$modules/package.json" || exit 1
    cp "$here/package-lock.json" "$modules/package-lock.installing.json" || exit 1
    mv "$modules/package-lock.installing.json" "$modules/package-lock.json" || exit 1
    echo "run.sh: npm ci --prefix $modules"
    if ! npm ci --prefix "$modules" --no-audit --no-fund --loglevel=error; then
      rm -f "$modules/package-lock.json"   # so that the next run tries again
      echo "FAIL: npm ci could not install the pinned node modules" >&2
      exit 1
    fi
  fi
) 9>"$modules/.install.lock" || exit 1

rm -rf "$out"
mkdir -p "$out" || exit 1
GS_BIN=$bin GS_OUT=$out GS_SHARED_DIR=$shared GS_CHROMIUM=$chromium \
  NODE_PATH=$modules/node_modules exec node "$test_js"
