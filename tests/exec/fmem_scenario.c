/*
 * fmem_scenario.c - frame memory (dagrt_frame_alloc) and the frame a task
 * is in (dagrt_get_frame), on fmem.dag's graph: every kind of task (plain,
 * hot, fiber across a yield, parallel pieces on every thread, on main)
 * allocates in its frame, fills each allocation with its own pattern and
 * lists it (the list is frame memory too); the last task checks every
 * byte of its frame's allocations and again of the frame before's, which
 * must still be live. Run as an instance (dagrt_graph_run's path and a
 * started run's) and as pipelines of depth 1-4, under 0, 1 and 3 workers.
 * Also: the errors (outside a frame, a task spawned by a node, bad
 * alignments), the budget, chunk reuse (no new chunk once warm), the
 * high-water mark, a thread that changes frames inside a body (a fiber of
 * one frame resumed in a node body of another: each body's allocations
 * must stay its own frame's), a fiber that moves thread while the thread
 * it left bumps the same frame for another node (dagrt_frame_alloc is
 * inline in this file: move_case), under AddressSanitizer the poisoning of
 * a retired frame's memory (fmem_uaf: ASan must report the use), and
 * where the chunks come from (fmem_slab.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fcopy.h"
#include "fmem.h"
#include "fmem_scenario.h"

#if defined(__SANITIZE_ADDRESS__)
#define FMEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FMEM_ASAN 1
#endif
#endif
#ifdef FMEM_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int bad;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fmem_scenario:%d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

/* Inside tasks: counted in the context (seq_cst: test bookkeeping). */
#define TASK_EXPECT(c, cond, ...)                                                  \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fmem_scenario:%d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            atomic_fetch_add(&(c)->bad, 1);                                        \
        }                                                                          \
    } while (0)

enum { N_A, N_B, N_H, N_F, N_P, N_M, N_TASKS };

static uint32_t mix(uint64_t number, uint32_t node, uint32_t i)
{
    uint64_t x = number * 0x9E3779B97F4A7C15ull ^ ((uint64_t)node << 40) ^ i;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (uint32_t)x;
}

static unsigned char pattern(uint32_t tag, uint32_t k) { return (unsigned char)(tag * 31u + k); }

/* One allocation of the frame, filled and listed in its slot: every
 * other one from the task's frame arena h (when it has one), the rest
 * and the records from dagrt_frame_alloc, so that a handle and its
 * thread's chunk are used in turn. */
static void alloc_one(struct fmem_ctx *c, const dagrt_frame_info *fi, uint32_t node, uint32_t i,
                      dagrt_frame_arena *h)
{
    uint32_t tag = mix(fi->number, node, i);
    uint32_t size = tag % ((c->max_size ? c->max_size : 4096u) + 1u);
    if (c->big_every && tag % c->big_every == 0)
        size = 70000u + tag % 5000u;   /* over a chunk: a big chunk of its own */
    size_t align = (size_t)1 << (tag >> 13 & 7);
    unsigned char *p = h && (i & 1) ? dagrt_frame_arena_alloc(h, size, align)
                                     : dagrt_frame_alloc(size, align);
    TASK_EXPECT(c, p != NULL, "alloc %u/%zu (arena %d): NULL (%d)", size, align, h && (i & 1),
                dagrt_frame_last_error());
    if (!p)
        return;
    TASK_EXPECT(c, ((uintptr_t)p & (align - 1)) == 0, "misaligned %p for %zu", (void *)p, align);
    for (uint32_t k = 0; k < size; k++)
        p[k] = pattern(tag, k);
    struct fmem_rec *r = dagrt_frame_alloc(sizeof *r, _Alignof(struct fmem_rec));
    TASK_EXPECT(c, r != NULL, "record: NULL");
    if (!r)
        return;
    r->p = p;
    r->size = size;
    r->tag = tag;
    struct fmem_slot *s = &c->slot[fi->slot];
    r->next = atomic_load(&s->head);
    while (!atomic_compare_exchange_weak(&s->head, &r->next, r))
        ;
    atomic_fetch_add(&s->count, 1);
    if (fi->number == 0 && node == N_A && i == 0)
        c->keep = p;
}

static bool frame_of(struct fmem_ctx *c, dagrt_frame_info *fi)
{
    int rc = dagrt_get_frame(fi);
    TASK_EXPECT(c, rc == 0, "dagrt_get_frame in a task: %d", rc);
    if (rc != 0)
        return false;
    TASK_EXPECT(c, fi->slots >= 2 && fi->slots <= DAGRT_FRAME_SLOTS && fi->slot < fi->slots &&
                       fi->slot == fi->number % fi->slots,
                "frame %llu: slot %u of %u", (unsigned long long)fi->number, fi->slot, fi->slots);
    return true;
}

static void alloc_task(struct fmem_ctx *c, uint32_t node)
{
    dagrt_frame_info fi;
    if (!frame_of(c, &fi))
        return;
    TASK_EXPECT(c, atomic_load(&c->slot[fi.slot].number) == fi.number,
                "task %u of frame %llu: slot %u holds frame %llu", node,
                (unsigned long long)fi.number, fi.slot,
                (unsigned long long)atomic_load(&c->slot[fi.slot].number));
    dagrt_frame_arena h;
    TASK_EXPECT(c, dagrt_frame_arena_open(&h) == 0, "arena open in a task");
    for (uint32_t i = 0; i < c->per_task; i++)
        alloc_one(c, &fi, node, i, &h);
    dagrt_frame_arena_close(&h);
}

/* The first task takes the frame's slot (the frame that used it last,
 * slots back, has ended: so has its `prev` reader). */
void fmem_a(struct fmem_ctx *c)
{
    dagrt_frame_info fi;
    if (!frame_of(c, &fi))
        return;
    struct fmem_slot *s = &c->slot[fi.slot];
    atomic_store(&s->head, NULL);
    atomic_store(&s->count, 0);
    atomic_store(&s->number, fi.number);
    alloc_task(c, N_A);
}

static void spawned(void *arg)
{
    int *out = arg;
    void *p = dagrt_frame_alloc(16, 16);
    out[0] = p == NULL;
    out[1] = dagrt_frame_last_error();
    dagrt_frame_info fi;
    out[2] = dagrt_get_frame(&fi);
    dagrt_frame_arena h;
    out[3] = dagrt_frame_arena_open(&h);
    out[4] = dagrt_frame_arena_alloc(&h, 16, 16) == NULL && dagrt_frame_last_error() == DAGRT_EPERM;
}

void fmem_b(struct fmem_ctx *c)
{
    alloc_task(c, N_B);
    /* A task a node spawns is in no frame. */
    int out[5] = {0, 0, 0, 0, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    if (dagrt_spawn(c->rt, &g, spawned, out) == 0) {
        dagrt_group_wait(c->rt, &g);
        TASK_EXPECT(c, out[0] && out[1] == DAGRT_EPERM && out[2] == DAGRT_EPERM &&
                           out[3] == DAGRT_EPERM && out[4],
                    "a spawned task: NULL %d, error %d, get_frame %d, arena open %d, alloc %d",
                    out[0], out[1], out[2], out[3], out[4]);
    }
    /* Bad arguments. */
    TASK_EXPECT(c, dagrt_frame_alloc(8, 3) == NULL && dagrt_frame_last_error() == DAGRT_EINVAL,
                "align 3 accepted");
    TASK_EXPECT(c, dagrt_frame_alloc(8, 8192) == NULL && dagrt_frame_last_error() == DAGRT_EINVAL,
                "align 8192 accepted");
    TASK_EXPECT(c, dagrt_frame_alloc((size_t)1 << 31, 8) == NULL &&
                       dagrt_frame_last_error() == DAGRT_EINVAL,
                "2 GiB accepted");
    TASK_EXPECT(c, dagrt_frame_alloc(0, 0) != NULL, "size 0: NULL");
    /* The same through a frame arena, and a closed one. */
    dagrt_frame_arena h;
    TASK_EXPECT(c, dagrt_frame_arena_open(&h) == 0, "arena open");
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, 8, 3) == NULL &&
                       dagrt_frame_last_error() == DAGRT_EINVAL, "arena: align 3 accepted");
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, 8, 8192) == NULL &&
                       dagrt_frame_last_error() == DAGRT_EINVAL, "arena: align 8192 accepted");
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, (size_t)1 << 31, 8) == NULL &&
                       dagrt_frame_last_error() == DAGRT_EINVAL, "arena: 2 GiB accepted");
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, 0, 0) != NULL, "arena: size 0 NULL");
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, 0, 16) != NULL, "arena: size 0 NULL");
    dagrt_frame_arena_close(&h);
    dagrt_frame_arena_close(&h);   /* twice: nothing */
    TASK_EXPECT(c, dagrt_frame_arena_alloc(&h, 16, 16) == NULL &&
                       dagrt_frame_last_error() == DAGRT_EPERM, "a closed arena allocates");
    TASK_EXPECT(c, dagrt_frame_arena_open(NULL) == DAGRT_EINVAL, "arena open(NULL)");
}

void fmem_h(struct fmem_ctx *c) { alloc_task(c, N_H); }
void fmem_m(struct fmem_ctx *c) { alloc_task(c, N_M); }

/* Half before a yield, half after: the fiber may come back on another
 * thread, still in its frame, with its frame arena (opened before the
 * yield: its chunk is the task's, whichever thread it runs on). */
void fmem_f(struct fmem_ctx *c)
{
    dagrt_frame_info fi, fj;
    if (!frame_of(c, &fi))
        return;
    uint32_t half = c->per_task / 2;
    dagrt_frame_arena h;
    TASK_EXPECT(c, dagrt_frame_arena_open(&h) == 0, "arena open in a fiber");
    for (uint32_t i = 0; i < half; i++)
        alloc_one(c, &fi, N_F, i, &h);
    dagrt_fiber_yield(c->rt);
    if (!frame_of(c, &fj)) {
        dagrt_frame_arena_close(&h);
        return;
    }
    TASK_EXPECT(c, fj.number == fi.number && fj.slot == fi.slot, "a fiber changed frames");
    for (uint32_t i = half; i < c->per_task; i++)
        alloc_one(c, &fj, N_F, i, &h);
    dagrt_frame_arena_close(&h);
}

size_t fmem_p_count(struct fmem_ctx *c) { return c->items; }

void fmem_p(struct fmem_ctx *c, size_t begin, size_t end)
{
    dagrt_frame_info fi;
    if (!frame_of(c, &fi))
        return;
    dagrt_frame_arena h;
    TASK_EXPECT(c, dagrt_frame_arena_open(&h) == 0, "arena open in a piece");
    for (size_t i = begin; i < end; i++)
        alloc_one(c, &fi, N_P, (uint32_t)i, &h);
    dagrt_frame_arena_close(&h);
}

static uint32_t check_slot(struct fmem_ctx *c, struct fmem_slot *s, uint64_t number)
{
    uint32_t n = 0;
    for (struct fmem_rec *r = atomic_load(&s->head); r; r = r->next, n++) {
        uint32_t k = 0;
        while (k < r->size && r->p[k] == pattern(r->tag, k))
            k++;
        TASK_EXPECT(c, k == r->size, "frame %llu: allocation of %u bytes changed at %u",
                    (unsigned long long)number, r->size, k);
    }
    return n;
}

void fmem_check(struct fmem_ctx *c)
{
    dagrt_frame_info fi;
    if (!frame_of(c, &fi))
        return;
    struct fmem_slot *s = &c->slot[fi.slot];
    uint32_t want = c->per_task * 5 + c->items;
    uint32_t n = check_slot(c, s, fi.number);
    TASK_EXPECT(c, n == want && atomic_load(&s->count) == want,
                "frame %llu: %u allocations listed (%u counted), want %u",
                (unsigned long long)fi.number, n, atomic_load(&s->count), want);
    /* The frame before: its memory lives until this frame ends. */
    if (fi.number > c->first) {
        struct fmem_slot *q = &c->slot[(fi.slot + fi.slots - 1) % fi.slots];
        TASK_EXPECT(c, atomic_load(&q->number) == fi.number - 1, "frame %llu: no previous slot",
                    (unsigned long long)fi.number);
        if (atomic_load(&q->number) == fi.number - 1 && check_slot(c, q, fi.number - 1) == want)
            atomic_fetch_add(&c->prev_checked, 1);
    }
    atomic_fetch_add(&c->numbers, fi.number);
    atomic_fetch_add(&c->checked, 1);
}

void fmem_ctx_init(struct fmem_ctx *c, dagrt *rt, uint32_t per_task, uint32_t items)
{
    memset(c, 0, sizeof *c);
    c->rt = rt;
    c->per_task = per_task;
    c->items = items;
    c->big_every = 61;
    for (int k = 0; k < DAGRT_FRAME_SLOTS; k++)
        atomic_store(&c->slot[k].number, UINT64_MAX);
}

static void expect_frames(struct fmem_ctx *c, uint64_t frames, const char *what)
{
    uint64_t f0 = c->first;
    EXPECT(atomic_load(&c->bad) == 0, "%s: %d violations in tasks", what, atomic_load(&c->bad));
    EXPECT(atomic_load(&c->checked) == frames, "%s: %llu frames checked, want %llu", what,
           (unsigned long long)atomic_load(&c->checked), (unsigned long long)frames);
    EXPECT(atomic_load(&c->prev_checked) == frames - 1, "%s: %llu previous frames re-checked",
           what, (unsigned long long)atomic_load(&c->prev_checked));
    EXPECT(atomic_load(&c->numbers) == frames * f0 + frames * (frames - 1) / 2,
           "%s: frame numbers sum to %llu", what, (unsigned long long)atomic_load(&c->numbers));
}

static uint64_t sum_stat(dagrt *rt, size_t field)
{
    dagrt_thread_stats st[64];
    int n = dagrt_get_stats(rt, st, 64);
    uint64_t s = 0;
    for (int i = 0; i < n && i < 64; i++)
        s += *(const uint64_t *)(const void *)((const char *)&st[i] + field);
    return s;
}

static void run_cases(int workers, int frames)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = workers;
    cfg.hot_workers = workers > 1 ? 1 : 0;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create(%d workers)", workers);
    if (!rt)
        return;
    char what[64];
    static struct fmem_ctx c;
    /* An instance: run (G_instance_run) and start/wait in turn. */
    static fmem_instance_t inst;
    EXPECT(fmem_instance_init(&inst) == 0, "instance init");
    fmem_ctx_init(&c, rt, 24, 64);
    for (int i = 0; i < frames; i++) {
        int rc;
        if (i & 1) {
            rc = fmem_instance_start(rt, &inst, &c);
            if (rc == 0)
                rc = fmem_instance_wait(rt, &inst);
        } else {
            rc = fmem_instance_run(rt, &inst, &c);
        }
        EXPECT(rc == 0, "instance frame %d: %d", i, rc);
    }
    snprintf(what, sizeof what, "%d workers, instance", workers);
    expect_frames(&c, (uint64_t)frames, what);
    uint64_t retired = sum_stat(rt, offsetof(dagrt_thread_stats, frames_retired));
    EXPECT(retired == (uint64_t)frames - 1, "%s: %llu frames retired, want %d", what,
           (unsigned long long)retired, frames - 1);
    EXPECT(sum_stat(rt, offsetof(dagrt_thread_stats, frame_bytes_max)) > 24u * 5 * 1000,
           "%s: no high-water mark", what);
    /* Pipelines of every depth. */
    for (unsigned depth = 1; depth <= DAGRT_MAX_IN_FLIGHT; depth++) {
        static fmem_pipeline_t pipe;
        EXPECT(fmem_pipeline_init(&pipe, depth) == 0, "pipeline init %u", depth);
        fmem_ctx_init(&c, rt, 24, 64);
        uint64_t ret0 = sum_stat(rt, offsetof(dagrt_thread_stats, frames_retired));
        for (int i = 0; i < frames; i++) {
            int rc = fmem_pipeline_submit(rt, &pipe, &c);
            EXPECT(rc == 0, "depth %u frame %d: %d", depth, i, rc);
        }
        EXPECT(fmem_pipeline_drain(rt, &pipe) == 0, "drain");
        snprintf(what, sizeof what, "%d workers, depth %u", workers, depth);
        expect_frames(&c, (uint64_t)frames, what);
        /* Each frame but the last retired as the frame after it ended
         * (not depth frames later), and the last run's last frame, kept
         * by its state, when that state ran again. */
        uint64_t ret1 = sum_stat(rt, offsetof(dagrt_thread_stats, frames_retired));
        uint64_t want = (uint64_t)frames - 1 + (depth > 1);
        EXPECT(ret1 - ret0 == want, "%s: %llu frames retired, want %llu", what,
               (unsigned long long)(ret1 - ret0), (unsigned long long)want);
        if (depth == DAGRT_MAX_IN_FLIGHT) {
            /* A re-init keeps the states' last frames, which the next
             * frames retire: `frames` frames now retire `frames` frames
             * (the first run of the pipeline retired frames - depth). */
            uint64_t r0 = sum_stat(rt, offsetof(dagrt_thread_stats, frames_retired));
            EXPECT(fmem_pipeline_init(&pipe, depth) == 0, "pipeline re-init");
            fmem_ctx_init(&c, rt, 24, 64);
            for (int i = 0; i < frames; i++)
                EXPECT(fmem_pipeline_submit(rt, &pipe, &c) == 0, "re-init frame %d", i);
            EXPECT(fmem_pipeline_drain(rt, &pipe) == 0, "drain");
            expect_frames(&c, (uint64_t)frames, "re-init");
            uint64_t r1 = sum_stat(rt, offsetof(dagrt_thread_stats, frames_retired));
            EXPECT(r1 - r0 == (uint64_t)frames, "%d workers: %llu frames retired after a re-init, "
                   "want %d", workers, (unsigned long long)(r1 - r0), frames);
        }
    }
    /* Warm: the instance's further frames take no chunk from the system
     * (the pipelines' states keep their last frames' memory until they
     * run again, so only a state that runs on is warm). */
    fmem_ctx_init(&c, rt, 24, 64);
    c.first = (uint64_t)frames;
    for (int i = 0; i < 2; i++)
        EXPECT(fmem_instance_run(rt, &inst, &c) == 0, "warm-up frame %d", i);
    fmem_ctx_init(&c, rt, 24, 64);
    c.first = (uint64_t)frames + 2;
    uint64_t before = sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks_new));
    for (int i = 0; i < frames; i++)
        EXPECT(fmem_instance_run(rt, &inst, &c) == 0, "warm frame %d", i);
    expect_frames(&c, (uint64_t)frames, "warm");
    uint64_t after = sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks_new));
    EXPECT(after == before, "%d workers: %llu new chunks once warm", workers,
           (unsigned long long)(after - before));
    EXPECT(sum_stat(rt, offsetof(dagrt_thread_stats, frame_refused)) == 0, "refusals");
    dagrt_destroy(rt);
}

/* ------------------------------------------------------------ the budget */

static _Atomic int budget_got, budget_err, budget_arena;

/* Spends the budget, on odd frames through a frame arena. */
static void budget_run(void *c)
{
    (void)c;
    int got = 0;
    dagrt_frame_arena h;
    if (atomic_load(&budget_arena)) {
        if (dagrt_frame_arena_open(&h) == 0)
            while (got < 1000 && dagrt_frame_arena_alloc(&h, 4096, 64) != NULL)
                got++;
        atomic_store(&budget_err, dagrt_frame_last_error());
        dagrt_frame_arena_close(&h);
        atomic_store(&budget_got, got);
        return;
    }
    while (got < 1000 && dagrt_frame_alloc(4096, 64) != NULL)
        got++;
    atomic_store(&budget_got, got);
    atomic_store(&budget_err, dagrt_frame_last_error());
}

static void budget_case(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 1;
    cfg.frame_budget = 256 * 1024;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    /* A one-node graph by hand: its body spends the budget. */
    static const uint32_t succ[1] = {0};
    static const dagrt_node node = {.name = "spend", .kind = DAGRT_NODE_TASK,
                                    .run = budget_run};
    static const dagrt_graph g = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "budget",
                                  .nodes = &node, .succ = succ};
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    for (int f = 0; f < 4; f++) {
        atomic_store(&budget_arena, f & 1);
        EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == 0, "budget frame %d", f);
        /* 4 chunks of 64 KiB: 15 allocations of 4 KiB (+ alignment) fit one. */
        int got = atomic_load(&budget_got);
        EXPECT(got >= 48 && got <= 64, "frame %d: %d allocations of 4 KiB in 256 KiB", f, got);
        EXPECT(atomic_load(&budget_err) == DAGRT_ENOMEM, "frame %d: error %d", f,
               atomic_load(&budget_err));
    }
    uint64_t refused = sum_stat(rt, offsetof(dagrt_thread_stats, frame_refused));
    EXPECT(refused == 4, "%llu refusals counted, want 4", (unsigned long long)refused);
    dagrt_destroy(rt);
}

/* ------------------------------------------------ outside a frame, ASan */

static void *kept, *kept_arena;

static void keep_run(void *c)
{
    (void)c;
    /* 50 us: far from "too small to share", so the run policy never runs
     * these frames serial (a serial pipeline frame waits for the frames
     * in flight first, which would retire frame 0 early). */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t1);
    while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 50000);
    dagrt_frame_info fi;
    if (dagrt_get_frame(&fi) == 0 && fi.number == 0) {
        kept = dagrt_frame_alloc(64, 16);
        if (kept)
            memset(kept, 1, 64);
        /* And through a frame arena: the same lifetime. */
        dagrt_frame_arena h;
        if (dagrt_frame_arena_open(&h) == 0) {
            kept_arena = dagrt_frame_arena_alloc(&h, 64, 16);
            if (kept_arena)
                memset(kept_arena, 1, 64);
            dagrt_frame_arena_close(&h);
        }
    }
}

static const uint32_t keep_succ[1] = {0};
static const dagrt_node keep_nd = {.name = "keep", .kind = DAGRT_NODE_TASK,
                                   .run = keep_run};
static const dagrt_graph keep_g = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "keep",
                                   .nodes = &keep_nd, .succ = keep_succ};

static void outside_and_retire(void)
{
    EXPECT(dagrt_frame_alloc(8, 8) == NULL && dagrt_frame_last_error() == DAGRT_EPERM,
           "outside a runtime: not EPERM");
    dagrt_frame_info fi;
    EXPECT(dagrt_get_frame(&fi) == DAGRT_EPERM, "get_frame outside a runtime");
    EXPECT(dagrt_get_frame(NULL) == DAGRT_EINVAL, "get_frame(NULL)");
    dagrt_frame_arena h;
    EXPECT(dagrt_frame_arena_open(&h) == DAGRT_EPERM, "arena open outside a runtime");
    EXPECT(dagrt_frame_arena_alloc(&h, 8, 8) == NULL && dagrt_frame_last_error() == DAGRT_EPERM,
           "an arena opened outside a frame allocates");
    dagrt *rt = dagrt_create(NULL);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    EXPECT(dagrt_frame_alloc(8, 8) == NULL && dagrt_frame_last_error() == DAGRT_EPERM,
           "main thread between frames: not EPERM");
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    EXPECT(dagrt_graph_state_init(&st, ns, 1) == 0, "state init");
    kept = kept_arena = NULL;
    EXPECT(dagrt_graph_run(rt, &keep_g, &st, NULL) == 0, "frame 0");
    EXPECT(kept != NULL && kept_arena != NULL, "frame 0 allocated nothing");
#ifdef FMEM_ASAN
    /* Live after its own frame (the next frame may read it)... */
    EXPECT(kept && !__asan_address_is_poisoned(kept), "frame 0's memory poisoned too early");
    EXPECT(kept_arena && !__asan_address_is_poisoned(kept_arena),
           "frame 0's arena memory poisoned too early");
#endif
    EXPECT(dagrt_graph_run(rt, &keep_g, &st, NULL) == 0, "frame 1");
#ifdef FMEM_ASAN
    /* ...and poisoned once the frame after it has ended. */
    EXPECT(kept && __asan_address_is_poisoned(kept), "frame 0's memory not poisoned after frame 1");
    EXPECT(kept_arena && __asan_address_is_poisoned(kept_arena),
           "frame 0's arena memory not poisoned after frame 1");
#endif
    /* A pipeline of depth 2: frame 0's memory lives through the wait of
     * frame 0 (at the third submit) and goes at frame 1's (the drain). */
    static dagrt_node_state pns[2][1];
    static dagrt_graph_state pst[2] = {DAGRT_GRAPH_STATE_INIT(pns[0]), DAGRT_GRAPH_STATE_INIT(pns[1])};
    static int pctx[2];
    dagrt_graph_state *const states[2] = {&pst[0], &pst[1]};
    void *const ctxs[2] = {&pctx[0], &pctx[1]};
    static dagrt_pipeline pipe;
    kept = NULL;
    EXPECT(dagrt_pipeline_init(&pipe, 2, states, ctxs, NULL) == 0, "pipeline init");
    for (int f = 0; f < 3; f++)
        EXPECT(dagrt_pipeline_submit(rt, &keep_g, &pipe, NULL, NULL) == 0, "pipeline frame %d", f);
    EXPECT(kept != NULL, "pipeline frame 0 allocated nothing");
#ifdef FMEM_ASAN
    /* (With no worker the run policy runs frames serial, each after the
     * frames in flight: frame 1 has ended by now.) */
    EXPECT(dagrt_worker_count(rt) == 0 || (kept && !__asan_address_is_poisoned(kept)),
           "pipeline frame 0 poisoned before frame 1 ended");
#endif
    EXPECT(dagrt_pipeline_drain(rt, &pipe) == 0, "drain");
#ifdef FMEM_ASAN
    EXPECT(kept && __asan_address_is_poisoned(kept), "pipeline frame 0 not poisoned after frame 1");
#endif
    dagrt_destroy(rt);
    /* The reserve: made at create, so the first frame takes nothing new;
     * an absurd one is refused. */
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 0;
    cfg.frame_reserve = 4 * 65536;
    rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create with a reserve");
    if (rt) {
        static dagrt_node_state ns2[1];
        static dagrt_graph_state st2 = DAGRT_GRAPH_STATE_INIT(ns2);
        EXPECT(dagrt_graph_run(rt, &keep_g, &st2, NULL) == 0, "a frame on the reserve");
        EXPECT(sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks)) == 1 &&
                   sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks_new)) == 0,
               "the reserve's chunk: %llu taken, %llu new",
               (unsigned long long)sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks)),
               (unsigned long long)sum_stat(rt, offsetof(dagrt_thread_stats, frame_chunks_new)));
        dagrt_destroy(rt);
    }
    int err = 0;
    cfg.frame_reserve = (size_t)1 << 41;
    EXPECT(dagrt_create_ex(&cfg, &err) == NULL && err == DAGRT_EINVAL,
           "a 2 TiB reserve: error %d", err);
}

/* ------------------------------------------------------ per-frame copies */

static uint64_t word_of(uint64_t number, uint32_t k) { return number * 0x9E3779B97F4A7C15ull + k; }

static void fcopy_read(struct fcopy_ctx *c, uint64_t number, uint32_t slot)
{
    if (number < c->first)
        return;   /* no frame before the first */
    /* Read a few times over: a writer of the wrong frame at work on the
     * same copy shows in one pass or another (and the frame is long
     * enough that the run policy shares it rather than run it serial). */
    const volatile uint64_t *w = c->copy[slot];
    uint32_t k = FCOPY_WORDS;
    for (int pass = 0; pass < 4 && k == FCOPY_WORDS; pass++)
        for (k = 0; k < FCOPY_WORDS && w[k] == word_of(number, k);)
            k++;
    if (k != FCOPY_WORDS) {
        if (atomic_fetch_add(&c->bad, 1) < 5)
            fprintf(stderr, "fcopy: frame %llu's copy (slot %u) torn or stale at word %u\n",
                    (unsigned long long)number, slot, k);
    } else {
        atomic_fetch_add(&c->reads, 1);
    }
}

static bool fcopy_frame(struct fcopy_ctx *c, dagrt_frame_info *fi)
{
    if (dagrt_get_frame(fi) == 0)
        return true;
    atomic_fetch_add(&c->bad, 1);
    return false;
}

void fcopy_w(struct fcopy_ctx *c)
{
    dagrt_frame_info fi;
    if (!fcopy_frame(c, &fi))
        return;
    for (uint32_t k = 0; k < FCOPY_WORDS; k++)
        c->copy[fi.slot][k] = word_of(fi.number, k);
}

static uint32_t prev_slot(const dagrt_frame_info *fi) { return (fi->slot + fi->slots - 1) % fi->slots; }

void fcopy_r1(struct fcopy_ctx *c)
{
    dagrt_frame_info fi;
    if (fcopy_frame(c, &fi) && fi.number > 0)
        fcopy_read(c, fi.number - 1, prev_slot(&fi));
}

void fcopy_r2(struct fcopy_ctx *c)
{
    dagrt_frame_info fi;
    if (!fcopy_frame(c, &fi))
        return;
    fcopy_read(c, fi.number, fi.slot);
    if (fi.number > 0)
        fcopy_read(c, fi.number - 1, prev_slot(&fi));
}

void fcopy_late(struct fcopy_ctx *c) { fcopy_r1(c); }

/* Pipelines of depth 1-4, `frames` frames each: every read whole. */
int fcopy_scenario(int frames)
{
    bad = 0;
    static const int workers[] = {0, 1, 3};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
        cfg.workers = workers[k];
        dagrt *rt = dagrt_create(&cfg);
        EXPECT(rt != NULL, "dagrt_create");
        if (!rt)
            continue;
        for (unsigned depth = 1; depth <= DAGRT_MAX_IN_FLIGHT; depth++) {
            static struct fcopy_ctx c;
            static fcopy_pipeline_t p;
            memset(&c, 0, sizeof c);
            EXPECT(fcopy_pipeline_init(&p, depth) == 0, "init");
            for (int f = 0; f < frames; f++)
                if (fcopy_pipeline_submit(rt, &p, &c) != 0) {
                    EXPECT(0, "depth %u frame %d refused", depth, f);
                    break;
                }
            EXPECT(fcopy_pipeline_drain(rt, &p) == 0, "drain");
            /* r1, late: the previous copy; r2: both (none before frame 0). */
            uint64_t want = 4 * (uint64_t)frames - 3;
            EXPECT(atomic_load(&c.bad) == 0 && atomic_load(&c.reads) == want,
                   "%d workers, depth %u: %d bad copies, %llu whole reads of %llu", workers[k],
                   depth, atomic_load(&c.bad), (unsigned long long)atomic_load(&c.reads),
                   (unsigned long long)want);
        }
        dagrt_destroy(rt);
    }
    return bad;
}

/* A thread that changes frames between two allocations of one body: a
 * fiber node of frame A, parked on an event, is resumed by the main
 * thread while that thread is inside a node body of frame B (helping in a
 * wait, after B's body allocated: the thread bumps B's chunk). The
 * fiber's allocation after its wait must come from A's memory, not from
 * the chunk the thread bumped for B (the runtime empties that with every
 * change of frame: exec/frame.c). Shown by lifetimes: A's frame stays
 * alive (its state does not run again) while B's state runs twice more,
 * so that B's first frame retires (its chunks go back, poisoned under
 * ASan) and B's third frame takes those chunks and overwrites them: A's
 * bytes must survive. No worker: the main thread runs every node, in
 * this order (checked, so that the case cannot pass without happening).
 * The same the other way (a second runtime): B's allocation, made after
 * A's fiber had run and parked on the thread, must survive A's state
 * running twice more. */
static dagrt_event sw_ev, sw_done;
static _Atomic int sw_parked, sw_in_b, sw_resumed_in_b, sw_runs, sw_aruns, sw_arena;
static unsigned char *_Atomic sw_a2, *_Atomic sw_b1;

/* A state's later frames: take chunks and overwrite them all. */
static void sw_overwrite(void)
{
    for (int k = 0; k < 4; k++) {
        unsigned char *q = dagrt_frame_alloc(60000, 16);
        if (q)
            memset(q, 0xEE, 60000);
    }
}

/* Whether p's 64 bytes all hold v. */
static int sw_holds(const unsigned char *p, unsigned char v)
{
    int same = 1;
    for (int k = 0; k < 64; k++)
        same &= p[k] == v;
    return same;
}

static void sw_noop(void *arg) { (void)arg; }

/* Helps the caller's runtime until *flag is set or many tries have passed. */
static void sw_help_until(dagrt *rt, _Atomic int *flag)
{
    for (int i = 0; i < 10000 && !atomic_load(flag); i++) {
        dagrt_group g;
        dagrt_group_init(&g);
        if (dagrt_spawn(rt, &g, sw_noop, NULL) == 0)
            dagrt_group_wait(rt, &g);
    }
}

static void sw_fiber(void *c)
{
    dagrt *rt = c;
    if (atomic_fetch_add(&sw_aruns, 1) > 0) {
        sw_overwrite();
        return;
    }
    /* With sw_arena, through a frame arena opened before the wait: its
     * chunk is A's whatever the thread does meanwhile. */
    dagrt_frame_arena h;
    int arena = atomic_load(&sw_arena) && dagrt_frame_arena_open(&h) == 0;
    unsigned char *p1 = arena ? dagrt_frame_arena_alloc(&h, 64, 16) : dagrt_frame_alloc(64, 16);
    if (p1)
        memset(p1, 0xA1, 64);
    atomic_store(&sw_parked, 1);
    dagrt_event_wait(rt, &sw_ev);
    atomic_store(&sw_resumed_in_b, atomic_load(&sw_in_b));
    unsigned char *p2 = arena ? dagrt_frame_arena_alloc(&h, 64, 16) : dagrt_frame_alloc(64, 16);
    if (p2)
        memset(p2, 0xA2, 64);
    if (arena)
        dagrt_frame_arena_close(&h);
    atomic_store(&sw_a2, p2);
    dagrt_event_set(&sw_done);
}

static void sw_b(void *c)
{
    dagrt *rt = c;
    if (atomic_fetch_add(&sw_runs, 1) > 0) {
        sw_overwrite();
        return;
    }
    sw_help_until(rt, &sw_parked);          /* A's fiber runs and parks */
    unsigned char *q = dagrt_frame_alloc(64, 16);   /* this thread now bumps B's chunk */
    if (q)
        memset(q, 0xB0, 64);
    atomic_store(&sw_b1, q);
    atomic_store(&sw_in_b, 1);
    dagrt_event_set(&sw_ev);
    /* ... and resumes it, still in B's body: the wait helps (bounded, so a
     * runtime that never resumes it there fails the check below instead of
     * hanging). */
    dagrt_event_wait_until(rt, &sw_done, dagrt_now_ns() + 2000000000ull, NULL);
    atomic_store(&sw_in_b, 0);
}

static const uint32_t sw_succ[1] = {0};
static const dagrt_node sw_fiber_nd = {.name = "f", .kind = DAGRT_NODE_TASK,
                                       .flags = DAGRT_NODE_FIBER, .run = sw_fiber};
static const dagrt_node sw_b_nd = {.name = "b", .kind = DAGRT_NODE_TASK, .run = sw_b};
static const dagrt_graph sw_ga = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "sw_a",
                                  .nodes = &sw_fiber_nd, .succ = sw_succ};
static const dagrt_graph sw_gb = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "sw_b",
                                  .nodes = &sw_b_nd, .succ = sw_succ};

static void switch_case(int b_side, int arena)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 0;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "switch: no runtime");
    if (!rt)
        return;
    static dagrt_node_state nsa[1], nsb[1];
    static dagrt_graph_state sta, stb;
    dagrt_graph_state_init(&sta, nsa, 1);
    dagrt_graph_state_init(&stb, nsb, 1);
    dagrt_event_init(&sw_ev, false);
    dagrt_event_init(&sw_done, false);
    atomic_store(&sw_parked, 0);
    atomic_store(&sw_in_b, 0);
    atomic_store(&sw_resumed_in_b, 0);
    atomic_store(&sw_runs, 0);
    atomic_store(&sw_aruns, 0);
    atomic_store(&sw_arena, arena);
    atomic_store(&sw_a2, NULL);
    atomic_store(&sw_b1, NULL);
    int rc = dagrt_graph_start(rt, &sw_ga, &sta, rt, NULL, NULL);
    EXPECT(rc == 0, "switch: start A: %d", rc);
    if (rc == 0) {
        rc = dagrt_graph_run(rt, &sw_gb, &stb, rt);
        EXPECT(rc == 0, "switch: run B: %d", rc);
        int rw = dagrt_graph_wait(rt, &sta);
        EXPECT(rw == 0, "switch: wait A: %d", rw);
    }
    unsigned char *a2 = atomic_load(&sw_a2), *b1 = atomic_load(&sw_b1);
    EXPECT(atomic_load(&sw_resumed_in_b) && a2 && b1,
           "switch: A's fiber was not resumed inside B's body (resumed there %d, allocated %d %d): "
           "the case did not happen", atomic_load(&sw_resumed_in_b), a2 != NULL, b1 != NULL);
    if (b_side) {
        /* A's state twice more: A's first frame retires and its chunks
         * are overwritten, while B's first frame is alive: B's allocation
         * (made after the fiber of A had run on the thread) must keep its
         * bytes. */
        for (int k = 0; k < 2 && rc == 0; k++)
            rc = dagrt_graph_run(rt, &sw_ga, &sta, rt);
        EXPECT(rc == 0, "switch: A again: %d", rc);
        if (b1)
            EXPECT(sw_holds(b1, 0xB0), "switch: B's allocation after A's fiber ran on the thread "
                                       "was not B's memory (overwritten once frame A retired)");
    } else {
        /* B's twice more: the fiber's allocation must survive. */
        for (int k = 0; k < 2 && rc == 0; k++)
            rc = dagrt_graph_run(rt, &sw_gb, &stb, rt);
        EXPECT(rc == 0, "switch: B again: %d", rc);
        if (a2)
            EXPECT(sw_holds(a2, 0xA2), "switch: the fiber's allocation after its frame changed on "
                                       "the thread was not its frame's memory (overwritten once "
                                       "frame B retired)");
    }
    dagrt_destroy(rt);
}


/* A fiber node that moves thread between two allocations, while the
 * thread it left bumps the same frame for another node: dagrt_frame_alloc
 * is inline in the caller (dagrt.h), and must find the thread it runs on
 * afresh after every call that may move it (a cached thread-local address
 * would bump the old thread's window, shared with that thread's node).
 * Graph: f (fiber), g and m (on main), all roots, two workers. f
 * allocates and parks on an event. g and m each wait until f has parked;
 * the first of them to run on the thread f left takes the role of "the
 * thread it left": it allocates (that thread's window, in the same frame),
 * wakes f and holds its thread until f is done, so f resumes on another
 * thread and allocates there. The other returns once the role is taken
 * (or, when neither runs on f's thread within 10 ms, wakes f itself: a
 * frame that tests nothing). g's allocations before and after must be
 * adjacent (nobody else bumped its window), f's must not lie between
 * them, and every byte must hold. Whether a frame moves f is the
 * scheduler's (f runs first on the caller or on a worker, and the role's
 * node must then run on that thread): frames go on until 10 moved f off
 * the role's thread, and the case fails if none ever does. */
static struct {
    dagrt *rt;
    dagrt_event ev;
    _Atomic int parked, done, role, bad;
    int tf0, tf1, tg;
    unsigned char *p1, *p2, *q1, *q2;
} mv;

#define MV_EXPECT(cond, ...)                                                       \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fmem_scenario:%d: move: ", __LINE__);                 \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            atomic_fetch_add(&mv.bad, 1);                                          \
        }                                                                          \
    } while (0)

static unsigned char *mv_alloc(unsigned char v)
{
    unsigned char *p = dagrt_frame_alloc(64, 16);
    MV_EXPECT(p != NULL, "NULL (%d)", dagrt_frame_last_error());
    if (p)
        memset(p, v, 64);
    return p;
}

/* Spins until *flag is set; 0 after limit_ms. */
static int mv_until(_Atomic int *flag, long limit_ms)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (!atomic_load(flag)) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > limit_ms)
            return 0;
    }
    return 1;
}

static void mv_f(void *c)
{
    (void)c;
    mv.tf0 = dagrt_thread_index(mv.rt);
    mv.p1 = mv_alloc(0xF1);
    atomic_store(&mv.parked, 1);
    MV_EXPECT(dagrt_event_wait(mv.rt, &mv.ev) == 0, "wait");
    mv.tf1 = dagrt_thread_index(mv.rt);
    mv.p2 = mv_alloc(0xF2);
    atomic_store(&mv.done, 1);
}

/* g and m: the thread f left, if this is it and nobody took the role. */
static void mv_left(void *c)
{
    (void)c;
    MV_EXPECT(mv_until(&mv.parked, 5000), "f never parked");
    int here = dagrt_thread_index(mv.rt), none = 0;
    if (here == mv.tf0 && atomic_compare_exchange_strong(&mv.role, &none, 1)) {
        mv.tg = here;
        mv.q1 = mv_alloc(0x61);
        dagrt_event_set(&mv.ev);
        MV_EXPECT(mv_until(&mv.done, 5000), "f never resumed");
        mv.q2 = mv_alloc(0x62);
    } else if (!mv_until(&mv.role, 10) && atomic_compare_exchange_strong(&mv.role, &none, 2)) {
        dagrt_event_set(&mv.ev);   /* nobody ran on f's thread: no test this frame */
    }
}

static void move_case(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 2;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    static const uint32_t succ[1] = {0};
    static const dagrt_node nodes[3] = {
        {.name = "f", .kind = DAGRT_NODE_TASK, .flags = DAGRT_NODE_FIBER, .run = mv_f},
        {.name = "g", .kind = DAGRT_NODE_TASK, .run = mv_left},
        {.name = "m", .kind = DAGRT_NODE_TASK, .flags = DAGRT_NODE_MAIN, .run = mv_left},
    };
    static const dagrt_graph g = {.version = DAGRT_GRAPH_VERSION, .nnodes = 3, .name = "move",
                                  .nodes = nodes, .succ = succ};
    static dagrt_node_state ns[3];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    mv.rt = rt;
    atomic_store(&mv.bad, 0);
    int moved = 0, frames = 0;
    for (; frames < 1000 && moved < 10 && atomic_load(&mv.bad) == 0; frames++) {
        atomic_store(&mv.parked, 0);
        atomic_store(&mv.done, 0);
        atomic_store(&mv.role, 0);
        dagrt_event_init(&mv.ev, false);
        mv.p1 = mv.p2 = mv.q1 = mv.q2 = NULL;
        EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == 0, "frame %d", frames);
        if (atomic_load(&mv.role) != 1)
            continue;   /* nobody was on f's thread: nothing to check */
        MV_EXPECT(mv.p1 && mv.p2 && mv.q1 && mv.q2, "frame %d: an allocation failed", frames);
        if (!(mv.p1 && mv.p2 && mv.q1 && mv.q2))
            break;
        MV_EXPECT(sw_holds(mv.p1, 0xF1) && sw_holds(mv.p2, 0xF2) && sw_holds(mv.q1, 0x61) &&
                      sw_holds(mv.q2, 0x62), "frame %d: an allocation's bytes changed", frames);
        MV_EXPECT(mv.q2 == mv.q1 + 64, "frame %d: g's allocations %p, %p not adjacent (f on "
                  "threads %d, %d; g on %d)", frames, (void *)mv.q1, (void *)mv.q2, mv.tf0, mv.tf1,
                  mv.tg);
        MV_EXPECT(!(mv.p2 > mv.q1 && mv.p2 < mv.q2 + 64), "frame %d: f's allocation after its "
                  "move lies in g's", frames);
        if (mv.tf0 == mv.tg && mv.tf1 != mv.tf0)
            moved++;
    }
    if (getenv("DAGC_TEST_VERBOSE"))
        fprintf(stderr, "move: %d of %d frames moved f off the thread it left\n", moved, frames);
    EXPECT(moved > 0, "in %d frames the fiber never moved off the thread it left", frames);
    bad += atomic_load(&mv.bad);
    dagrt_destroy(rt);
}

/* A frame arena and its thread's chunk hand over in one plain task (no
 * worker, one fresh frame: nothing else touches the chunk): the arena's
 * first allocations follow the thread's last, and after its close the
 * thread's follow the arena's; a second arena open at once takes a chunk
 * of its own, and the two never overlap (each filled, then checked). */
static _Atomic int ho_bad;

#define HO_EXPECT(cond, ...)                                                       \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fmem_scenario:%d: ", __LINE__);                       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            atomic_fetch_add(&ho_bad, 1);                                          \
        }                                                                          \
    } while (0)

static void handoff_run(void *arg)
{
    (void)arg;
    char *p = dagrt_frame_alloc(16, 16);
    dagrt_frame_arena h, g;
    HO_EXPECT(dagrt_frame_arena_open(&h) == 0, "open");
    char *q = dagrt_frame_arena_alloc(&h, 16, 16);
    char *r = dagrt_frame_arena_alloc(&h, 32, 16);
    HO_EXPECT(p && q == p + 16 && r == q + 16, "the arena did not take the thread's chunk: "
              "%p %p %p", (void *)p, (void *)q, (void *)r);
    /* A second arena: a chunk of its own. */
    HO_EXPECT(dagrt_frame_arena_open(&g) == 0, "open a second");
    unsigned char *a[64], *b[64];
    for (int i = 0; i < 64; i++) {
        a[i] = dagrt_frame_arena_alloc(&h, 48, 8);
        b[i] = dagrt_frame_arena_alloc(&g, 48, 8);
        if (a[i])
            memset(a[i], 0x5A, 48);
        if (b[i])
            memset(b[i], 0xA5, 48);
    }
    for (int i = 0; i < 64; i++) {
        int ok = a[i] && b[i];
        for (int k = 0; ok && k < 48; k++)
            ok = a[i][k] == 0x5A && b[i][k] == 0xA5;
        HO_EXPECT(ok, "two arenas' allocations %d overlap (or NULL)", i);
    }
    /* After both close, the thread bumps one of their chunks (the one
     * with more room) where its arena stopped. */
    char *t = dagrt_frame_arena_alloc(&h, 16, 16);
    char *v = dagrt_frame_arena_alloc(&g, 16, 16);
    dagrt_frame_arena_close(&g);
    dagrt_frame_arena_close(&h);
    char *u = dagrt_frame_alloc(16, 16);
    HO_EXPECT(t && v && (u == t + 16 || u == v + 16), "after the closes the thread bumps neither "
              "arena's chunk: %p %p %p", (void *)t, (void *)v, (void *)u);
}

static void handoff_case(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.crowd_frames = DAGRT_CROWD_PLAN;   /* plan mode's own mechanisms: never the crowded switch */
    cfg.workers = 0;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "handoff: dagrt_create");
    if (!rt)
        return;
    static const uint32_t succ[1] = {0};
    static const dagrt_node node = {.name = "handoff", .kind = DAGRT_NODE_TASK,
                                    .run = handoff_run};
    static const dagrt_graph g = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "handoff",
                                  .nodes = &node, .succ = succ};
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    atomic_store(&ho_bad, 0);
    for (int f = 0; f < 3; f++)
        EXPECT(dagrt_graph_run(rt, &g, &st, NULL) == 0, "handoff frame %d", f);
    EXPECT(atomic_load(&ho_bad) == 0, "handoff: %d violations", atomic_load(&ho_bad));
    dagrt_destroy(rt);
}

int fmem_scenario(int frames)
{
    bad = 0;
    static const int workers[] = {0, 1, 3};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++)
        run_cases(workers[k], frames);
    budget_case();
    outside_and_retire();
    switch_case(0, 0);
    switch_case(1, 0);
    switch_case(0, 1);
    handoff_case();
    move_case();
    bad += fmem_slab_case();
    return bad;
}

/* A use of a retired frame's memory: ASan must report it and end the
 * process (the test expects that failure). Elsewhere it does nothing
 * (only ASan can see it). Only with FMEM_UAF=1 in the environment, so
 * that a driver run of every scenario never trips it. */
int fmem_uaf(void)
{
#ifdef FMEM_ASAN
    if (!getenv("FMEM_UAF"))
        return 0;
    /* Exit 0 whenever ASan has not ended the process: the test expects a
     * failure, so that counts against it. */
    dagrt *rt = dagrt_create(NULL);
    if (!rt)
        return 0;
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    kept = NULL;
    dagrt_graph_run(rt, &keep_g, &st, NULL);
    dagrt_graph_run(rt, &keep_g, &st, NULL);
    volatile char *p = kept;
    if (p)
        p[0] = 2;   /* ASan: use-after-poison */
    dagrt_destroy(rt);
    fprintf(stderr, "fmem_uaf: the use of a retired frame's memory went unreported\n");
    return 0;
#else
    return 0;
#endif
}
