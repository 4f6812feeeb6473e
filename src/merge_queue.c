/* merge_queue.c — a binary min-heap of merge candidates, ordered by (key, left) so that
 * ties go to the leftmost pair, as llama.cpp's encoders break them. */
#include "merge_queue.h"

static int candidate_before(const sac_merge_candidate *a, const sac_merge_candidate *b) {
    return a->key < b->key || (a->key == b->key && a->left < b->left);
}

void sac_merge_queue_push(sac_merge_candidate *heap, size_t *n, sac_merge_candidate c) {
    size_t i = (*n)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!candidate_before(&c, &heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = c;
}

sac_merge_candidate sac_merge_queue_pop(sac_merge_candidate *heap, size_t *n) {
    sac_merge_candidate top = heap[0], last = heap[--*n];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *n) break;
        if (child + 1 < *n && candidate_before(&heap[child + 1], &heap[child])) child++;
        if (!candidate_before(&heap[child], &last)) break;
        heap[i] = heap[child];
        i = child;
    }
    if (*n > 0) heap[i] = last;
    return top;
}
