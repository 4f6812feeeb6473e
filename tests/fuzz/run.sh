#!/usr/bin/env bash
# Runs each libFuzzer target for FUZZ_SECONDS, TEST_JOBS (default 1) at once. Each target reads
# its corpus kept in the repository (tests/fuzz/corpus/<target>) and the shared seeds; what it
# finds new goes to build/fuzz/corpus-<target>, its output to build/fuzz/<target>.log.
# usage: tests/fuzz/run.sh PROGRAM...
set -u
seconds=${FUZZ_SECONDS:-20}
jobs_max=${TEST_JOBS:-1}

fuzz_one() {
  local f=$1 name
  name=$(basename "$f")
  mkdir -p "build/fuzz/corpus-$name"
  "$f" -max_total_time="$seconds" -max_len=262144 -print_final_stats=0 "build/fuzz/corpus-$name" \
    $(ls -d "tests/fuzz/corpus/$name" 2>/dev/null) tests/fuzz/seeds >"build/fuzz/$name.log" 2>&1
  echo $? >"build/fuzz/$name.rc"
}

for f in "$@"; do
  rm -f "build/fuzz/$(basename "$f").rc"
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  echo "fuzzing $f for ${seconds}s"
  fuzz_one "$f" &
done
wait

status=0
for f in "$@"; do
  name=$(basename "$f")
  if [ "$(cat "build/fuzz/$name.rc" 2>/dev/null)" != 0 ]; then
    tail -40 "build/fuzz/$name.log"; echo "fuzz: $f found a crash"; status=1
  else
    echo "$name: $(tail -1 "build/fuzz/$name.log")"
  fi
done
exit $status
