/*
 * exec/dyn_shuffle.c - the dynamic executor's ready list under the
 * shuffled serial switch (exec/dynamic.c's list_pop calls these when
 * graph_rt.shuffle says so): a random node to the head where only the
 * caller's thread takes, and a random take by CAS beside guest slots.
 * Out of the executor's own file: a test run's path, never a game's.
 */
#include "exec.h"

/* The shuffled serial switch (graph_rt.shuffle, RT_SHUFFLE_POPS): a
 * random published node trades places with the one at the head, which is
 * popped next. Only the caller's thread runs such a frame's nodes (no
 * worker, no guest slot; fiber tasks run on the threads that wait), so
 * plain moves (relaxed) are enough, and every slot up to tail is
 * published. */
void rt_dyn_shuffle_head(graph_rt *r, uint32_t h)
{
    uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);   /* relaxed: see above */
    if (t - h < 2 || h >= t)
        return;
    uint32_t j = h + rt_shuffle_draw(&r->shuf, t - h);
    uint32_t v = atomic_load_explicit(&r->nodes[j].slot, memory_order_relaxed);   /* relaxed: as above */
    atomic_store_explicit(&r->nodes[j].slot, atomic_load_explicit(&r->nodes[h].slot, memory_order_relaxed),
                          memory_order_relaxed);   /* relaxed: as above */
    atomic_store_explicit(&r->nodes[h].slot, v, memory_order_relaxed);   /* relaxed: as above */
}

/* The shuffled serial switch beside guest slots (RT_SHUFFLE_SHARED): a
 * guest that took a spawned fiber or hot node's task (or a pipeline's
 * hand-off) drains this list beside the caller, so the head swap above
 * would race it. Instead every take claims one slot with a CAS from the
 * published node to SLOT_TAKEN: the caller (the main thread, which alone
 * draws from r->shuf) starts its search at a random slot of [head, tail),
 * any other thread at the head (the oldest). head is then only where
 * searches start: a taker moves it over every taken slot at it
 * (advance_head), so that head == tail once the takers are done, as the
 * executor's polls (head < tail: work queued) expect. Pushes are
 * unchanged. Modelled in tests/models/shuffle_shared.pml (each node once,
 * none lost, head catches up; controls: the take as a load and a store,
 * head moved only from the taker's own slot). */
#define SLOT_TAKEN UINT32_MAX

/* seq_cst here and on the take's CAS: a taker's claim of slot h and the
 * move of head to h by another are a store-buffering pair (each writes
 * one word, then reads the other's); seq_cst makes at least one of them
 * see the other, so one of them moves head past h. */
static void advance_head(graph_rt *r)
{
    for (;;) {
        uint32_t h = atomic_load_explicit(&r->head, memory_order_seq_cst);
        if (h >= r->nnodes ||
            atomic_load_explicit(&r->nodes[h].slot, memory_order_seq_cst) != SLOT_TAKEN)
            return;
        /* (Failed: another taker moved it; look again from where it is.) */
        atomic_compare_exchange_strong_explicit(&r->head, &h, h + 1, memory_order_seq_cst,
                                                memory_order_seq_cst);
    }
}

uint32_t rt_dyn_take_shared(graph_rt *r)
{
    bool caller = dagrt_on_main_thread(r->rt);
    for (;;) {
        uint32_t h = atomic_load_explicit(&r->head, memory_order_seq_cst);   /* seq_cst: advance_head */
        /* relaxed: tail only bounds the search; each slot's load below
         * synchronises with its pusher. */
        uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
        if (h >= t)
            return NONE;
        uint32_t n = t - h, start = caller ? rt_shuffle_draw(&r->shuf, n) : 0;
        bool again = false;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t j = h + (start + k) % n;
            /* acquire: pairs with list_push's release (exec/dynamic.c) (the node's inputs'
             * effects come with it). */
            uint32_t v = atomic_load_explicit(&r->nodes[j].slot, memory_order_acquire);
            if (v == SLOT_TAKEN)
                continue;
            if (v == 0) {   /* reserved, not yet published: its pusher is mid-push */
                again = true;
                continue;
            }
            /* seq_cst: see advance_head (and it acquires, as the load). */
            if (atomic_compare_exchange_strong_explicit(&r->nodes[j].slot, &v, SLOT_TAKEN,
                                                        memory_order_seq_cst, memory_order_relaxed)) {
                advance_head(r);
                return v - 1;
            }
            again = true;   /* another thread took it: look again */
            break;
        }
        if (!again)
            return NONE;   /* every slot in [head, tail) is taken */
    }
}
