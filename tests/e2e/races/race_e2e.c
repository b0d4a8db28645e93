/*
 * race_e2e.c - the checker of the end-to-end race test (see race_e2e.h).
 *
 * Per resource and task, two counters of accesses in progress (reading,
 * writing). A body raises its own counters, then looks at every other
 * task's: a conflicting access in progress is a violation. It looks again
 * before lowering them. Raising and looking are sequentially consistent, so
 * of two overlapping accesses at least the later one sees the earlier (the
 * store-then-load pattern needs the single total order). A task ordered
 * before another completes (its counters lowered) before the other starts,
 * so race-free graphs see no violation whatever the timing. Writers of
 * non-parallel tasks also touch plain shared data, so that ThreadSanitizer
 * checks the runtime's ordering too.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "race_e2e.h"

enum { MAX_TASKS = 512, MAX_RES = 128 };

static atomic_int rd[MAX_RES][MAX_TASKS], wr[MAX_RES][MAX_TASKS];
static atomic_int violations, reported;
static atomic_long accesses;
static long plain[MAX_RES]; /* touched by writers, read by readers */
static int quiet;           /* the negative control counts, it does not print */

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Conflicting accesses of other tasks in progress, for task FID. */
static void look(int fid, const char *when)
{
    const race_task *t = &race_tasks[fid];
    for (int a = 0; a < t->nacc; a++) {
        int res = t->acc[a].res, w = t->acc[a].write;
        for (int g = 0; g < race_ntasks; g++) {
            /* seq_cst: pairs with the other body's raise (see the top). */
            int ow = atomic_load(&wr[res][g]), orr = atomic_load(&rd[res][g]);
            int mine = g == fid;
            if (mine && t->parallel)
                continue; /* sub-ranges of one parallel task partition the data */
            int bad = mine ? w && ow > 1 : ow > 0 || (w && orr > 0);
            if (!bad)
                continue;
            atomic_fetch_add_explicit(&violations, 1, memory_order_relaxed); /* a count */
            if (!quiet && atomic_fetch_add_explicit(&reported, 1, memory_order_relaxed) < 10)
                fprintf(stderr, "race_e2e: %s %s resource %d %s: %s %s it at the same time\n",
                        t->name, w ? "writes" : "reads", res, when, race_tasks[g].name,
                        ow ? "writes" : "reads");
        }
    }
}

void race_body(struct rctx *ctx, int fid)
{
    const race_task *t = &race_tasks[fid];
    for (int a = 0; a < t->nacc; a++) /* seq_cst: see the top */
        atomic_fetch_add(t->acc[a].write ? &wr[t->acc[a].res][fid] : &rd[t->acc[a].res][fid], 1);
    look(fid, "on entry");
    if (t->touch)
        for (int a = 0; a < t->nacc; a++) {
            if (t->acc[a].write)
                plain[t->acc[a].res]++;
            else
                (void)*(volatile long *)&plain[t->acc[a].res];
        }
    uint64_t h = mix(ctx->frame * 131 + (uint64_t)fid * 7 + ctx->seed);
    /* between half the task's time and all of it */
    uint64_t spin = t->spin_ns ? t->spin_ns / 2 + h % (t->spin_ns / 2 + 1) : 0;
    uint64_t end = now_ns() + spin;
    while (now_ns() < end)
        ;
    look(fid, "on exit");
    for (int a = 0; a < t->nacc; a++) /* seq_cst: see the top */
        atomic_fetch_sub(t->acc[a].write ? &wr[t->acc[a].res][fid] : &rd[t->acc[a].res][fid], 1);
    atomic_fetch_add_explicit(&accesses, t->nacc, memory_order_relaxed); /* a count */
}

size_t race_count(struct rctx *ctx, int fid)
{
    return (size_t)(mix(ctx->frame ^ ((uint64_t)fid << 32) ^ ctx->seed) % 48);
}

bool race_when(struct rctx *ctx, int wid)
{
    return mix(ctx->frame * 977 + (uint64_t)wid + ctx->seed) % 4 != 0;
}

static dagrt *make(int workers)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = workers;
    cfg.no_workers = workers == 0;
    cfg.hot_workers = workers == 3 ? 1 : 0;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt)
        fprintf(stderr, "race_e2e: dagrt_create_ex(%d workers): %s\n", workers,
                dagrt_strerror(err));
    return rt;
}

int race_e2e_sound(int frames)
{
    static const int workers[] = {0, 1, 3};
    int bad = 0, ran = 0;
    if (race_ntasks > MAX_TASKS || race_nres > MAX_RES) {
        fprintf(stderr, "race_e2e: %d tasks, %d resources: too many\n", race_ntasks, race_nres);
        return 1;
    }
    quiet = 0;
    atomic_store(&accesses, 0);
    for (int w = 0; w < 3; w++) {
        dagrt *rt = make(workers[w]);
        if (!rt)
            return bad + 1;
        for (int gi = 0; gi < race_ngraphs; gi++) {
            const race_graph *g = &race_graphs[gi];
            if (g->control)
                continue;
            int before = atomic_load(&violations);
            for (int f = 0; f < frames; f++) {
                struct rctx ctx = {(unsigned long long)f, 0x5eedULL * (unsigned)(w + 1)};
                int rc = g->run(rt, &ctx);
                if (rc != 0) {
                    fprintf(stderr, "race_e2e: %s_run returned %d\n", g->name, rc);
                    bad++;
                    break;
                }
            }
            ran++;
            int v = atomic_load(&violations) - before;
            if (v)
                fprintf(stderr, "race_e2e: graph %s, %d workers: %d violations\n", g->name,
                        workers[w], v);
            bad += v;
        }
        dagrt_destroy(rt);
    }
    /* A run that recorded nothing checked nothing. */
    if (ran == 0 || atomic_load(&accesses) == 0) {
        fprintf(stderr, "race_e2e: no access recorded (%d graph runs)\n", ran);
        bad++;
    }
    return bad;
}

int race_e2e_control(int frames)
{
    /* Three workers: with one, the runtime may well run both racing tasks
     * on the same thread every frame (nothing overlaps to be caught). */
    static const int workers[] = {3};
    int missed = 0;
    quiet = 1;
    for (int w = 0; w < 1; w++) {
        dagrt *rt = make(workers[w]);
        if (!rt)
            return 1;
        for (int gi = 0; gi < race_ngraphs; gi++) {
            const race_graph *g = &race_graphs[gi];
            if (!g->control)
                continue;
            atomic_store(&violations, 0);
            int f = 0;
            for (; f < frames && atomic_load(&violations) == 0; f++) {
                struct rctx ctx = {(unsigned long long)f, 7};
                g->run(rt, &ctx);
            }
            if (atomic_load(&violations) == 0) {
                fprintf(stderr, "race_e2e: control %s, %d workers: race not seen in %d frames\n",
                        g->name, workers[w], frames);
                missed++;
            } else {
                printf("race_e2e: control %s, %d workers: caught after %d frames\n", g->name,
                       workers[w], f);
            }
        }
        dagrt_destroy(rt);
    }
    atomic_store(&violations, 0);
    quiet = 0;
    return missed;
}
