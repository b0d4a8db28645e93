/*
 * bench_floor.c - the frame graph with no runtime at all: what two threads
 * that spin on per-node flags reach on this machine, the floor the
 * runtimes' figures are read against (bench/frame/README.md).
 *
 * The split is fixed: the caller runs input, n1, n2, n5-n8, n13-n16, n21,
 * n22, n25, n26, n29 and present, a helper pthread the other 15 nodes, each
 * list in topological order. That is the split libdagrt's plan mode makes
 * for this graph (frame_trace prints it). Its only handoffs on the critical
 * path are the two that no two-thread schedule of this graph avoids: the
 * helper cannot start before input is done, and present cannot start before
 * the helper's last node is. Every other edge between the lists is from a
 * node that finished a body or more before its successor is reached. So a
 * frame costs 17 bodies + 2 cross-core transfers, plus the VM's stalls.
 *
 * Each node's flag is the frame number it last completed (release store
 * after its body, acquire loads before a successor's): nothing is reset
 * between frames, and a successor waits for "at or after" its frame, since
 * with frames in flight a predecessor may already have run a later frame.
 *
 * The rings (bench_floor_ring): frames in flight on the same split, as a
 * pipeline's submit hands them over (dagrt_pipeline_submit: frame f once
 * frame f - depth has ended). Each thread runs its list frame after frame,
 * so the same node of consecutive frames runs on one thread in order and
 * needs no flag of its own. The helper runs every frame it is given, in
 * order. The caller runs its part only while a submit waits for a place
 * (and in the drain): its list frame after frame, present left pending
 * once the rest of the list is done and run as soon as its predecessors
 * are, between the next frame's nodes. So its frames have the pipeline's
 * depth in flight, and their latency (bench_main.c) is the pipelines'
 * with nothing of a runtime in it: the VM's share of their tail. The helper spins between frames for FLOOR_LINGER_NS, then
 * sleeps on a condition variable so that it does not take a core from the
 * contenders measured after it.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bench_floor.h"

#define FLOOR_LINGER_NS 200000.0

static const int floor_caller[] = {0, 1, 2, 5, 6, 7, 8, 13, 14, 15, 16, 21, 22, 25, 26, 29, 31};
#define NCALLER ((int)(sizeof floor_caller / sizeof floor_caller[0]))

static int list[2][BENCH_NODES], len[2];
/* 128 bytes apart, not 64: x86 cores move lines in aligned pairs, and a
 * flag next to one the other thread writes would travel with it. */
static struct {
    _Alignas(128) _Atomic uint64_t v;
} done[BENCH_NODES];
/* The frame the helper should run (the caller's stores), on its own. */
static _Alignas(128) _Atomic uint64_t go;
static _Alignas(128) _Atomic int sleeping;
static _Atomic int stop;
static uint64_t frame_no;
static struct bench_ctx *the_ctx;
static void (*the_body)(struct bench_ctx *c, int idx);
/* Frame f's context and body, written by the caller before its go (the
 * release that publishes them): a ring's frames each have a slot. */
#define FLOOR_SLOTS 8
static struct bench_ctx *frame_ctx[FLOOR_SLOTS];
static void (*frame_body)(struct bench_ctx *c, int idx);
static pthread_t helper;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* Whether node p has completed frame f or a later one. acquire: pairs with
 * the release store after p's body, so that body is visible to the
 * successor that asked. */
static bool reached(int p, uint64_t f)
{
    return atomic_load_explicit(&done[p].v, memory_order_acquire) >= f;
}

static bool preds_done(int i, uint64_t f)
{
    for (int q = 0; q < 2; q++)
        if (bench_preds[i][q] >= 0 && !reached(bench_preds[i][q], f))
            return false;
    return true;
}

static void run_node(int i, uint64_t f)
{
    frame_body(frame_ctx[f % FLOOR_SLOTS], i);
    /* release: this body's effects before the flag a successor reads. */
    atomic_store_explicit(&done[i].v, f, memory_order_release);
}

/* The caller's part of a ring: its list frame after frame (`cur`, at
 * position `pos`), present left pending (`pend`, oldest first) once the
 * rest of its frame's list is done, so that the next frame's list goes on
 * meanwhile; a pending present runs as soon as its predecessors are. */
static uint64_t pend[FLOOR_SLOTS], cur;
static int npend, pos;

/* One step of the caller's part, up to frame `upto` (handed over): runs a
 * ready present or the next node of its list; false if nothing was ready. */
static bool caller_step(uint64_t upto)
{
    if (npend > 0 && preds_done(BENCH_NODES - 1, pend[0])) {
        run_node(BENCH_NODES - 1, pend[0]);
        for (int j = 1; j < npend; j++)
            pend[j - 1] = pend[j];
        npend--;
        return true;
    }
    if (cur > upto)
        return false;
    int i = list[0][pos];
    if (i == BENCH_NODES - 1) {   /* the list's last node */
        pend[npend++] = cur++;
        pos = 0;
        return true;
    }
    if (!preds_done(i, cur))
        return false;
    run_node(i, cur);
    pos++;
    return true;
}

static void run_list(int k, uint64_t f)
{
    for (int j = 0; j < len[k]; j++) {
        int i = list[k][j];
        while (!preds_done(i, f))
            bench_spin_hint();
        run_node(i, f);
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    uint64_t seen = 0;
    for (;;) {
        double since = bench_now_ns();
        unsigned spins = 0;
        uint64_t g;
        /* acquire: the caller's frame setup (ctx->frame) before its go. */
        while ((g = atomic_load_explicit(&go, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&stop, memory_order_relaxed))
                return NULL;
            bench_spin_hint();
            if (++spins % 256 == 0 && bench_now_ns() - since > FLOOR_LINGER_NS) {
                pthread_mutex_lock(&mu);
                /* seq_cst store then load, against the caller's seq_cst
                 * store of go then load of sleeping: one of the two sees the
                 * other's store, so a frame is never posted to a sleeper
                 * that nobody signals. */
                atomic_store(&sleeping, 1);
                while (atomic_load(&go) == seen && !atomic_load(&stop))
                    pthread_cond_wait(&cv, &mu);
                atomic_store(&sleeping, 0);
                pthread_mutex_unlock(&mu);
                since = bench_now_ns();
            }
        }
        /* A ring hands over frames faster than one by one: every one, in order. */
        while (seen < g)
            run_list(1, ++seen);
    }
}

static void wake_helper(void)
{
    if (atomic_load(&sleeping)) {   /* seq_cst: see helper_main */
        pthread_mutex_lock(&mu);
        pthread_cond_signal(&cv);
        pthread_mutex_unlock(&mu);
    }
}

int bench_floor_setup(struct bench_ctx *c, void (*body)(struct bench_ctx *c, int idx))
{
    bool mine[BENCH_NODES] = {false};
    for (int j = 0; j < NCALLER; j++)
        mine[floor_caller[j]] = true;
    for (int i = 0; i < BENCH_NODES; i++) {
        int k = mine[i] ? 0 : 1;
        list[k][len[k]++] = i;
    }
    the_ctx = c;
    the_body = body;
    frame_body = body;
    return pthread_create(&helper, NULL, helper_main, NULL);
}

void bench_floor_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        uint64_t g = ++frame_no;
        frame_ctx[g % FLOOR_SLOTS] = the_ctx;
        frame_body = the_body;
        atomic_store(&go, g);   /* seq_cst: see helper_main; also a release */
        wake_helper();
        /* present, the caller's last node, waits for the helper's last. */
        run_list(0, g);
    }
}

void bench_floor_ring(struct bench_ctx *c, long n, unsigned depth,
                      struct bench_ctx *(*next)(struct bench_ctx *c),
                      void (*node)(struct bench_ctx *slot, int idx))
{
    if (depth < 1 || depth >= FLOOR_SLOTS)
        return;
    frame_body = node;   /* published to the helper by the next go's release */
    cur = frame_no + 1;
    pos = 0;
    for (long k = 0; k < n; k++) {
        struct bench_ctx *slot = next(c);   /* the frame's submit */
        uint64_t g = frame_no + 1;
        /* A place among the frames in flight: frame g - depth ended. */
        while (g > depth && !reached(BENCH_NODES - 1, g - depth))
            if (!caller_step(frame_no))
                bench_spin_hint();
        frame_ctx[g % FLOOR_SLOTS] = slot;
        frame_no = g;
        atomic_store(&go, g);   /* seq_cst: see helper_main; also a release */
        wake_helper();
    }
    while (npend > 0 || cur <= frame_no)   /* the drain */
        if (!caller_step(frame_no))
            bench_spin_hint();
    frame_body = the_body;
}

void bench_floor_teardown(void)
{
    atomic_store(&stop, 1);
    pthread_mutex_lock(&mu);
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(helper, NULL);
}
