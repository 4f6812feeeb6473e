# scripts/wasm.mk — the WebAssembly builds and the JavaScript package (included by the Makefile).
#
#   make wasm        dist/saccade-mt.{mjs,wasm,worker.js,worker.mjs}  SIMD128 + pthreads (shared memory)
#                    dist/saccade-st.{mjs,wasm}            SIMD128, single-threaded
#                    dist/saccade-relaxed-{mt,st}.*        the same with relaxed SIMD's int8 dot product
#                                                          (browsers that validate it; see below)
#   make test-js     node --test tests/js/, TEST_JOBS files at once (needs the native CLI and the test-model tool)
#   make bench-wasm  wasm vs native vs wllama on GPT-2-small-shaped models (scripts/bench-wasm.mjs)
#   make bench-decode  one decode token's matvecs per weight type beside a streaming read, native and wasm
#   make bench-kv-attention  attention's passes over the KV cache per key and head, native and wasm
#
# No embind: the wasm exports the C API (every sac_* function declared in src/saccade.h, plus
# malloc/free) and src/js/ reads and writes the heap itself, with the struct layouts of
# dist/saccade-layout.mjs.

EMCC           ?= emcc
# emcc 3.1.6 needs Debian's node modules (acorn) at -O2 and above.
EMCC_RUN       := NODE_PATH=/usr/share/nodejs $(EMCC)

WASM_SRC       := $(filter-out src/cli.c,$(wildcard src/*.c))
WASM_HEADERS   := $(wildcard src/*.h)
WASM_CFLAGS    := -std=c11 -D_POSIX_C_SOURCE=200809L -Isrc -O3 -msimd128 -DNDEBUG \
                  -Wall -Wextra -Wno-unused-parameter
WASM_LDFLAGS   := -O3 -msimd128 --no-entry \
                  -sMODULARIZE -sEXPORT_ES6 -sEXPORT_NAME=createSaccade -sENVIRONMENT=web,worker,node \
                  -sEXPORTED_FUNCTIONS=@build/wasm/exports.json \
                  -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=4GB -sWASM_BIGINT \
                  -sNODEJS_CATCH_EXIT=0 -sNODEJS_CATCH_REJECTION=0 \
                  --extern-pre-js src/js/node-esm-shim.js
# The pthread pool is sized at run time by the JS layer (Module.pthreadPoolSize = threads - 1);
# STRICT=2 makes pthread_create fail instead of deadlocking when the pool is exhausted.
WASM_MT_FLAGS  := -pthread
WASM_MT_LINK   := -sEXPORTED_RUNTIME_METHODS=HEAPU8,PThread,wasmMemory \
                  "-sPTHREAD_POOL_SIZE=Module['pthreadPoolSize']||1" -sPTHREAD_POOL_SIZE_STRICT=2 \
                  -Wno-pthreads-mem-growth
WASM_ST_LINK   := -sEXPORTED_RUNTIME_METHODS=HEAPU8

WASM_MT_OBJ    := $(patsubst src/%.c,build/wasm/mt/%.o,$(WASM_SRC))
WASM_ST_OBJ    := $(patsubst src/%.c,build/wasm/st/%.o,$(WASM_SRC))

.PHONY: wasm test-js bench-wasm emcc-installed
wasm: dist/saccade-mt.mjs dist/saccade-st.mjs dist/saccade-relaxed-mt.mjs dist/saccade-relaxed-st.mjs \
      dist/package.json dist/saccade-layout.mjs

# Debian's emscripten when emcc is missing (the package pulls in clang, lld, binaryen and node);
# after the native build's check, so that a parallel make never runs two apt-gets at once.
emcc-installed: native-deps-installed
	@command -v $(EMCC) >/dev/null || bash scripts/install-deps.sh emscripten

build/wasm/exports.json: src/saccade.h scripts/wasm-exports.mjs | build/wasm
	node scripts/wasm-exports.mjs src/saccade.h > $@

build/wasm/mt/%.o: src/%.c $(WASM_HEADERS) | emcc-installed build/wasm/mt
	$(EMCC_RUN) $(WASM_CFLAGS) $(WASM_MT_FLAGS) -c $< -o $@
build/wasm/st/%.o: src/%.c $(WASM_HEADERS) | emcc-installed build/wasm/st
	$(EMCC_RUN) $(WASM_CFLAGS) -c $< -o $@

# One emcc link writes the .mjs glue, the .wasm and (mt) the .worker.js.
# scripts/patch-glue.mjs then lets src/js/instantiate.mjs start the pthread workers (see there).
dist/saccade-mt.mjs: $(WASM_MT_OBJ) build/wasm/exports.json src/js/node-esm-shim.js scripts/patch-glue.mjs | dist
	$(EMCC_RUN) $(WASM_MT_FLAGS) $(WASM_MT_OBJ) -o $@ $(WASM_LDFLAGS) $(WASM_MT_LINK)
	node scripts/patch-glue.mjs $@ dist/saccade-mt.worker.js dist/saccade-mt.worker.mjs
dist/saccade-st.mjs: $(WASM_ST_OBJ) build/wasm/exports.json src/js/node-esm-shim.js | dist
	$(EMCC_RUN) $(WASM_ST_OBJ) -o $@ $(WASM_LDFLAGS) $(WASM_ST_LINK)

# The relaxed builds: the mt and st objects, but src/kernels.c compiled with -mrelaxed-simd,
# which gives its K-quant kernels i32x4.relaxed_dot_i8x16_i7x16_add_s. clang 14 cannot
# emit that instruction, so they emit a placeholder of the same shape, which
# scripts/relaxed-patch.mjs rewrites in the linked module; the link keeps the function names
# (--profiling-funcs) so that the script can check where each placeholder is, and drops them.
# The results are bitwise those of the SIMD128 builds (exact integer dot products).
WASM_RELAXED   := -mrelaxed-simd
build/wasm/relaxed-mt/kernels.o: src/kernels.c $(WASM_HEADERS) | emcc-installed build/wasm/relaxed-mt
	$(EMCC_RUN) $(WASM_CFLAGS) $(WASM_RELAXED) $(WASM_MT_FLAGS) -c $< -o $@
build/wasm/relaxed-st/kernels.o: src/kernels.c $(WASM_HEADERS) | emcc-installed build/wasm/relaxed-st
	$(EMCC_RUN) $(WASM_CFLAGS) $(WASM_RELAXED) -c $< -o $@
WASM_RMT_OBJ   := $(filter-out build/wasm/mt/kernels.o,$(WASM_MT_OBJ)) build/wasm/relaxed-mt/kernels.o
WASM_RST_OBJ   := $(filter-out build/wasm/st/kernels.o,$(WASM_ST_OBJ)) build/wasm/relaxed-st/kernels.o

dist/saccade-relaxed-mt.mjs: $(WASM_RMT_OBJ) build/wasm/exports.json src/js/node-esm-shim.js scripts/patch-glue.mjs scripts/relaxed-patch.mjs | dist
	$(EMCC_RUN) $(WASM_MT_FLAGS) $(WASM_RMT_OBJ) -o $@ $(WASM_LDFLAGS) $(WASM_RELAXED) --profiling-funcs $(WASM_MT_LINK)
	node scripts/patch-glue.mjs $@ dist/saccade-relaxed-mt.worker.js dist/saccade-relaxed-mt.worker.mjs
	node --experimental-wasm-relaxed-simd scripts/relaxed-patch.mjs $(@:.mjs=.wasm) $(@:.mjs=.wasm) || { rm -f $@; exit 1; }
dist/saccade-relaxed-st.mjs: $(WASM_RST_OBJ) build/wasm/exports.json src/js/node-esm-shim.js scripts/relaxed-patch.mjs | dist
	$(EMCC_RUN) $(WASM_RST_OBJ) -o $@ $(WASM_LDFLAGS) $(WASM_RELAXED) --profiling-funcs $(WASM_ST_LINK)
	node --experimental-wasm-relaxed-simd scripts/relaxed-patch.mjs $(@:.mjs=.wasm) $(@:.mjs=.wasm) || { rm -f $@; exit 1; }

# The struct offsets and constants src/js uses, printed by the wasm32 compiler itself.
dist/saccade-layout.mjs: scripts/wasm-layout.c src/saccade.h | emcc-installed build/wasm dist
	$(EMCC_RUN) -Isrc -Wall -Wextra -sENVIRONMENT=node -sWASM_ASYNC_COMPILATION=0 $< -o build/wasm/layout.cjs
	node build/wasm/layout.cjs > $@.tmp && mv $@.tmp $@

# The package is "type": "module"; the pthread worker script is CommonJS.
dist/package.json: | dist
	echo '{"type":"commonjs"}' > $@

build/wasm build/wasm/mt build/wasm/st build/wasm/relaxed-mt build/wasm/relaxed-st dist:
	mkdir -p $@

# npm packages for the tests and the benchmark (playwright-core, @wllama/wllama).
# npm ci caches the packages, not the registry's records of them, which installing the packed
# package offline (tests/js/pack, tests/bundlers) needs for its dependencies (the lock file's
# packages that are not dev ones, with theirs).
node_modules/.stamp: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	deps="$$(node -p "Object.entries(require('./package-lock.json').packages).filter(([k, p]) => k && !p.dev && p.version).map(([k, p]) => k.replace(/^.*node_modules\//, '') + '@' + p.version).join(' ')")"; \
	  [ -z "$$deps" ] || npm cache add --loglevel=error $$deps
	touch $@

# /usr/bin/chromium: the browser-install rule is in scripts/web.mk.
JS_TEST_DEPS := wasm build/saccade build/tools/make_model node_modules/.stamp /usr/bin/chromium

# Test files run TEST_JOBS at once (node --test runs one at a time on 2 cores: nproc - 1); most
# wait on child processes or workers for much of their time.
test-js: $(JS_TEST_DEPS)
	node --test --test-concurrency=$(TEST_JOBS) tests/js/

bench-wasm: $(JS_TEST_DEPS) build/tools/bench_stream
	node scripts/bench-wasm.mjs

# The matvecs of one GPT-2-small decode token beside a streaming read of the same bytes, native
# and wasm (scripts/bench_decode.c): the ceiling the kernels put on decode. BENCH_DECODE_ARGS:
# types (F32,F16,…), tokens per window, threads (1, 2, or 12 for both), windows.
BENCH_DECODE_ARGS ?= F32,F16,BF16,Q8_0,Q4_0 8 12 5
BENCH_DECODE_SRC  := $(addprefix src/,matmul.c kernels.c types.c quants.c threadpool.c error.c unicode.c)

build/tools/bench_decode: scripts/bench_decode.c $(BENCH_DECODE_SRC) $(WASM_HEADERS) | native-deps-installed
	@mkdir -p build/tools
	$(KERNELS_CC) $(NATIVE_CFLAGS) -DNDEBUG scripts/bench_decode.c $(BENCH_DECODE_SRC) -o $@ $(LDLIBS)

# Emscripten's pthread worker is a CommonJS .js file: its directory says so (the package is ESM).
build/bench-decode/bench_decode.cjs: scripts/bench_decode.c $(BENCH_DECODE_SRC) $(WASM_HEADERS)
	@mkdir -p build/bench-decode
	echo '{"type": "commonjs"}' > build/bench-decode/package.json
	$(EMCC_RUN) $(WASM_CFLAGS) -pthread -sPTHREAD_POOL_SIZE=2 -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=4GB \
	  -sEXIT_RUNTIME=1 -sSINGLE_FILE=1 -sENVIRONMENT=node scripts/bench_decode.c $(BENCH_DECODE_SRC) -o $@

.PHONY: bench-decode
bench-decode: build/tools/bench_decode build/bench-decode/bench_decode.cjs
	build/tools/bench_decode $(BENCH_DECODE_ARGS)
	node build/bench-decode/bench_decode.cjs $(BENCH_DECODE_ARGS)

# Attention's passes over a KV cache left as a decode token leaves it, ns per key per head, f32 and
# bf16, beside a plain read of the same bytes (scripts/bench_kv_attention.c), native and wasm.
# BENCH_KV_ARGS: heads per block (12; 6 is each of 2 threads' share), tokens, query heads per kv head (1).
BENCH_KV_ARGS ?= 12 24
BENCH_KV_SRC  := $(addprefix src/,kv_attention.c kv_cache.c)
# Binaryen inlines a function with one caller into it: here the passes into main, a function V8
# then compiles 1.5-3x slower than the same passes in the library, where they sit in attention's task.
BENCH_KV_KEEP_CALLS := -sBINARYEN_EXTRA_PASSES=--one-caller-inline-max-function-size=100

build/tools/bench_kv_attention: scripts/bench_kv_attention.c $(BENCH_KV_SRC) $(WASM_HEADERS) | native-deps-installed
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) -DNDEBUG scripts/bench_kv_attention.c $(BENCH_KV_SRC) -o $@ $(LDLIBS)

build/bench-kv/bench_kv_attention.cjs: scripts/bench_kv_attention.c $(BENCH_KV_SRC) $(WASM_HEADERS)
	@mkdir -p build/bench-kv
	echo '{"type": "commonjs"}' > build/bench-kv/package.json
	$(EMCC_RUN) $(WASM_CFLAGS) -sINITIAL_MEMORY=512MB -sEXIT_RUNTIME=1 -sSINGLE_FILE=1 -sENVIRONMENT=node \
	  $(BENCH_KV_KEEP_CALLS) scripts/bench_kv_attention.c $(BENCH_KV_SRC) -o $@

.PHONY: bench-kv-attention
bench-kv-attention: build/tools/bench_kv_attention build/bench-kv/bench_kv_attention.cjs
	build/tools/bench_kv_attention $(BENCH_KV_ARGS)
	node build/bench-kv/bench_kv_attention.cjs $(BENCH_KV_ARGS)
