#!/bin/sh
# size.sh - FILE is at most LIMIT bytes: the device build of the agent,
# stripped, must fit the flash budget of a small device.
#
# usage: size.sh FILE LIMIT    (LIMIT 0: only print the size)
set -u
[ $# -eq 2 ] || { echo "usage: size.sh FILE LIMIT" >&2; exit 2; }
[ -f "$1" ] || { echo "FAIL: $1 not found" >&2; exit 1; }
size=$(wc -c <"$1")
[ "$2" -gt 0 ] || { echo "$1: $size bytes stripped (no limit for this target)"; exit 0; }
echo "$1: $size bytes stripped (limit $2, $((size * 100 / $2))% of it)"
[ "$size" -le "$2" ] || { echo "FAIL: over the limit by $((size - $2)) bytes" >&2; exit 1; }
