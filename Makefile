# saccade — `make` builds everything, `make test` runs every test, `make demo` serves the page.
# (The include lines below are placed after the flavour rules, whose variables they use.)
SHELL := /bin/bash
.DEFAULT_GOAL := all

CC       := gcc
CLANG    := clang
WARN     := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wstrict-prototypes -Wvla
BASE     := -std=c11 -D_POSIX_C_SOURCE=200809L -pthread -g -Isrc -Itests -Itests/support $(WARN)
NATIVE_CFLAGS := $(BASE) -O3 -march=native
ASAN_CFLAGS   := $(BASE) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
LDLIBS   := -lm -pthread

LIB_SRC     := $(filter-out src/cli.c,$(wildcard src/*.c))
SUPPORT_SRC := $(wildcard tests/support/*.c)
TEST_SRC    := $(wildcard tests/test_*.c)
HEADERS     := $(wildcard src/*.h tests/*.h tests/support/*.h)
TEST_NAMES  := $(notdir $(basename $(TEST_SRC)))

# build/<flavour>/{obj,tests}: native (optimised) and asan (sanitised) builds of the same sources.
define flavour
build/$(1)/obj/%.o: src/%.c $(HEADERS) | build/$(1)/obj
	$(CC) $(2) -c $$< -o $$@
build/$(1)/obj/support_%.o: tests/support/%.c $(HEADERS) | build/$(1)/obj
	$(CC) $(2) -c $$< -o $$@
build/$(1)/libsaccade.a: $(patsubst src/%.c,build/$(1)/obj/%.o,$(LIB_SRC))
	rm -f $$@ && ar rcs $$@ $$^
build/$(1)/tests/%: tests/%.c build/$(1)/libsaccade.a $(patsubst tests/support/%.c,build/$(1)/obj/support_%.o,$(SUPPORT_SRC)) $(HEADERS) | build/$(1)/tests
	$(CC) $(2) $$< $(patsubst tests/support/%.c,build/$(1)/obj/support_%.o,$(SUPPORT_SRC)) build/$(1)/libsaccade.a -o $$@ $(LDLIBS)
build/$(1)/obj build/$(1)/tests:
	mkdir -p $$@
endef
$(eval $(call flavour,native,$(NATIVE_CFLAGS)))
$(eval $(call flavour,asan,$(ASAN_CFLAGS)))

# The trainer, the quantizer and the shipped models (`make models`).
include scripts/models.mk
# The WebAssembly builds and the JS package (`make wasm`, `make test-js`, `make bench-wasm`).
include scripts/wasm.mk
# The demo page (`make demo`, `make test-web`, `make bench-web`).
include scripts/web.mk

build/saccade: src/cli.c build/native/libsaccade.a $(HEADERS)
	$(CC) $(NATIVE_CFLAGS) src/cli.c build/native/libsaccade.a -o $@ $(LDLIBS)

# Tools: random models for benchmarks and the JS tests.
build/tools/make_model: scripts/make_model.c build/native/libsaccade.a $(patsubst tests/support/%.c,build/native/obj/support_%.o,$(SUPPORT_SRC)) $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) $< $(patsubst tests/support/%.c,build/native/obj/support_%.o,$(SUPPORT_SRC)) build/native/libsaccade.a -o $@ $(LDLIBS)

build/tools/bench_tokenizer: scripts/bench_tokenizer.c build/native/libsaccade.a build/native/obj/support_files.o $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) $< build/native/obj/support_files.o build/native/libsaccade.a -o $@ $(LDLIBS)

.PHONY: all native deps test test-c test-asan test-wasm-kernels fuzz clean bench
all: native wasm
native: build/saccade build/tools/make_model build/tools/bench_tokenizer

# Installs what a fresh Debian machine lacks (compilers' runtimes, emscripten, node packages).
deps:
	@bash scripts/install-deps.sh

test-c: $(addprefix build/native/tests/,$(TEST_NAMES))
	@tests/run_c.sh build/native/tests c-native

test-asan: $(addprefix build/asan/tests/,$(TEST_NAMES))
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  tests/run_c.sh build/asan/tests c-asan

# libFuzzer over the GGUF parser and model loader (and the tokenizer), seconds per target.
FUZZ_SECONDS ?= 20
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(HEADERS)
	@mkdir -p build/fuzz
	$(CLANG) -std=c11 -D_POSIX_C_SOURCE=200809L -g -O1 -Isrc -Itests -Itests/support -fsanitize=fuzzer,address,undefined \
	  $< $(LIB_SRC) tests/support/files.c -o $@ -lm -pthread
fuzz: deps $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC)) build/tools/make_model
	@mkdir -p build/fuzz/corpus-fuzz_model
	@for a in gpt2 llama encdec; do \
	  [ -f build/fuzz/corpus-fuzz_model/seed-$$a.gguf ] || build/tools/make_model build/fuzz/corpus-fuzz_model/seed-$$a.gguf --arch $$a --type q4_0; \
	done
	@for f in $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC)); do \
	  mkdir -p build/fuzz/corpus-$$(basename $$f); \
	  echo "fuzzing $$f for $(FUZZ_SECONDS)s"; \
	  if ! $$f -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -print_final_stats=0 \
	      build/fuzz/corpus-$$(basename $$f) tests/fuzz/seeds > build/fuzz/$$(basename $$f).log 2>&1; then \
	    tail -40 build/fuzz/$$(basename $$f).log; echo "fuzz: $$f found a crash"; exit 1; \
	  fi; \
	  tail -2 build/fuzz/$$(basename $$f).log; \
	done

# The kernels' wasm SIMD128 and futex paths, built with Emscripten and run in Node.
test-wasm-kernels: deps
	@scripts/test-wasm-kernels.sh

test: deps test-c test-asan test-wasm-kernels fuzz test-js test-web

bench: native
	scripts/bench_native.sh

clean:
	rm -rf build dist
