#!/bin/sh
# wince-guard.sh - the CE import libraries refuse a call CE lacks: a program
# calling GetTickCount64 (not in CE's coredll) must fail to link, naming it.
#
# usage: wince-guard.sh CLANG TARGET MINGW-HEADERS IMPLIB-DIR WORKDIR
set -u
[ $# -eq 5 ] || { echo "usage: wince-guard.sh CLANG TARGET HEADERS IMPLIBS WORK" >&2; exit 2; }
cc=$1 target=$2 headers=$3 libs=$4 work=$5
mkdir -p "$work" || exit 1
cat >"$work/lacks.c" <<'C'
#include <windows.h>
int WINAPI WinMainCRTStartup(HINSTANCE a, HINSTANCE b, LPWSTR c, int d) {
  (void)a, (void)b, (void)c, (void)d;
  return (int)GetTickCount64();
}
C
if "$cc" --target="$target" -D_WIN32_WCE=0x600 -DUNDER_CE -isystem "$headers" \
     -fuse-ld=lld -nostdlib -Wl,--entry=WinMainCRTStartup "$work/lacks.c" \
     -L"$libs" -lcoredll -o "$work/lacks.exe" >"$work/link.log" 2>&1; then
  echo "FAIL: a call to GetTickCount64 linked against CE's coredll" >&2
  exit 1
fi
if grep -q 'undefined symbol: .*GetTickCount64' "$work/link.log"; then
  echo "ok: the link refuses GetTickCount64:"
  grep 'undefined symbol' "$work/link.log"
  exit 0
fi
echo "FAIL: the link failed, but not on GetTickCount64:" >&2
cat "$work/link.log" >&2
exit 1
