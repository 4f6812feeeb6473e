#!/usr/bin/env bash
# Runs every C test binary in a folder and prints one closing line with the totals.
# usage: tests/run_c.sh BUILD_DIR LABEL
set -u
dir=$1; label=$2
passed=0; failed=0; crashed=0
for t in "$dir"/test_*; do
  [ -x "$t" ] || continue
  out=$("$t" 2>&1); rc=$?
  printf '%s\n' "$out" | grep -E '^(FAIL|SKIP)|CHECK|ERROR|runtime error|Sanitizer' | head -40
  line=$(printf '%s\n' "$out" | grep -E '^[a-z_0-9]+: [0-9]+ passed, [0-9]+ failed$' | tail -1)
  if [ -z "$line" ]; then
    echo "$(basename "$t"): crashed or printed no summary (exit $rc)"; printf '%s\n' "$out" | tail -20
    crashed=$((crashed + 1)); continue
  fi
  echo "  $line"
  p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed/\1/' <<<"$line")
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || { echo "$(basename "$t"): exit $rc"; crashed=$((crashed + 1)); }
done
failed=$((failed + crashed))
echo "$label: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
