# scripts/wasm-tests.mk — the C tests compiled with Emscripten and run in Node (included by the
# Makefile after scripts/wasm.mk, whose EMCC_RUN and emcc-installed it uses).
#
#   make test-wasm-kernels  the kernel tests (types, matmul, thread pool, KV attention) in three builds:
#                           SIMD128 + pthreads (mt), SIMD128 single-threaded (st), and plain C on
#                           wasm32 (plain). They run the SIMD128 paths as V8 compiles them (the
#                           native build takes them through SIMDe, src/simd.h) and the futex paths
#                           of src/threadpool.c, which native builds never compile, and every
#                           build's matmul results must be bitwise the native build's, as must the
#                           native plain C build's (the sanitizer build, when test-asan has run).
#                           test_matmul also runs in the relaxed build (st, src/kernels.c compiled
#                           with -mrelaxed-simd and patched by scripts/relaxed-patch.mjs) in
#                           headless Chromium, and its results hash must be the native one too:
#                           once as V8 compiles the relaxed dot on this CPU, and on x86-64 twice
#                           more as it does on CPUs without AVX-VNNI (pair sums that saturate
#                           past 16 bits), where the kernels take their int16 paths: once so,
#                           once with the relaxed paths forced (relaxed-forced), whose 7-bit
#                           operands must keep the dots exact there too.
#   make test-wasm-safe     every C test that can run in Node, built for wasm32 with threads
#                           (the tests run 1-4) twice: with SAFE_HEAP (every load and store
#                           checked against null, its alignment and the top of the heap) and with
#                           AddressSanitizer + UBSan (every access checked against its
#                           allocation). Size arithmetic that wraps in wasm32's 32-bit size_t and
#                           then writes past a buffer is caught here when it passes natively. A
#                           canary program per build must crash, which shows the checks are on.
#
# A build compiles src/, tests/support/ and the trainer once into build/wasm-tests/<build>/ and
# its tests, linked into one program (wasm_suite below), take them as archives, so it picks up
# whichever src/ files they call (a new src/*.c needs no edit here) and make rebuilds only what
# changed. The programs run every time.

WT        := build/wasm-tests
# The flags live in this file: editing it rebuilds the wasm tests.
WT_CONFIG := scripts/wasm-tests.mk
EMAR      ?= emar
WT_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc -Itests -Itests/support -I$(TRAIN_DIR) $(WARN) -Werror
# Plain programs with a main: EXIT_RUNTIME makes main's return value the exit code. SINGLE_FILE
# embeds the wasm (Node 20's global fetch cannot load a file path, and the glue would try it).
WT_LINK   := -sEXIT_RUNTIME=1 -sENVIRONMENT=node -sSINGLE_FILE=1
# The kernel tests: the pthread pool must hold every thread alive at once (test_matmul keeps
# pools of 1-4 threads: 6 workers); STRICT=2 turns running out into EAGAIN instead of a hang.
WT_KERNEL_LINK := $(WT_LINK) -sINITIAL_MEMORY=256MB
WT_MT_LINK     := -sPTHREAD_POOL_SIZE=8 -sPTHREAD_POOL_SIZE_STRICT=2
# SAFE_HEAP and ASSERTIONS=2 are link-time settings, so the mt objects serve. The memory
# settings are the shipped library's; NODERAWFS gives the tests the real file system (the vocab
# files in ../shared/data, temporary files in /tmp) relative to the repository root.
# -O1 (last, so it wins) links without binaryen's optimizer: half the link time, the same run time.
WT_CHECKED_LINK := $(WT_LINK) $(WT_MT_LINK) -Wno-pthreads-mem-growth -sALLOW_MEMORY_GROWTH -sNODERAWFS=1 --profiling-funcs -O1
WT_SAFE_LINK    := $(WT_CHECKED_LINK) -sSAFE_HEAP=1 -sASSERTIONS=2 -sMAXIMUM_MEMORY=4GB
# AddressSanitizer instruments at compile time (its own objects). Its shadow takes an eighth of
# the maximum memory up front, hence 2 GB, which the tests never approach.
WT_ASAN         := -msimd128 -pthread -fsanitize=address,undefined -O1
WT_ASAN_LINK    := $(WT_CHECKED_LINK) -sMAXIMUM_MEMORY=2GB

WT_KERNEL_TESTS := test_types test_matmul test_threadpool test_kv_attention test_exp
# Tests that cannot run here go in WT_NATIVE_ONLY (with the reason): test_models_shipped runs
# natively only, as it does not run under native ASan either (see ASAN_TEST_NAMES); test_cli
# captures the CLI's output by dup2 onto temporary files, which Emscripten's stdio does not follow
# (the CLI's wasm counterpart is src/js/cli.mjs, compared with it in tests/js/cli-parity.test.mjs).
WT_NATIVE_ONLY  := test_models_shipped test_cli
WT_SAFE_TESTS   := $(filter-out $(WT_NATIVE_ONLY),$(TEST_NAMES))

# wasm_objects(build, flags): src/, tests/support/ and the trainer's sources, compiled once.
define wasm_objects
$(WT)/$(1)/obj/%.o: src/%.c $(HEADERS) $(WT_CONFIG) | emcc-installed $(WT)/$(1)/obj
	$(EMCC_RUN) $(WT_CFLAGS) $(2) -c $$< -o $$@
$(WT)/$(1)/obj/support_%.o: tests/support/%.c $(HEADERS) $(WT_CONFIG) | emcc-installed $(WT)/$(1)/obj
	$(EMCC_RUN) $(WT_CFLAGS) $(2) -c $$< -o $$@
$(WT)/$(1)/obj/train_%.o: $(TRAIN_DIR)/%.c $(TRAIN_HEADERS) $(HEADERS) $(WT_CONFIG) | emcc-installed $(WT)/$(1)/obj
	$(EMCC_RUN) $(WT_CFLAGS) $(2) -c $$< -o $$@
$(WT)/$(1)/libsaccade.a: $(patsubst src/%.c,$(WT)/$(1)/obj/%.o,$(LIB_SRC))
	rm -f $$@ && $(EMAR) rcs $$@ $$^
$(WT)/$(1)/libtrain.a: $(patsubst $(TRAIN_DIR)/%.c,$(WT)/$(1)/obj/train_%.o,$(TRAIN_SRC))
	rm -f $$@ && $(EMAR) rcs $$@ $$^
$(WT)/$(1)/obj:
	mkdir -p $$@
endef

# wasm_programs(program dir, object build, compile flags, link flags, linked objects):
# tests/<name>.c linked with that build's archive (and the given objects) into
# $(WT)/<program dir>/<name>.js: the checked builds' canaries (tests/wasm/*_canary.c).
wt_test_objects = $(patsubst tests/support/%.c,$(WT)/$(1)/obj/support_%.o,$(SUPPORT_SRC)) $(WT)/$(1)/libtrain.a
define wasm_programs
$(WT)/$(1)/%.js: tests/%.c $(5) $(WT)/$(2)/libsaccade.a $(HEADERS) $(TRAIN_HEADERS) $(WT_CONFIG) | $(WT)/package.json
	@mkdir -p $$(@D)
	$(EMCC_RUN) $(WT_CFLAGS) $(3) $$< $(5) $(WT)/$(2)/libsaccade.a $(4) -o $$@
endef

$(eval $(call wasm_objects,mt,-msimd128 -pthread))
$(eval $(call wasm_objects,st,-msimd128))
$(eval $(call wasm_objects,plain,))
$(eval $(call wasm_objects,asan,$(WT_ASAN)))
$(eval $(call wasm_programs,safe,mt,-msimd128 -pthread,$(WT_SAFE_LINK),$(call wt_test_objects,mt)))
$(eval $(call wasm_programs,asan,asan,$(WT_ASAN),$(WT_ASAN_LINK),$(call wt_test_objects,asan)))

# wasm_suite(program dir, object build, compile flags, link flags, linked objects, tests): the
# tests as one program, $(WT)/<dir>/suite.js (tests/wasm/suite.c: each test's main compiled as
# <name>_main), and per test a two-line $(WT)/<dir>/<name>.js that runs it as `node suite.js
# <name>` would, for run_c.sh. The list is rewritten only when it changes (a test added to
# tests/ changes no file make would see otherwise). A wasm link takes 3-5 s: one per test and build was a third of
# CI's build time. The kernel tests need only the library; the checked builds run every test,
# so they also link the support objects and the trainer (wt_test_objects).
define wasm_suite
$(WT)/$(1)/tests/%.o: tests/%.c $(HEADERS) $(TRAIN_HEADERS) $(WT_CONFIG) | emcc-installed
	@mkdir -p $$(@D)
	$(EMCC_RUN) $(WT_CFLAGS) $(3) -Dmain=$$*_main -c $$< -o $$@
$(WT)/$(1)/tests/suite_tests.h: FORCE
	@mkdir -p $$(@D)
	@printf 'SUITE(%s)\n' $(6) | cmp -s - $$@ || printf 'SUITE(%s)\n' $(6) > $$@
$(WT)/$(1)/suite.js: tests/wasm/suite.c $(WT)/$(1)/tests/suite_tests.h $(patsubst %,$(WT)/$(1)/tests/%.o,$(6)) \
  $(5) $(WT)/$(2)/libsaccade.a | $(WT)/package.json
	$(EMCC_RUN) $(WT_CFLAGS) $(3) -I$(WT)/$(1)/tests tests/wasm/suite.c \
	  $(patsubst %,$(WT)/$(1)/tests/%.o,$(6)) $(5) $(WT)/$(2)/libsaccade.a $(4) -o $$@
$(patsubst %,$(WT)/$(1)/%.js,$(6)): $(WT)/$(1)/%.js: $(WT)/$(1)/suite.js
	printf "process.argv.splice(2, 0, '%s');\nrequire('./suite.js');\n" $$* > $$@
endef
$(eval $(call wasm_suite,mt,mt,-msimd128 -pthread,$(WT_KERNEL_LINK) $(WT_MT_LINK),,$(WT_KERNEL_TESTS)))
$(eval $(call wasm_suite,st,st,-msimd128,$(WT_KERNEL_LINK),,$(WT_KERNEL_TESTS)))
$(eval $(call wasm_suite,plain,plain,,$(WT_KERNEL_LINK),,$(WT_KERNEL_TESTS)))
$(eval $(call wasm_suite,safe,mt,-msimd128 -pthread,$(WT_SAFE_LINK),$(call wt_test_objects,mt),$(WT_SAFE_TESTS)))
$(eval $(call wasm_suite,asan,asan,$(WT_ASAN),$(WT_ASAN_LINK),$(call wt_test_objects,asan),$(WT_SAFE_TESTS)))

# Node 20's V8 validates the relaxed dot product (--experimental-wasm-relaxed-simd) but computes
# it wrong, so the relaxed test_matmul is a web program (single-threaded: Chromium gives
# pthreads only to cross-origin isolated pages) that scripts/run-chromium.mjs runs in Chromium.
# relaxed_build(name, kernels.c flags): build/wasm-tests/<name>-st (the library) and <name>-web
# (the programs). `relaxed-forced` always takes the kernels' 7-bit relaxed paths
# (SAC_RELAXED_PATH=1), which the engine's lowering without AVX-VNNI would otherwise turn away
# from (Q8_0's unsigned 8-bit path still asks the engine: only vpdpbusd computes it; the default
# run takes it where the CPU has AVX-VNNI, and then must report that lowering).
define relaxed_build
$(WT)/$(1)-st/obj/kernels.o: src/kernels.c $(HEADERS) $(WT_CONFIG) | emcc-installed
	@mkdir -p $$(@D)
	$(EMCC_RUN) $(WT_CFLAGS) -msimd128 -mrelaxed-simd $(2) -c $$< -o $$@
$(WT)/$(1)-st/libsaccade.a: $(patsubst src/%.c,$(WT)/st/obj/%.o,$(filter-out src/kernels.c,$(LIB_SRC))) $(WT)/$(1)-st/obj/kernels.o
	rm -f $$@ && $(EMAR) rcs $$@ $$^
$(WT)/$(1)-web/%.js: tests/%.c $(WT)/$(1)-st/libsaccade.a $(HEADERS) $(WT_CONFIG) scripts/relaxed-patch.mjs
	@mkdir -p $$(@D)
	$(EMCC_RUN) $(WT_CFLAGS) -msimd128 -mrelaxed-simd $$< $(WT)/$(1)-st/libsaccade.a -sEXIT_RUNTIME=1 \
	  -sENVIRONMENT=web -sSINGLE_FILE=1 -sINITIAL_MEMORY=256MB --profiling-funcs -o $$(@D)/unpatched-$$(@F)
	node --experimental-wasm-relaxed-simd scripts/relaxed-patch.mjs $$(@D)/unpatched-$$(@F) $$@
endef
$(eval $(call relaxed_build,relaxed,))
$(eval $(call relaxed_build,relaxed-forced,-DSAC_RELAXED_PATH=1))

# The repository's package.json declares ES modules; these programs are CommonJS.
$(WT)/package.json:
	@mkdir -p $(@D)
	echo '{"type":"commonjs"}' > $@

WT_KERNEL_PROGRAMS := $(foreach b,mt st plain,$(patsubst %,$(WT)/$(b)/%.js,$(WT_KERNEL_TESTS)))
WT_RELAXED_PROGRAM := $(WT)/relaxed-web/test_matmul.js
WT_RELAXED_FORCED_PROGRAM := $(WT)/relaxed-forced-web/test_matmul.js

.PHONY: test-wasm-kernels test-wasm-safe
# The native test_matmul is the reference: SIMD128 through SIMDe (src/simd.h), as the sanitizer
# build's is plain C; ISO C mode keeps gcc from contracting or reordering float operations.
WT_KERNEL_DEPS := $(WT_KERNEL_PROGRAMS) build/native/tests/test_matmul $(WT_RELAXED_PROGRAM) $(WT_RELAXED_FORCED_PROGRAM) \
  node_modules/.stamp
test-wasm-kernels: $(WT_KERNEL_DEPS)
	@TEST_JOBS=$(TEST_JOBS) tests/run_c.sh wasm-kernels $(WT_KERNEL_PROGRAMS) build/native/tests/test_matmul
	@arch=$$(uname -m); for name in default no-vnni relaxed-paths; do \
	  prog=$(WT_RELAXED_PROGRAM); flags=; log=$(WT)/relaxed-web/test_matmul.$$name.log; rm -f $$log; \
	  case $$name in no-vnni) flags=--without-avx-vnni;; \
	    relaxed-paths) prog=$(WT_RELAXED_FORCED_PROGRAM); flags=--without-avx-vnni;; esac; \
	  if [ -n "$$flags" ] && [ "$$arch" != x86_64 ]; then \
	    echo "[wasm-relaxed-web:$$name] skipped: V8's lowering without AVX-VNNI is x86-64's"; continue; fi; \
	  node scripts/run-chromium.mjs $$flags --log=$$log $$prog >/dev/null; rc=$$?; \
	  grep -E '^(FAIL|test_matmul: [0-9]+ passed)|CHECK|uncaught|timed out' $$log | head -20; \
	  if [ $$rc != 0 ]; then echo "[wasm-relaxed-web:$$name] test_matmul failed in Chromium (exit $$rc)"; exit 1; fi; \
	done
	@native=build/native/tests/test_matmul.log; plain=build/asan/tests/test_matmul.log; status=0; \
	ref=$$(grep -o 'results hash [0-9a-f]*' $$native); \
	grep -q 'kernels compiled with SIMD128 from SIMDe' $$native || { \
	  echo "[native] test_matmul did not run the SIMD128 kernels (SIMDe)"; status=1; }; \
	if [ ! -e $$plain ] || [ build/asan/tests/test_matmul -nt $$plain ]; then \
	  echo "[native-plain] skipped: no $$plain of the current build (make test-asan writes it)"; \
	elif ! grep -q 'kernels compiled as plain C' $$plain; then \
	  echo "[native-plain] $$plain: test_matmul did not run the plain C kernels"; status=1; \
	elif [ -z "$$ref" ] || [ "$$(grep -o 'results hash [0-9a-f]*' $$plain)" != "$$ref" ]; then \
	  echo "[native-plain] test_matmul: plain C (sanitizer build) differs from the native SIMD128 build: '$$ref'"; status=1; \
	else echo "[native-plain] test_matmul: plain C (sanitizer build) is bitwise equal to the native SIMD128 build ($$ref)"; fi; \
	for b in mt st plain relaxed-web:default relaxed-web:no-vnni relaxed-web:relaxed-paths; do \
	  case $$b in relaxed-web:*) log=$(WT)/relaxed-web/test_matmul.$${b#*:}.log;; *) log=$(WT)/$$b/test_matmul.js.log;; esac; \
	  if [ $$b != relaxed-web:default ] && [ "$$(uname -m)" != x86_64 ] && [ ! -e $$log ]; then continue; fi; \
	  hash=$$(grep -o 'results hash [0-9a-f]*' $$log); \
	  if [ -z "$$ref" ] || [ "$$hash" != "$$ref" ]; then \
	    echo "[wasm-$$b] test_matmul: '$$hash' differs from native: '$$ref'"; status=1; \
	  else echo "[wasm-$$b] test_matmul: results are bitwise equal to native ($$ref)"; fi; \
	  if [ $$b != plain ] && ! grep -q 'kernels compiled with wasm SIMD128' $$log; then \
	    echo "[wasm-$$b] test_matmul did not run the SIMD128 kernels"; status=1; fi; \
	  case $$b in relaxed-web:*) \
	    grep -q 'kernels compiled with wasm relaxed SIMD' $$log || { \
	      echo "[wasm-$$b] test_matmul did not run the relaxed-SIMD kernels"; status=1; }; \
	    echo "[wasm-$$b] $$(head -1 $$log)"; \
	    if [ $$b != relaxed-web:default ] && ! grep -q '^relaxed dot lowering: saturating' $$log; then \
	      echo "[wasm-$$b] --without-avx-vnni did not give V8's lowering without AVX-VNNI"; status=1; fi; \
	    if [ $$b = relaxed-web:default ] && grep -qw avx_vnni /proc/cpuinfo && ! grep -qw avx_vnni_int8 /proc/cpuinfo \
	      && ! grep -q '^relaxed dot lowering: exact, unsigned' $$log; then \
	      echo "[wasm-$$b] this CPU has AVX-VNNI but V8's relaxed dot was not vpdpbusd: Q8_0's unsigned paths went untested"; \
	      status=1; fi;; \
	  esac; \
	done; exit $$status

# Each build's canary (tests/wasm/*_canary.c) must crash with its checker's message: the checks
# are really on. canary(program, expected message, name)
canary = if node $(1) >$(1).log 2>&1 || ! grep -q '$(2)' $(1).log; then \
	  cat $(1).log; echo "wasm: $(3) did not catch its canary"; exit 1; \
	else echo "wasm: $(3) caught its canary ($(2))"; fi

WT_SAFE_PROGRAMS := $(patsubst %,$(WT)/safe/%.js,$(WT_SAFE_TESTS))
WT_ASAN_PROGRAMS := $(patsubst %,$(WT)/asan/%.js,$(WT_SAFE_TESTS))
WT_SAFE_DEPS := $(WT_SAFE_PROGRAMS) $(WT_ASAN_PROGRAMS) $(WT)/safe/wasm/safe_heap_canary.js $(WT)/asan/wasm/asan_canary.js
test-wasm-safe: $(WT_SAFE_DEPS)
	@TEST_JOBS=$(TEST_JOBS) tests/run_c.sh wasm-safe-heap $(WT_SAFE_PROGRAMS)
	@$(call canary,$(WT)/safe/wasm/safe_heap_canary.js,segmentation fault,SAFE_HEAP)
	@TEST_JOBS=$(TEST_JOBS) tests/run_c.sh wasm-asan $(WT_ASAN_PROGRAMS)
	@$(call canary,$(WT)/asan/wasm/asan_canary.js,heap-buffer-overflow,AddressSanitizer)
