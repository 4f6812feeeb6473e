# saccade — `make` builds everything, `make test` runs every test, `make demo` serves the page.
# (The include lines below are placed after the flavour rules, whose variables they use.)
SHELL := /bin/bash
.DEFAULT_GOAL := all
# Keep the objects that only pattern rules name (tests/support): make would delete them after
# each build as intermediate files and then rebuild them every time.
.SECONDARY:

CC       := gcc
CLANG    := clang
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wvla
# -ffp-contract=off: no fused multiply-adds, which wasm does not have: native and wasm results
# must be the same bits (GCC's default in ISO C mode already; said here so that no -std=gnu11 or
# compiler change undoes it).
BASE     := -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -g -ffp-contract=off -Isrc -Itests -Itests/support $(WARN)
# 256-bit vectors: on AVX-512 CPUs (-march=native = cooperlake here) gcc 12's 512-bit code for the
# kernels ran 2.8x slower (Q8_0 decode 15.8 vs 44.4 tokens/s, 1 thread); results are the same bits.
# The native kernels take their SIMD128 paths through SIMDe (src/simd.h, libsimde-dev).
NATIVE_CFLAGS := $(BASE) -O3 -march=native -mprefer-vector-width=256
# (SAC_POISON_FRESH, here and in the fuzz build: the KV cache starts as NaN bytes rather than as
# malloc left it, context.c; SAC_PLAIN_C: the sanitizers check the plain C paths, which the
# native build no longer runs, and the wasm sanitizer builds the SIMD128 ones)
ASAN_CFLAGS   := $(BASE) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -DSAC_POISON_FRESH -DSAC_PLAIN_C
# libFuzzer's coverage on the library; the fuzz targets link with -fsanitize=fuzzer.
FUZZ_CFLAGS   := $(BASE) -O1 -fsanitize=fuzzer-no-link,address,undefined -DSAC_POISON_FRESH -DSAC_PLAIN_C
LDLIBS   := -lm -pthread
# Jobs for building the tests' programs, for running the C test programs (tests/run_c.sh) and
# for the node --test files of test-js and test-web.
TEST_JOBS ?= $(shell nproc)

LIB_SRC     := $(filter-out src/cli.c,$(wildcard src/*.c))
SUPPORT_SRC := $(wildcard tests/support/*.c)
TEST_SRC    := $(wildcard tests/test_*.c)
HEADERS     := $(wildcard src/*.h tests/*.h tests/support/*.h)
TEST_NAMES  := $(notdir $(basename $(TEST_SRC)))
# The trainer's library (scripts/train without its mains): the trainer tools and the tests that
# train or evaluate link it as an archive, which pulls in only the files a program uses.
TRAIN_DIR     := scripts/train
TRAIN_SRC     := $(filter-out %_main.c,$(wildcard $(TRAIN_DIR)/*.c))
TRAIN_HEADERS := $(wildcard $(TRAIN_DIR)/*.h)
# The shipped-model test runs natively only: ~34 s under ASan, and the random-model tests
# already cover the same code under the sanitizers.
ASAN_TEST_NAMES := $(filter-out test_models_shipped,$(TEST_NAMES))

# The objects of tests/support/*.c in build flavour $(1); every test program links them.
support_objs = $(patsubst tests/support/%.c,build/$(1)/obj/support_%.o,$(SUPPORT_SRC))

# build/<flavour>/{obj,tests}: native (optimised), asan (sanitised) and fuzz (clang, libFuzzer's
# coverage) builds of the same sources, by compiler $(3) with flags $(2), once $(4) is there.
# Every test links the support objects, the trainer's archive and the library's.
define flavour
build/$(1)/obj/%.o: src/%.c $(HEADERS) | build/$(1)/obj $(4)
	$(3) $(2) -c $$< -o $$@
build/$(1)/obj/support_%.o: tests/support/%.c $(HEADERS) | build/$(1)/obj $(4)
	$(3) $(2) -c $$< -o $$@
build/$(1)/obj/train_%.o: $(TRAIN_DIR)/%.c $(TRAIN_HEADERS) $(HEADERS) | build/$(1)/obj $(4)
	$(3) $(2) -I$(TRAIN_DIR) -c $$< -o $$@
build/$(1)/libsaccade.a: $(patsubst src/%.c,build/$(1)/obj/%.o,$(LIB_SRC))
	rm -f $$@ && ar rcs $$@ $$^
build/$(1)/libtrain.a: $(patsubst $(TRAIN_DIR)/%.c,build/$(1)/obj/train_%.o,$(TRAIN_SRC))
	rm -f $$@ && ar rcs $$@ $$^
build/$(1)/tests/%: tests/%.c $(call support_objs,$(1)) build/$(1)/libtrain.a build/$(1)/libsaccade.a \
    $(HEADERS) $(TRAIN_HEADERS) | build/$(1)/tests
	$(3) $(2) -I$(TRAIN_DIR) $$< $(call support_objs,$(1)) build/$(1)/libtrain.a build/$(1)/libsaccade.a \
	  -o $$@ $(LDLIBS)
build/$(1)/obj build/$(1)/tests:
	mkdir -p $$@
endef
# What the native build needs beyond gcc, when a fresh machine lacks it, in one apt run: SIMDe's
# headers (src/simd.h) and clang (the kernels' compiler, KERNELS_CC below).
SIMDE_HEADER := /usr/include/simde/wasm/simd128.h
.PHONY: native-deps-installed
native-deps-installed:
	@pkgs=""; test -e $(SIMDE_HEADER) || pkgs="$$pkgs libsimde-dev"; \
	  command -v $(CLANG) >/dev/null || pkgs="$$pkgs clang"; \
	  [ -z "$$pkgs" ] || bash scripts/install-deps.sh $$pkgs
$(eval $(call flavour,native,$(NATIVE_CFLAGS),$(CC),native-deps-installed))
# The kernels natively by clang: its code for SIMDe's operations ran faster than gcc 12's
# (bench_kernels, 1 thread, AMD EPYC Zen 1, 768x3072: Q8_0 matmat 26 -> 32 GFLOP/s, Q4_0 26-27 ->
# 33, Q4_K matvec 5.5 -> 6.4 GB/s), with the same results (test_matmul's hash).
KERNELS_CC := $(CLANG)
build/native/obj/kernels.o: src/kernels.c $(HEADERS) | build/native/obj native-deps-installed
	$(KERNELS_CC) $(NATIVE_CFLAGS) -c $< -o $@
$(eval $(call flavour,asan,$(ASAN_CFLAGS),$(CC)))
$(eval $(call flavour,fuzz,$(FUZZ_CFLAGS),$(CLANG)))

# The trainer, the quantizer and the shipped models (`make models`).
include scripts/models.mk
# The WebAssembly builds and the JS package (`make wasm`, `make test-js`, `make bench-wasm`).
include scripts/wasm.mk
# The trainer's wasm module, loaded only by train() (`make wasm-train`); the JS and page tests train.
include scripts/train-wasm.mk
test-js test-web: wasm-train build/tools/train_task
demo all: wasm-train
# The demo page (`make demo`, `make test-web`, `make bench-web`).
include scripts/web.mk
# The C tests built with Emscripten and run in Node (`make test-wasm-kernels`, `make test-wasm-safe`).
include scripts/wasm-tests.mk
# The npm package in Vite, esbuild and webpack sample apps (`make test-bundlers`).
include scripts/bundlers.mk

# The native CLI's --version: package.json's version.
SAC_VERSION := $(shell sed -n 's/^  "version": "\(.*\)",$$/\1/p' package.json)
build/saccade: src/cli.c build/native/libsaccade.a $(HEADERS) package.json
	$(CC) $(NATIVE_CFLAGS) -DSAC_VERSION='"$(SAC_VERSION)"' src/cli.c build/native/libsaccade.a -o $@ $(LDLIBS)

# Tools: random models for benchmarks and the JS tests.
build/tools/make_model: scripts/make_model.c build/native/libsaccade.a $(call support_objs,native) $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) $< $(call support_objs,native) build/native/libsaccade.a -o $@ $(LDLIBS)

# Plain streaming-read bandwidth, the ceiling of decode (make bench-wasm prints it beside decode).
build/tools/bench_stream: scripts/bench_stream.c
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) $< -o $@ -pthread

build/tools/bench_tokenizer: scripts/bench_tokenizer.c build/native/libsaccade.a build/native/obj/support_files.o $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) $< build/native/obj/support_files.o build/native/libsaccade.a -o $@ $(LDLIBS)

.PHONY: all native deps test test-c test-asan test-symbols fuzz clean bench
all: native wasm
native: build/saccade build/tools/make_model build/tools/bench_tokenizer

# Installs what a fresh Debian machine lacks (compilers' runtimes, emscripten, node, npm).
deps:
	@bash scripts/install-deps.sh

TEST_C_PROGRAMS    := $(addprefix build/native/tests/,$(TEST_NAMES))
TEST_ASAN_PROGRAMS := $(addprefix build/asan/tests/,$(ASAN_TEST_NAMES))
test-c: $(TEST_C_PROGRAMS)
	@TEST_JOBS=$(TEST_JOBS) tests/run_c.sh c-native $^

test-asan: $(TEST_ASAN_PROGRAMS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  TEST_JOBS=$(TEST_JOBS) tests/run_c.sh c-asan $^

# Every global the library defines carries the sac_ prefix, natively and in wasm (emnm).
TEST_SYMBOLS_LIBS := build/native/libsaccade.a build/wasm-tests/mt/libsaccade.a
test-symbols: $(TEST_SYMBOLS_LIBS)
	@tests/exported_symbols.sh build/native/libsaccade.a
	@NM=emnm tests/exported_symbols.sh build/wasm-tests/mt/libsaccade.a

# libFuzzer over the GGUF parser and model loader (and the tokenizer), seconds per target.
FUZZ_SECONDS ?= 20
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_PROGRAMS := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c build/fuzz/libsaccade.a $(call support_objs,fuzz) $(HEADERS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(call support_objs,fuzz) build/fuzz/libsaccade.a -o $@ $(LDLIBS)
fuzz: deps $(FUZZ_PROGRAMS)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) TEST_JOBS=$(TEST_JOBS) tests/fuzz/run.sh $(FUZZ_PROGRAMS)

# `make test` first builds everything its stages run with every core (make -j$(TEST_JOBS), a
# sub-make), then runs the stages one after another, in the order listed (the C test programs
# and the fuzzers run TEST_JOBS at once). Building serially took half of CI's 27 minutes on 2
# cores.
TEST_PROGRAMS := $(TEST_C_PROGRAMS) $(TEST_ASAN_PROGRAMS) $(TEST_SYMBOLS_LIBS) $(FUZZ_PROGRAMS) \
  $(WT_KERNEL_DEPS) $(WT_SAFE_DEPS) $(JS_TEST_DEPS) $(WEB_TEST_DEPS) $(BUNDLER_TEST_DEPS) wasm-train build/tools/train_task
.PHONY: test-programs test-build
test-programs: $(TEST_PROGRAMS)
test-build: deps
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) test-programs
test: deps test-build test-c test-asan test-symbols test-wasm-kernels test-wasm-safe fuzz test-js test-web test-bundlers

bench: native
	scripts/bench_native.sh

clean:
	rm -rf build dist web/bundle
