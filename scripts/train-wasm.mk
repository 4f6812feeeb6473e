# scripts/train-wasm.mk — the trainer as a third wasm module, loaded only when the JS library's
# train() is called, so the inference builds (dist/saccade-{mt,st}) do not grow. Included by the
# Makefile after scripts/wasm.mk, whose compiler, flags and library objects it reuses.
#
#   make wasm-train   dist/saccade-train-mt.{mjs,wasm,worker.js,worker.mjs}  SIMD128 + pthreads
#                     dist/saccade-train-st.{mjs,wasm}            SIMD128, single-threaded
#
# The module exports the training session of scripts/train/session.h (every sac_train_*
# function), sac_status_name, malloc and free; src/js/train.mjs drives it, loaded by
# src/js/instantiate.mjs like the inference builds (hence the same scripts/patch-glue.mjs).

WASM_TRAIN_SRC    := $(TRAIN_SRC)
WASM_TRAIN_MT_OBJ := $(patsubst $(TRAIN_DIR)/%.c,build/wasm-train/mt/%.o,$(WASM_TRAIN_SRC))
WASM_TRAIN_ST_OBJ := $(patsubst $(TRAIN_DIR)/%.c,build/wasm-train/st/%.o,$(WASM_TRAIN_SRC))
# The trainer needs the library's core only (GGUF writer, matmul, pool, quantizer's types);
# the linker drops what it does not reach from the exports.
WASM_TRAIN_LDFLAGS := $(subst createSaccade,createSaccadeTrainer,$(subst build/wasm/exports.json,build/wasm-train/exports.json,$(WASM_LDFLAGS)))

.PHONY: wasm-train
wasm-train: dist/saccade-train-mt.mjs dist/saccade-train-st.mjs dist/package.json

build/wasm-train/exports.json: $(TRAIN_DIR)/session.h scripts/wasm-exports.mjs | build/wasm-train
	node scripts/wasm-exports.mjs $(TRAIN_DIR)/session.h | node -e \
	  'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.stringify([...JSON.parse(s),"_sac_status_name"])))' > $@

build/wasm-train/mt/%.o: $(TRAIN_DIR)/%.c $(TRAIN_HEADERS) $(WASM_HEADERS) | emcc-installed build/wasm-train/mt
	$(EMCC_RUN) $(WASM_CFLAGS) -I$(TRAIN_DIR) $(WASM_MT_FLAGS) -c $< -o $@
build/wasm-train/st/%.o: $(TRAIN_DIR)/%.c $(TRAIN_HEADERS) $(WASM_HEADERS) | emcc-installed build/wasm-train/st
	$(EMCC_RUN) $(WASM_CFLAGS) -I$(TRAIN_DIR) -c $< -o $@

dist/saccade-train-mt.mjs: $(WASM_TRAIN_MT_OBJ) $(WASM_MT_OBJ) build/wasm-train/exports.json src/js/node-esm-shim.js \
    scripts/patch-glue.mjs | dist
	$(EMCC_RUN) $(WASM_MT_FLAGS) $(WASM_TRAIN_MT_OBJ) $(WASM_MT_OBJ) -o $@ $(WASM_TRAIN_LDFLAGS) $(WASM_MT_LINK)
	node scripts/patch-glue.mjs $@ dist/saccade-train-mt.worker.js dist/saccade-train-mt.worker.mjs
dist/saccade-train-st.mjs: $(WASM_TRAIN_ST_OBJ) $(WASM_ST_OBJ) build/wasm-train/exports.json src/js/node-esm-shim.js | dist
	$(EMCC_RUN) $(WASM_TRAIN_ST_OBJ) $(WASM_ST_OBJ) -o $@ $(WASM_TRAIN_LDFLAGS) $(WASM_ST_LINK)

build/wasm-train build/wasm-train/mt build/wasm-train/st:
	mkdir -p $@
