/* tokenizer_char.c — character vocabularies, for saccade's own character-level models.
 *
 * The GGUF format (what the trainer writes):
 *   tokenizer.ggml.model       string   "char"
 *   tokenizer.ggml.tokens      [string] one Unicode character per normal token, as UTF-8
 *                                       ("a", "\n", "é", "😀"); no character twice
 *   tokenizer.ggml.token_type  [i32]    optional; 1 normal (the default), 3 control for
 *                                       tokens that are no character ("<bos>", "<eos>",
 *                                       "<pad>"), 2 for the unknown token ("<unk>")
 *   tokenizer.ggml.bos_token_id, .eos_token_id, .unknown_token_id   u32, optional
 *   tokenizer.ggml.add_bos_token, .add_eos_token                    bool, optional (false)
 * Normal tokens that are not exactly one well-formed character are rejected at load.
 * Encoding maps each character to its token; a character the vocabulary lacks becomes the
 * unknown token, or, without one, fails with SAC_ERR_ARG naming the character and its
 * byte offset. Control tokens are read from the text only with SAC_TOKENIZE_SPECIAL.
 * Decoding writes a normal token's character; control and unknown tokens decode to nothing. */
#include "token_lookup.h"
#include "tokenizer_encoders.h"
#include "unicode.h"

sac_status sac_char_encode(const sac_tokenizer *tok, const char *text, size_t len, size_t offset,
                           sac_token_sink *sink, sac_error *err) {
    for (size_t p = 0; p < len;) {
        uint32_t cp;
        size_t clen;
        sac_utf8_next((const uint8_t *)text + p, len - p, &cp, &clen); /* well-formed: the caller sanitised */
        int32_t id = sac_token_lookup(tok, text + p, clen);
        if (id < 0) id = tok->unk;
        if (id < 0)
            return sac_fail(err, SAC_ERR_ARG, "character U+%04X ('%.*s') at byte offset %zu is not in the vocabulary",
                            (unsigned)cp, (int)clen, text + p, offset + p);
        sac_sink_push(sink, id);
        p += clen;
    }
    return SAC_OK;
}
