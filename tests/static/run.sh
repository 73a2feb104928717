#!/bin/sh
# run.sh - static checks of the project's own C code: cppcheck and clang-tidy.
#
# Usage: tests/static/run.sh BUILD_DIR
#   BUILD_DIR holds compile_commands.json (every tree exports one), so
#   clang-tidy sees each file with its real flags and generated headers.
# Settings (zero findings expected at these):
#   cppcheck   --enable=warning,portability,performance --std=c99, all
#              configurations of common/, agent/ and collector/ (--force)
#   clang-tidy tests/static/clang-tidy.yaml (analyzer + bugprone, and why
#              some checks are off), on every source file of those folders
# Exit: 0 no findings; 1 findings (printed); 77 a checker is not installed.
set -u
build=${1:?usage: run.sh BUILD_DIR}
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/tests/static

for tool in cppcheck clang-tidy; do
  command -v "$tool" >/dev/null 2>&1 || { echo "static: $tool not installed (toolchains/install-deps.sh)"; exit 77; }
done
[ -f "$build/compile_commands.json" ] || { echo "static: no $build/compile_commands.json"; exit 1; }

status=0
echo "static: cppcheck"
# The public headers, and each folder of common/src for its private ones.
includes="-I $src/common/include"
for d in "$src"/common/src/*/; do includes="$includes -I $d"; done
# shellcheck disable=SC2086  # $includes is a list of options without spaces
if ! cppcheck -q --force --std=c99 --enable=warning,portability,performance \
    --inline-suppr --error-exitcode=1 -j 2 $includes \
    "$src/common" "$src/agent" "$src/collector"; then
  status=1
fi

echo "static: clang-tidy"
# The files of this tree's compile database (a host tree has no Win32 files).
files=$(python3 -c 'import json, sys
print("\n".join(sorted({e["file"] for e in json.load(open(sys.argv[1]))
                         if "/tests/" not in e["file"] and "/build" not in e["file"]})))' \
        "$build/compile_commands.json" | grep -E "^$src/(common|agent|collector)/")
log=$build/clang-tidy.log
# shellcheck disable=SC2086  # $files is a list of paths without spaces
printf '%s\n' $files | xargs -P 2 -n 8 clang-tidy --quiet -p "$build" \
  --config-file="$here/clang-tidy.yaml" >"$log" 2>&1
if grep -E '(warning|error): ' "$log"; then
  status=1
fi
[ "$status" -eq 0 ] && echo "static: no findings"
exit "$status"
