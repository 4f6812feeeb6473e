#!/usr/bin/env bash
# Runs C test programs and prints one closing line with the totals. A program ending in .js is
# an Emscripten build and runs in Node. Each program's output is kept in <program>.log (the
# wasm kernel tests compare the matmul results hash across builds from these logs).
# usage: tests/run_c.sh LABEL PROGRAM...
# TEST_TIMEOUT (seconds, default 600) ends a hung program; it then counts as crashed.
# TEST_JOBS (default 1) programs run at once; their reports follow in the order given.
set -u
label=$1; shift
jobs_max=${TEST_JOBS:-1}

run_one() {
  local t=$1 rc
  case $t in
    *.js) timeout "${TEST_TIMEOUT:-600}" node "$t" >"$t.log" 2>&1; rc=$? ;;
    *) timeout "${TEST_TIMEOUT:-600}" "$t" >"$t.log" 2>&1; rc=$? ;;
  esac
  echo "$rc" >"$t.rc"
}

for t in "$@"; do
  rm -f "$t.rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$t" &
done
wait

passed=0; failed=0; crashed=0
for t in "$@"; do
  log=$t.log
  rc=$(cat "$t.rc" 2>/dev/null || echo 255)
  grep -E '^(FAIL|SKIP)|CHECK|ERROR|runtime error|Sanitizer|Aborted|segmentation fault|alignment fault' "$log" | head -40
  line=$(grep -E '^[a-z_0-9]+: [0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
  if [ -z "$line" ]; then
    [ "$rc" -eq 124 ] && echo "$t: timed out after ${TEST_TIMEOUT:-600} s"
    echo "$t: crashed or printed no summary (exit $rc)"; tail -20 "$log"
    crashed=$((crashed + 1)); continue
  fi
  echo "  $line"
  p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line"); f=$(sed -E 's/.* ([0-9]+) failed/\1/' <<<"$line")
  passed=$((passed + p)); failed=$((failed + f))
  [ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || { echo "$t: exit $rc"; crashed=$((crashed + 1)); }
done
failed=$((failed + crashed))
echo "$label: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
