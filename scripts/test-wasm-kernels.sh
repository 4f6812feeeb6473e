#!/usr/bin/env bash
# Builds the kernel tests (types, matmul, thread pool) with Emscripten and runs them in Node:
# with SIMD128 + pthreads (mt), SIMD128 single-threaded (st), and single-threaded without
# SIMD (plain: the plain-C kernels on wasm32). These exercise the `__wasm_simd128__` paths of
# src/matmul.c and the futex paths of src/threadpool.c, which native builds never compile,
# and check that every build's matmul results are bitwise those of the native plain-C build.
# Outputs go to build/wasm-tests/. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
out=build/wasm-tests
mkdir -p "$out"
# the repository's package.json may declare ES modules; these test programs are CommonJS
echo '{"type":"commonjs"}' >"$out/package.json"

cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc -Itests
        -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wvla -Werror)
src=(src/types.c src/quants.c src/kernels.c src/matmul.c src/threadpool.c src/error.c)
# Plain (non-modular) programs with a main: EXIT_RUNTIME makes main's return value the exit
# code. The pthread pool must hold every thread alive at once (test_matmul keeps pools of
# 1-4 threads: 6 workers); STRICT=2 turns running out into EAGAIN instead of a hang.
# SINGLE_FILE embeds the wasm: Node 20's global fetch cannot load a file path, and the glue
# would try it (emscripten-3.1.6.md §2B).
link=(-sEXIT_RUNTIME=1 -sINITIAL_MEMORY=256MB -sENVIRONMENT=node -sSINGLE_FILE=1)
mt=(-msimd128 -pthread -sPTHREAD_POOL_SIZE=8 -sPTHREAD_POOL_SIZE_STRICT=2)
st=(-msimd128)
plain=()

status=0
for variant in mt st plain; do
    for t in test_types test_matmul test_threadpool; do
        js="$out/$t-$variant.js"
        case $variant in
            mt) extra=("${mt[@]}") ;;
            st) extra=("${st[@]}") ;;
            plain) extra=("${plain[@]}") ;;
        esac
        emcc "${cflags[@]}" "${extra[@]}" "tests/$t.c" "${src[@]}" "${link[@]}" -o "$js"
        log="$out/$t-$variant.log"
        if timeout 300 node "$js" >"$log" 2>&1; then rc=0; else rc=$?; fi  # 124: hung
        sed "s/^/[wasm-$variant] /" "$log" | cut -c1-300 | grep -E "passed|failed|FAIL|kernels compiled|pools of|SKIP|rror|hash" || true
        if [ "$rc" -ne 0 ]; then
            echo "[wasm-$variant] $t exited with $rc (log: $log)"
            status=1
        fi
        if [ "$t" = test_matmul ] && [ "$variant" != plain ] &&
            ! grep -q "kernels compiled with wasm SIMD128" "$log"; then
            echo "[wasm-$variant] $t did not run the SIMD128 kernels"
            status=1
        fi
    done
done
# The plain-C kernels (built natively) and the SIMD128 ones must give the same bits.
gcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -pthread -Isrc -Itests tests/test_matmul.c "${src[@]}" \
    -o "$out/test_matmul-native" -lm
"$out/test_matmul-native" >"$out/test_matmul-native.log" 2>&1 || status=1
native_hash=$(grep -o "results hash [0-9a-f]*" "$out/test_matmul-native.log" || true)
for variant in mt st plain; do
    wasm_hash=$(grep -o "results hash [0-9a-f]*" "$out/test_matmul-$variant.log" || true)
    if [ -z "$native_hash" ] || [ "$wasm_hash" != "$native_hash" ]; then
        echo "[wasm-$variant] test_matmul: $wasm_hash differs from native plain C: $native_hash"
        status=1
    else
        echo "[wasm-$variant] test_matmul: results are bitwise equal to native plain C ($native_hash)"
    fi
done
exit $status
