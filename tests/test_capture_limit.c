/* test_capture_limit.c — the capture of a context the build cannot address is refused, not
 * wrapped: the public API only, so the same program runs natively and built for wasm32.
 *
 * The case: a llama model with 2 layers and 64 heads in a context of 8192 tokens. Its full
 * self-attention capture is 2·64·8192·8193/2 floats = 17.2 GB, which 32-bit size_t wrapped to
 * 2 MB: rows past ~90 tokens were then written beyond the buffer. Built for wasm32 the context
 * must be refused with a message naming the size; natively (64-bit) it is accepted and every
 * captured row sums to one.
 *
 * wasm32 (SIZE_MAX = 4 GB): build this file with every source of src/ but cli.c and every
 * file of tests/support, e.g. from the repository root
 *   emcc -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -Isrc -Itests -Itests/support -msimd128
 *     tests/test_capture_limit.c $SRC $SUPPORT -sEXIT_RUNTIME=1 -sENVIRONMENT=node
 *     -sSINGLE_FILE=1 -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=4GB -o test_capture_limit.js
 * and run it with node (in a folder whose package.json says "type": "commonjs"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "saccade.h"
#include "test_models.h"
#include "types.h"

static void test_issue_model_capture(void) {
    test_model_spec s = test_spec("llama", SAC_TYPE_F32);
    s.n_embd = 128;
    s.n_head = 64;
    s.n_head_kv = 2;
    s.rope_dim = 2; /* head_dim 2 */
    test_model tm;
    CHECK(test_model_make(&s, &tm) == 0);
    sac_model *m = NULL;
    CHECK(sac_model_load(tm.bytes, tm.size, 0, &m) == SAC_OK);
    sac_context_params p = sac_context_default_params();
    p.n_ctx = 8192;
    p.capture_attention = 1;
    const uint64_t capture = 4ull * 2 * 64 * (8192ull * 8193 / 2);
    sac_context *ctx = NULL;
    sac_status st = sac_context_new(m, &p, &ctx);
    if (SIZE_MAX <= UINT32_MAX) {
        CHECK_MSG(st == SAC_ERR_NOMEM, "a %llu-byte capture in a 32-bit build: %s", (unsigned long long)capture,
                  sac_status_name(st));
        CHECK_MSG(strstr(sac_context_errmsg(ctx), "17181966336 bytes") &&
                      strstr(sac_context_errmsg(ctx), "shorter context"),
                  "%s", sac_context_errmsg(ctx));
        sac_context_free(ctx);
        /* turning capture on later is refused the same way */
        p.capture_attention = 0;
        CHECK(sac_context_new(m, &p, &ctx) == SAC_OK);
        CHECK(sac_attention_enable(ctx, 1) == SAC_ERR_NOMEM && sac_attention_enabled(ctx) == 0);
        CHECK(strstr(sac_context_errmsg(ctx), "shorter context") != NULL);
    } else {
        CHECK_MSG(st == SAC_OK, "%s", sac_context_errmsg(ctx));
    }
    /* what the context does capture is right: 120 tokens take rows past the 2 MB the
     * wrapped size allowed */
    const int n = 120;
    int32_t *tokens = malloc(n * sizeof *tokens);
    for (int i = 0; i < n; i++) tokens[i] = (i * 37 + 11) % s.n_vocab;
    if (st == SAC_OK && sac_attention_enabled(ctx)) {
        CHECK(sac_eval(ctx, tokens, n, NULL, 0) == SAC_OK);
        double worst = 0;
        for (int q = 0; q < n; q++) {
            const float *row;
            int32_t keys;
            CHECK(sac_attention_row(ctx, q, &row, &keys) == SAC_OK && keys == q + 1);
            for (int lh = 0; lh < 2 * 64; lh++) {
                double sum = 0;
                for (int j = 0; j <= q; j++) sum += row[(size_t)lh * keys + j];
                worst = fmax(worst, fabs(sum - 1.0));
            }
        }
        CHECK_MSG(worst <= 1e-5, "a captured row sums to 1 +- %.3g", worst);
    } else if (ctx) {
        CHECK(sac_eval(ctx, tokens, n, NULL, 0) == SAC_OK); /* without capture it runs */
    }
    free(tokens);
    sac_context_free(ctx);
    sac_model_free(m);
    test_model_free(&tm);
}

int main(void) {
    RUN(test_issue_model_capture);
    return check_summary("test_capture_limit");
}
