# scripts/models.mk — the trainer and the quantizer, the trainer's tests, and the shipped models
# (included by the Makefile after its flavour rules; uses CC, *_CFLAGS, LDLIBS, HEADERS, SUPPORT_SRC).
#
#   build/tools/train      character-level GPT-2 trainer (scripts/train/train_main.c)
#   build/tools/quantize   GGUF → GGUF with matrices in F16, Q8_0 or Q4_0 (scripts/train/quantize_main.c)
#   make models            trains Model A on ../shared/data/tinyshakespeare.txt (long: ~60 min on
#                          2 cores; resumes from its checkpoint when interrupted) and writes
#                          models/shakespeare-char-q8_0.gguf; not part of `make test`

TRAIN_DIR     := scripts/train
TRAIN_LIB_SRC := $(addprefix $(TRAIN_DIR)/,ops.c gpt2.c optim.c data.c trainer.c eval_gguf.c quantize.c file_io.c)
TRAIN_HEADERS := $(wildcard $(TRAIN_DIR)/*.h)

build/tools/train: $(TRAIN_DIR)/train_main.c $(TRAIN_LIB_SRC) $(TRAIN_HEADERS) build/native/libsaccade.a $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) -I$(TRAIN_DIR) $< $(TRAIN_LIB_SRC) build/native/libsaccade.a -o $@ $(LDLIBS)

build/tools/quantize: $(TRAIN_DIR)/quantize_main.c $(TRAIN_DIR)/quantize.c $(TRAIN_DIR)/file_io.c $(TRAIN_HEADERS) \
                      build/native/libsaccade.a $(HEADERS)
	@mkdir -p build/tools
	$(CC) $(NATIVE_CFLAGS) -I$(TRAIN_DIR) $< $(TRAIN_DIR)/quantize.c $(TRAIN_DIR)/file_io.c build/native/libsaccade.a \
	  -o $@ $(LDLIBS)

# tests/test_train.c also links the trainer's sources: an explicit rule, which make prefers to
# the flavour's pattern rule for build/<flavour>/tests/%.
define train_test
build/$(1)/tests/test_train: tests/test_train.c $(TRAIN_LIB_SRC) $(TRAIN_HEADERS) build/$(1)/libsaccade.a \
    $(patsubst tests/support/%.c,build/$(1)/obj/support_%.o,$(SUPPORT_SRC)) $(HEADERS) | build/$(1)/tests
	$(CC) $(2) -I$(TRAIN_DIR) $$< $(TRAIN_LIB_SRC) $(patsubst tests/support/%.c,build/$(1)/obj/support_%.o,$(SUPPORT_SRC)) \
	  build/$(1)/libsaccade.a -o $$@ $(LDLIBS)
endef
$(eval $(call train_test,native,$(NATIVE_CFLAGS)))
$(eval $(call train_test,asan,$(ASAN_CFLAGS)))

# ------------------------------------------------------------------------------------------
# Model A: gpt2 architecture, character vocabulary, Tiny Shakespeare (first 90% train, last
# 10% validation). The configuration below was sized from the trainer's measured throughput
# (see scripts/train/README.md). Edit MODEL_A_ARGS to change it: the old checkpoint is then
# discarded and training starts over.
# ------------------------------------------------------------------------------------------
SHAKESPEARE  := ../shared/data/tinyshakespeare.txt
MODEL_A_DIR  := build/models
MODEL_A_ARGS := --layers 4 --embd 256 --heads 4 --ctx 128 --batch 12 --steps 4000 \
                --lr 1e-3 --min-lr 1e-4 --warmup 100 --wd 0.1 --beta2 0.99 --clip 1.0 --seed 1337 \
                --threads 2 --eval-every 250 --eval-windows 128 --checkpoint-every 250
MODEL_A_ARGS_FILE := $(MODEL_A_DIR)/shakespeare-char.args

# The arguments live in a file so that changing them (and only that) retrains.
$(MODEL_A_ARGS_FILE): FORCE
	@mkdir -p $(MODEL_A_DIR)
	@echo '$(MODEL_A_ARGS)' | cmp -s - $@ || { echo '$(MODEL_A_ARGS)' > $@; rm -f $(MODEL_A_DIR)/shakespeare-char.ckpt; }

# The trainer is an order-only prerequisite: rebuilding the engine does not retrain the model.
$(MODEL_A_DIR)/shakespeare-char-f32.gguf: $(SHAKESPEARE) $(MODEL_A_ARGS_FILE) | build/tools/train
	build/tools/train --data $(SHAKESPEARE) --out $@ $(MODEL_A_ARGS) --name "saccade shakespeare-char" \
	  --checkpoint $(MODEL_A_DIR)/shakespeare-char.ckpt --log $(MODEL_A_DIR)/shakespeare-char.log

models/shakespeare-char-q8_0.gguf: $(MODEL_A_DIR)/shakespeare-char-f32.gguf | build/tools/quantize build/tools/train
	@mkdir -p models
	build/tools/quantize $< $@ --type q8_0
	build/tools/train --data $(SHAKESPEARE) --eval-model $@ --ctx 128 --threads 2

.PHONY: models FORCE
FORCE:
models: models/shakespeare-char-q8_0.gguf
