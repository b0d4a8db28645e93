/*
 * pcopy_scenario.c - (language 2.2) the copies of a per-frame resource that
 * dagc lays out (pcopy.dag): in a pipeline of every depth each frame's
 * writer fills its copy through pcopy_snap_copy() while the readers of the
 * next frame read it through pcopy_snap_prev_copy(); every copy a reader
 * sees is of the frame before its own (or its own), whole, never torn or
 * stale. An instance's runs and G_run's keep two copies each; outside a
 * frame of graph pcopy the accessors give NULL.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "pcopy.h"
#include "pcopy_scenario.h"

static int bad;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "pcopy_scenario:%d: ", __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

static uint64_t word_of(uint64_t number, uint32_t k) { return number * 0x9E3779B97F4A7C15ull + k; }
static uint64_t tag_of(uint64_t number) { return ~number; }

/* Counters in the context: seq_cst, test bookkeeping. */
static void fail(struct pcopy_ctx *c, const char *what, uint64_t number)
{
    if (atomic_fetch_add(&c->bad, 1) < 5)
        fprintf(stderr, "pcopy: frame %llu: %s\n", (unsigned long long)number, what);
}

/* Whether S is frame NUMBER's copy, whole: read a few times over, so that
 * a writer of another frame at work on it shows in one pass or another. */
static void check_copy(struct pcopy_ctx *c, const struct pcopy_snap *s, uint64_t number,
                       int may_be_unwritten)
{
    if (!s) {
        fail(c, "no copy from the accessor", number);
        return;
    }
    const volatile struct pcopy_snap *v = s;
    if (v->tag == 0 && may_be_unwritten) {
        atomic_fetch_add(&c->unwritten, 1);
        return;
    }
    uint32_t k = PCOPY_WORDS;
    int ok = 0;
    for (int pass = 0; pass < 4; pass++) {
        ok = v->tag == tag_of(number) && v->number == number;
        for (k = 0; ok && k < PCOPY_WORDS && v->words[k] == word_of(number, k);)
            k++;
        ok = ok && k == PCOPY_WORDS;
        if (!ok)
            break;
    }
    if (ok)
        atomic_fetch_add(&c->reads, 1);
    else
        fail(c, "copy torn or stale", number);
}

static uint64_t number_of(struct pcopy_ctx *c)
{
    dagrt_frame_info fi;
    if (dagrt_get_frame(&fi) != 0) {
        fail(c, "dagrt_get_frame", 0);
        return 0;
    }
    return fi.number;
}

void pcopy_w(struct pcopy_ctx *c)
{
    uint64_t n = number_of(c);
    struct pcopy_snap *s = pcopy_snap_copy();
    if (!s) {
        fail(c, "no copy to write", n);
        return;
    }
    s->number = n;
    for (uint32_t k = 0; k < PCOPY_WORDS; k++)
        s->words[k] = word_of(n, k);
    s->tag = tag_of(n);
}

/* The previous copy: frame n - 1's, or at the first frame none written. */
static void read_prev(struct pcopy_ctx *c, uint64_t n)
{
    check_copy(c, pcopy_snap_prev_copy(), n - 1, n == 0);
}

void pcopy_r1(struct pcopy_ctx *c) { read_prev(c, number_of(c)); }

void pcopy_r2(struct pcopy_ctx *c)
{
    uint64_t n = number_of(c);
    check_copy(c, pcopy_snap_copy(), n, 0);
    read_prev(c, n);
}

void pcopy_late(struct pcopy_ctx *c) { read_prev(c, number_of(c)); }

void other_probe(struct pcopy_ctx *c)
{
    if (pcopy_snap_copy() == NULL && pcopy_snap_prev_copy() == NULL)
        atomic_fetch_add(&c->probe_null, 1);
}

static void reset(struct pcopy_ctx *c)
{
    atomic_store(&c->bad, 0);
    atomic_store(&c->reads, 0);
    atomic_store(&c->unwritten, 0);
    atomic_store(&c->probe_null, 0);
}

/* Per frame: r2 reads 2 copies, r1 and late 1: 4, the first frame's three
 * previous copies unwritten. */
static void expect_frames(struct pcopy_ctx *c, int frames, const char *what, int workers,
                          unsigned depth)
{
    uint64_t want = 4 * (uint64_t)frames - 3;
    EXPECT(atomic_load(&c->bad) == 0 && atomic_load(&c->reads) == want &&
               atomic_load(&c->unwritten) == 3,
           "%s, %d workers, depth %u: %d bad, %llu whole reads of %llu, %llu unwritten (want 3)",
           what, workers, depth, atomic_load(&c->bad), (unsigned long long)atomic_load(&c->reads),
           (unsigned long long)want, (unsigned long long)atomic_load(&c->unwritten));
}

int pcopy_scenario(int frames)
{
    bad = 0;
    if (frames < 2)
        frames = 2;
    EXPECT(pcopy_snap_copy() == NULL && pcopy_snap_prev_copy() == NULL,
           "accessors outside a frame");
    static const int workers[] = {0, 1, 3};
    for (size_t k = 0; k < sizeof workers / sizeof workers[0]; k++) {
        dagrt_config cfg;
        dagrt_config_init(&cfg);
        cfg.workers = workers[k];
        dagrt *rt = dagrt_create(&cfg);
        EXPECT(rt != NULL, "dagrt_create");
        if (!rt)
            continue;
        static struct pcopy_ctx c;
        for (unsigned depth = 1; depth <= DAGRT_MAX_IN_FLIGHT; depth++) {
            static pcopy_pipeline_t p;
            reset(&c);
            EXPECT(pcopy_pipeline_init(&p, depth) == 0, "init");
            for (int f = 0; f < frames; f++)
                if (pcopy_pipeline_submit(rt, &p, &c) != 0) {
                    EXPECT(0, "depth %u frame %d refused", depth, f);
                    break;
                }
            EXPECT(pcopy_pipeline_drain(rt, &p) == 0, "drain");
            expect_frames(&c, frames, "pipeline", workers[k], depth);
        }
        /* An instance: its two copies, its runs one after the other. */
        static pcopy_instance_t inst;
        reset(&c);
        EXPECT(pcopy_instance_init(&inst) == 0, "instance init");
        int runs = frames < 200 ? frames : 200;
        for (int f = 0; f < runs; f++)
            EXPECT(pcopy_instance_run(rt, &inst, &c) == 0, "instance run %d", f);
        expect_frames(&c, runs, "instance", workers[k], 0);
        /* Another graph's frame gets none of pcopy's copies. */
        reset(&c);
        EXPECT(other_run(rt, &c) == 0 && atomic_load(&c.probe_null) == 1,
               "graph other's task got pcopy's copies");
        dagrt_destroy(rt);
    }
    return bad;
}
