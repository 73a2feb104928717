#!/bin/sh
# wince-imports.sh - the Windows CE guard's PE file is for ARM (Thumb-2,
# IMAGE_FILE_MACHINE_ARMNT 0x1C4), a Windows CE program (subsystem 9), and
# imports only from coredll.dll and ws2.dll, only names their .def
# allow-lists hold.
#
# usage: wince-imports.sh READOBJ EXE COREDLL.DEF WS2.DEF
set -u
[ $# -eq 4 ] || { echo "usage: wince-imports.sh READOBJ EXE COREDLL.DEF WS2.DEF" >&2; exit 2; }
readobj=$1 exe=$2
[ -f "$exe" ] || { echo "FAIL: $exe not found" >&2; exit 1; }

machine=$("$readobj" --file-headers "$exe" | sed -n 's/^ *Machine: //p')
echo "machine: $machine"
case $machine in
  *'(0x1C4)') ;;
  *) echo "FAIL: machine is not IMAGE_FILE_MACHINE_ARMNT (0x1C4)" >&2; exit 1 ;;
esac

subsystem=$("$readobj" --file-headers "$exe" | sed -n 's/^ *Subsystem: //p')
echo "subsystem: $subsystem"
case $subsystem in
  *'(0x9)') ;;
  *) echo "FAIL: subsystem is not IMAGE_SUBSYSTEM_WINDOWS_CE_GUI (0x9)" >&2; exit 1 ;;
esac

# The names of one .def file's EXPORTS, one a line.
def_names() { sed -n '/^EXPORTS/,$p' "$1" | sed -e 's/;.*//' -e '/^EXPORTS/d' | awk 'NF { print $1 }'; }

imports=$("$readobj" --coff-imports "$exe" | awk '
  /^ *Name: / { dll = $2 }
  /^ *Symbol: / { print dll, $2 }')
[ -n "$imports" ] || { echo "FAIL: no imports read from $exe" >&2; exit 1; }
printf '%s\n' "$imports" | awk '{ n[$1]++ } END { for (d in n) print "imports " n[d] " names from " d }'

bad=0
for dll in $(printf '%s\n' "$imports" | awk '{ print $1 }' | sort -u); do
  case $dll in
    coredll.dll) def=$3 ;;
    ws2.dll) def=$4 ;;
    *) echo "FAIL: imports from $dll (only coredll.dll and ws2.dll exist on CE)" >&2; bad=1; continue ;;
  esac
  allowed=$(def_names "$def")
  for name in $(printf '%s\n' "$imports" | awk -v d="$dll" '$1 == d { print $2 }'); do
    printf '%s\n' "$allowed" | grep -qx "$name" ||
      { echo "FAIL: $dll!$name is not in $def" >&2; bad=1; }
  done
done
[ "$bad" -eq 0 ] && echo "ok: every import is a documented CE export"
exit "$bad"
