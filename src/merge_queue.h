/* merge_queue.h — the priority queue of candidate merges that the BPE (tokenizer_bpe.c) and
 * SentencePiece (tokenizer_spm.c) encoders share. It knows nothing of vocabularies: a
 * candidate is a key and two symbol positions, and each encoder decides what they mean. */
#ifndef SAC_MERGE_QUEUE_H
#define SAC_MERGE_QUEUE_H

#include <stddef.h>
#include <stdint.h>

/* A candidate merge of the adjacent symbols `left` and `right`, kept in a binary min-heap
 * ordered by (key, left): BPE keys are merge ranks, SentencePiece keys the negated token
 * score. `a` and `b` record what each encoder needs to recognise a candidate gone stale. */
typedef struct sac_merge_candidate {
    double key;
    int32_t left, right;
    int32_t a, b;
} sac_merge_candidate;

/* Adds c to the heap of *n candidates; the caller owns heap and sized it for *n + 1. */
void sac_merge_queue_push(sac_merge_candidate *heap, size_t *n, sac_merge_candidate c);
/* Removes and returns the first candidate; *n must be > 0. */
sac_merge_candidate sac_merge_queue_pop(sac_merge_candidate *heap, size_t *n);

#endif
