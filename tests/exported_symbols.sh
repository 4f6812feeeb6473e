#!/usr/bin/env bash
# Every global symbol a library archive defines must start with sac_, so that a program can
# link saccade beside ggml or anything else (the rest is static or hidden).
# usage: tests/exported_symbols.sh ARCHIVE...   (NM=emnm for wasm objects; default nm)
set -euo pipefail
status=0
for archive in "$@"; do
  # --defined-only -g: every global or weak definition; posix format: "name type value size"
  syms=$("${NM:-nm}" -g --defined-only --format=posix "$archive" 2>/dev/null | awk 'NF >= 2 && $1 !~ /\[.*\]:$/ && $1 !~ /:$/ { print $1 }' | sort -u)
  if [ -z "$syms" ]; then
    echo "exported-symbols: $archive defines no global symbol (wrong archive or nm?)"; status=1; continue
  fi
  bad=$(grep -v '^sac_' <<<"$syms" || true)
  n=$(wc -l <<<"$syms")
  if [ -n "$bad" ]; then
    echo "exported-symbols: $archive exports $(wc -l <<<"$bad") of $n globals without the sac_ prefix:"
    sed 's/^/  /' <<<"$bad"
    status=1
  else
    echo "exported-symbols: $archive: all $n globals start with sac_"
  fi
done
exit $status
