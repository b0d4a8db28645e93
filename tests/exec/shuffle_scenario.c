/*
 * shuffle_scenario.c - the shuffled serial switch (dagrt_config.shuffle) on
 * shuffle.dag's planted bug: `consume` reads what `produce` writes in the
 * same frame with no edge between them. Under the switch every frame runs
 * its tasks on the calling thread in a random valid order, so the bug
 * shows: consume runs first in half the frames (the two are roots of the
 * same shape, symmetric in every draw), and the chance that it has not
 * shown after SHUFFLE_BOUND frames is 2^-20, about one in a million, for
 * any seed. Checked for G_run (serial frames), a pipeline (serial frames
 * after the ones in flight), started runs (the dynamic executor's
 * shuffled ready list) and G_run beside a guest slot, each for
 * SHUFFLE_SEEDS seeds; the same seed
 * replays the same orders and another seed draws others; every task ran
 * once a frame, after its inputs, all on the calling thread. The control:
 * the plain serial switch (table order) never shows the bug.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "shuffle.h"
#include "shuffle_scenario.h"

#define SHUFFLE_BOUND 20
#define SHUFFLE_SEEDS 16
#define SHUFFLE_FRAMES 60
#define SHUFFLE_ITEMS 32

static int bad;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "shuffle_scenario:%d: ", __LINE__);                    \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

/* Task ids in the log; a piece of spread is 100 + its first item / 4. */
enum { T_PRODUCE = 1, T_CONSUME, T_SIDE, T_ODD, T_EITHER, T_PRESENT, T_S1, T_S2, T_S3 };

/* One thread runs every task under either switch: plain fields. */
static void log_task(struct shuffle_ctx *c, unsigned id)
{
    if (dagrt_thread_index(c->rt) != 0)
        c->off_main++;
    if (c->nlog < SHUFFLE_LOG)
        c->log[c->nlog] = (uint8_t)id;
    c->nlog++;
}

static int pos(const struct shuffle_ctx *c, unsigned id)
{
    for (uint32_t k = 0; k < c->nlog && k < SHUFFLE_LOG; k++)
        if (c->log[k] == id)
            return (int)k;
    return -1;
}

void planted_produce(struct shuffle_ctx *c)
{
    log_task(c, T_PRODUCE);
    c->value = c->frame;
}

void planted_consume(struct shuffle_ctx *c)
{
    log_task(c, T_CONSUME);
    if (c->value != c->frame) {   /* the planted bug: last frame's value */
        if (!c->stale)
            c->first_stale = c->frame + 1;
        c->stale++;
    }
}

void planted_side(struct shuffle_ctx *c) { log_task(c, T_SIDE); }
void planted_odd(struct shuffle_ctx *c) { log_task(c, T_ODD); }
void planted_either(struct shuffle_ctx *c) { log_task(c, T_EITHER); }
void planted_present(struct shuffle_ctx *c) { log_task(c, T_PRESENT); }
void sway_s1(struct shuffle_ctx *c) { log_task(c, T_S1); }
void sway_s2(struct shuffle_ctx *c) { log_task(c, T_S2); }
void sway_s3(struct shuffle_ctx *c) { log_task(c, T_S3); }
bool odd_frame(struct shuffle_ctx *c) { return (c->frame & 1) != 0; }
size_t planted_spread_count(struct shuffle_ctx *c) { return c->items; }

void planted_spread(struct shuffle_ctx *c, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i += 4)
        log_task(c, 100 + (unsigned)(i / 4));
}

/* After a frame: every task once (odd only in odd frames), after its
 * inputs; the log into the hash; ready for the next. */
static void frame_done(struct shuffle_ctx *c, const char *how)
{
    static const unsigned once[] = {T_PRODUCE, T_CONSUME, T_SIDE, T_EITHER, T_PRESENT,
                                    T_S1, T_S2, T_S3};
    uint32_t want = 8 + SHUFFLE_ITEMS / 4 + (uint32_t)(c->frame & 1);
    EXPECT(c->nlog == want, "%s, frame %llu: %u task starts, want %u", how,
           (unsigned long long)c->frame, c->nlog, want);
    for (size_t k = 0; k < sizeof once / sizeof once[0]; k++)
        EXPECT(pos(c, once[k]) >= 0, "%s, frame %llu: task %u did not run", how,
               (unsigned long long)c->frame, once[k]);
    EXPECT((pos(c, T_ODD) >= 0) == ((c->frame & 1) != 0), "%s: odd's when", how);
    int present = pos(c, T_PRESENT), side = pos(c, T_SIDE), s1 = pos(c, T_S1);
    /* (Not necessarily last: `either` is an OR, which the dynamic
     * executor fires on its first input, so spread may still run.) */
    EXPECT(present > pos(c, T_PRODUCE) && present > pos(c, T_CONSUME) &&
           present > pos(c, T_EITHER) && present > pos(c, T_S2) && present > pos(c, T_S3),
           "%s, frame %llu: present ran before an input", how, (unsigned long long)c->frame);
    EXPECT(side < pos(c, 100) && side < s1 && s1 < pos(c, T_S2) && s1 < pos(c, T_S3),
           "%s, frame %llu: a task ran before its input", how, (unsigned long long)c->frame);
    EXPECT(pos(c, T_EITHER) > side, "%s: either before side", how);
    for (uint32_t k = 0; k < c->nlog && k < SHUFFLE_LOG; k++)
        c->hash = (c->hash ^ c->log[k]) * UINT64_C(0x100000001b3);
    c->hash = (c->hash ^ 0xff) * UINT64_C(0x100000001b3);
    c->nlog = 0;
}

/* BY_GUEST: G_run on a runtime with a guest slot (only serial frames are
 * shuffled there). */
enum { BY_RUN, BY_PIPE, BY_START, BY_GUEST };
static const char *const how_name[] = {"G_run", "pipeline", "started runs", "G_run, a guest slot"};

/* `frames` frames of planted on a fresh runtime (shuffled with seed, or
 * the plain serial switch for seed 0), run `how`; returns the context. */
static struct shuffle_ctx run_frames(uint64_t seed, int how, int frames)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.serial = seed == 0;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = seed;
    cfg.guest_threads = how == BY_GUEST;
    struct shuffle_ctx c;
    memset(&c, 0, sizeof c);
    c.items = SHUFFLE_ITEMS;
    c.hash = UINT64_C(0xcbf29ce484222325);
    c.value = UINT64_MAX;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return c;
    c.rt = rt;
    EXPECT(dagrt_shuffle_seed(rt) == seed, "seed %llu", (unsigned long long)dagrt_shuffle_seed(rt));
    static planted_pipeline_t pipe;
    static planted_instance_t inst;
    if (how == BY_PIPE)
        EXPECT(planted_pipeline_init(&pipe, 2) == 0, "pipeline init");
    if (how == BY_START)
        EXPECT(planted_instance_init(&inst) == 0, "instance init");
    for (int f = 0; f < frames; f++) {
        c.frame = (uint64_t)f;
        int rc;
        if (how == BY_RUN || how == BY_GUEST) {
            rc = planted_run(rt, &c);
        } else if (how == BY_PIPE) {
            /* The context by pointer: frames run one after another under
             * the switch, so each sees its own c.frame. */
            rc = planted_pipeline_submit(rt, &pipe, &c);
            if (rc == 0)
                rc = planted_pipeline_drain(rt, &pipe);
        } else {
            rc = planted_instance_start(rt, &inst, &c);
            if (rc == 0)
                rc = planted_instance_wait(rt, &inst);
        }
        EXPECT(rc == 0, "%s, frame %d: %d", how_name[how], f, rc);
        frame_done(&c, how_name[how]);
    }
    EXPECT(c.off_main == 0, "%s: %u tasks ran off the calling thread", how_name[how], c.off_main);
    dagrt_destroy(rt);
    return c;
}

int shuffle_scenario(void)
{
    bad = 0;
    for (int how = BY_RUN; how <= BY_GUEST; how++) {
        /* Found within the bound, for every seed. */
        for (uint64_t seed = 1; seed <= SHUFFLE_SEEDS; seed++) {
            struct shuffle_ctx c = run_frames(seed * 7777, how, SHUFFLE_BOUND);
            EXPECT(c.stale > 0, "%s, seed %llu: the planted bug did not show in %d frames",
                   how_name[how], (unsigned long long)(seed * 7777), SHUFFLE_BOUND);
        }
        /* Replayed by its seed: the same orders, the same first stale
         * frame; another seed, other orders. About half the frames show
         * it (binomial, 60 frames: 30 +- 4). */
        struct shuffle_ctx a = run_frames(1234, how, SHUFFLE_FRAMES);
        struct shuffle_ctx b = run_frames(1234, how, SHUFFLE_FRAMES);
        struct shuffle_ctx o = run_frames(4321, how, SHUFFLE_FRAMES);
        EXPECT(a.hash == b.hash && a.first_stale == b.first_stale && a.stale == b.stale,
               "%s: seed 1234 twice, two runs (stale %llu / %llu)", how_name[how],
               (unsigned long long)a.stale, (unsigned long long)b.stale);
        EXPECT(a.hash != o.hash, "%s: seeds 1234 and 4321 drew the same orders", how_name[how]);
        EXPECT(a.stale >= 12 && a.stale <= 48, "%s: stale in %llu of %d frames", how_name[how],
               (unsigned long long)a.stale, SHUFFLE_FRAMES);
        /* The control: table order (the plain switch) never shows it. */
        struct shuffle_ctx t = run_frames(0, how, SHUFFLE_FRAMES);
        EXPECT(t.stale == 0, "%s, plain serial: stale in %llu frames", how_name[how],
               (unsigned long long)t.stale);
    }
    return bad;
}

/* ---------------------------------------------------------------------------
 * An OR node run at its first input (shuffle.dag's orjoin): `join` reads
 * what `slow` writes, but is an OR of `fast` and `slow`. The shuffle puts
 * join in the bag once either input is done; it runs before slow when fast
 * is drawn first and then join before slow: a quarter of the frames (1/2 *
 * 1/2). Not seen in OR_BOUND frames: (3/4)^50, 6e-7, for any seed. The
 * declared version (orfixed: join after fast, slow) never shows it, nor
 * does table order. Through G_run, started runs (the dynamic executor's
 * shuffled ready list, which fired OR nodes at the first input already)
 * and a pipeline. */

#define OR_BOUND 50
#define OR_SEEDS 16

void orjoin_fast(struct shuffle_ctx *c) { log_task(c, T_PRODUCE); }
void orjoin_slow(struct shuffle_ctx *c)
{
    log_task(c, T_CONSUME);
    c->slow_value = c->frame;
}
void orjoin_join(struct shuffle_ctx *c)
{
    log_task(c, T_PRESENT);
    if (c->slow_value != c->frame) {   /* the planted bug: slow has not run yet */
        if (!c->or_stale)
            c->or_first = c->frame + 1;
        c->or_stale++;
    }
}
void orfixed_fast(struct shuffle_ctx *c) { orjoin_fast(c); }
void orfixed_slow(struct shuffle_ctx *c) { orjoin_slow(c); }
void orfixed_join(struct shuffle_ctx *c) { orjoin_join(c); }

/* `frames` frames of orjoin (or orfixed when fixed) on a fresh runtime,
 * shuffled with seed (plain serial for 0), run `how` (BY_RUN, BY_PIPE,
 * BY_START, BY_GUEST). */
static struct shuffle_ctx or_frames(uint64_t seed, int how, bool fixed, int frames)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.serial = seed == 0;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = seed;
    cfg.guest_threads = how == BY_GUEST;
    struct shuffle_ctx c;
    memset(&c, 0, sizeof c);
    c.hash = UINT64_C(0xcbf29ce484222325);
    c.slow_value = UINT64_MAX;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return c;
    c.rt = rt;
    static orjoin_pipeline_t pj;
    static orfixed_pipeline_t pf;
    static orjoin_instance_t ij;
    static orfixed_instance_t jf;
    if (how == BY_PIPE)
        EXPECT((fixed ? orfixed_pipeline_init(&pf, 2) : orjoin_pipeline_init(&pj, 2)) == 0,
               "pipeline init");
    if (how == BY_START)
        EXPECT((fixed ? orfixed_instance_init(&jf) : orjoin_instance_init(&ij)) == 0,
               "instance init");
    for (int f = 0; f < frames; f++) {
        c.frame = (uint64_t)f;
        int rc;
        if (how == BY_RUN || how == BY_GUEST) {
            rc = fixed ? orfixed_run(rt, &c) : orjoin_run(rt, &c);
        } else if (how == BY_PIPE) {
            rc = fixed ? orfixed_pipeline_submit(rt, &pf, &c) : orjoin_pipeline_submit(rt, &pj, &c);
            if (rc == 0)
                rc = fixed ? orfixed_pipeline_drain(rt, &pf) : orjoin_pipeline_drain(rt, &pj);
        } else {
            rc = fixed ? orfixed_instance_start(rt, &jf, &c) : orjoin_instance_start(rt, &ij, &c);
            if (rc == 0)
                rc = fixed ? orfixed_instance_wait(rt, &jf) : orjoin_instance_wait(rt, &ij);
        }
        EXPECT(rc == 0, "or, %s, frame %d: %d", how_name[how], f, rc);
        /* Each task once, join after one input at least. */
        int join = pos(&c, T_PRESENT), fast = pos(&c, T_PRODUCE), slow = pos(&c, T_CONSUME);
        EXPECT(c.nlog == 3 && join >= 0 && fast >= 0 && slow >= 0,
               "or, %s, frame %d: %u task starts", how_name[how], f, c.nlog);
        EXPECT(join > fast || join > slow, "or, %s, frame %d: join before both inputs",
               how_name[how], f);
        EXPECT(!fixed || (join > fast && join > slow),
               "or, %s, frame %d: join before an input of an AND", how_name[how], f);
        for (uint32_t k = 0; k < c.nlog && k < SHUFFLE_LOG; k++)
            c.hash = (c.hash ^ c.log[k]) * UINT64_C(0x100000001b3);
        c.hash = (c.hash ^ 0xff) * UINT64_C(0x100000001b3);
        c.nlog = 0;
    }
    EXPECT(c.off_main == 0, "or, %s: %u tasks ran off the calling thread", how_name[how],
           c.off_main);
    dagrt_destroy(rt);
    return c;
}

int shuffle_or_scenario(void)
{
    bad = 0;
    for (int how = BY_RUN; how <= BY_GUEST; how++) {
        for (uint64_t seed = 1; seed <= OR_SEEDS; seed++) {
            struct shuffle_ctx c = or_frames(seed * 7777, how, false, OR_BOUND);
            EXPECT(c.or_stale > 0, "or, %s, seed %llu: the planted bug did not show in %d frames",
                   how_name[how], (unsigned long long)(seed * 7777), OR_BOUND);
            struct shuffle_ctx d = or_frames(seed * 7777, how, true, OR_BOUND);
            EXPECT(d.or_stale == 0, "or, %s, seed %llu: declared, yet join read an old value",
                   how_name[how], (unsigned long long)(seed * 7777));
        }
        /* Replayed by its seed: the same orders, the same first frame. */
        struct shuffle_ctx a = or_frames(1234, how, false, OR_BOUND);
        struct shuffle_ctx b = or_frames(1234, how, false, OR_BOUND);
        struct shuffle_ctx o = or_frames(4321, how, false, OR_BOUND);
        EXPECT(a.hash == b.hash && a.or_first == b.or_first && a.or_stale == b.or_stale,
               "or, %s: seed 1234 twice, two runs", how_name[how]);
        EXPECT(a.hash != o.hash, "or, %s: seeds 1234 and 4321 drew the same orders", how_name[how]);
        /* The plain switch, for comparison, printed only: a G_run there
         * runs in table order (exec/serial.c) while its frames are small,
         * never showing the bug, but takes the dynamic executor, whose
         * ready list fires join at fast's completion, once they are not
         * (under TSan: the policy's timing, exec/policy.c), showing it in
         * every frame; pipelines and started runs always take it. */
        if (how == BY_RUN || how == BY_GUEST) {
            struct shuffle_ctx t = or_frames(0, how, false, OR_BOUND);
            printf("or, %s, plain serial: stale in %llu of %d frames\n", how_name[how],
                   (unsigned long long)t.or_stale, OR_BOUND);
        }
    }
    return bad;
}

/* ---------------------------------------------------------------------------
 * Beside a guest that helps (shuffle.dag's engined): a frame with a fiber
 * task (load) and a hot task (tick) runs on the dynamic executor, whose
 * ready list a guest that takes one of them drains beside the caller
 * (runtime/exec/dynamic.c, RT_SHUFFLE_SHARED). The caller's first take of
 * a frame is one of the three roots (produce, consume, side) at random,
 * and nothing else is ready or spawned before it: consume first in a
 * third of the frames, so the bug shows within ENGINE_BOUND frames but
 * with probability (2/3)^36, 5e-7, for any seed, whatever the guest does.
 * Checked through G_run, started runs and a pipeline (depth 2, drained
 * each frame), 16 seeds each, a guest thread
 * attached and helping the whole time (its wait runs what it steals):
 * every task once a frame, after its inputs; the seed and first bad frame
 * named. With the guest slot and no guest thread the caller alone takes,
 * so a seed replays exactly; the plain switch (FIFO) never shows it, and
 * beside the helping guest still runs every task once after its inputs. */

#define ENGINE_BOUND 36
#define ENGINE_SEEDS 16
#define ENGINE_PLAIN 1500   /* frames of the plain switch beside a helping guest */
enum { E_PRODUCE, E_CONSUME, E_SIDE, E_LOAD, E_TICK, E_MID, E_PRESENT };

static void e_begin(struct engine_ctx *c, unsigned id)
{
    if (dagrt_thread_index(c->rt) != 0)
        atomic_fetch_add(&c->off_main, 1);
    c->runs[id]++;
    c->start[id] = atomic_fetch_add(&c->seq, 1) + 1;
}
static void e_end(struct engine_ctx *c, unsigned id) { c->end[id] = atomic_fetch_add(&c->seq, 1) + 1; }

void engined_produce(struct engine_ctx *c)
{
    e_begin(c, E_PRODUCE);
    atomic_store_explicit(&c->value, c->frame, memory_order_relaxed);
    e_end(c, E_PRODUCE);
}
void engined_consume(struct engine_ctx *c)
{
    e_begin(c, E_CONSUME);
    if (atomic_load_explicit(&c->value, memory_order_relaxed) != c->frame) {   /* the planted bug */
        if (!c->stale)
            c->first_stale = c->frame + 1;
        c->stale++;
    }
    e_end(c, E_CONSUME);
}
#define ENGINE_TASK(name, id)                                                      \
    void engined_##name(struct engine_ctx *c)                                      \
    {                                                                              \
        e_begin(c, id);                                                            \
        e_end(c, id);                                                              \
    }
ENGINE_TASK(side, E_SIDE)
ENGINE_TASK(load, E_LOAD)
ENGINE_TASK(tick, E_TICK)
ENGINE_TASK(mid, E_MID)
ENGINE_TASK(present, E_PRESENT)

/* The guest: attached, it waits again and again for a main-thread task of
 * its own, which the caller runs in its waits; meanwhile its wait helps
 * (steals the frame's spawned fiber and hot node tasks, then drains the
 * ready list as their tasks do). */
static atomic_int g_stop, g_state;   /* state: 0 starting, 1 attached, 2 left */
static void g_nothing(void *arg) { (void)arg; }
static void *g_helper(void *arg)
{
    dagrt *rt = arg;
    if (dagrt_thread_attach(rt) < 0) {
        atomic_store(&g_state, 2);
        return NULL;
    }
    atomic_store(&g_state, 1);
    while (!atomic_load(&g_stop)) {
        dagrt_group g;
        dagrt_group_init(&g);
        if (dagrt_spawn_ex(rt, &g, g_nothing, NULL, DAGRT_SPAWN_MAIN) != 0)
            break;
        dagrt_group_wait(rt, &g);
    }
    dagrt_thread_detach(rt);
    atomic_store(&g_state, 2);
    return NULL;
}

static void engine_frame_check(struct engine_ctx *c, const char *how, uint64_t seed)
{
    static const unsigned edge[][2] = {{E_SIDE, E_LOAD}, {E_SIDE, E_TICK}, {E_LOAD, E_MID},
                                       {E_TICK, E_MID}, {E_PRODUCE, E_PRESENT},
                                       {E_CONSUME, E_PRESENT}, {E_MID, E_PRESENT}};
    for (unsigned i = 0; i < ENGINE_TASKS; i++)
        EXPECT(c->runs[i] == 1, "engined, %s, seed %llu, frame %llu: task %u ran %u times", how,
               (unsigned long long)seed, (unsigned long long)c->frame, i, c->runs[i]);
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++)
        EXPECT(c->start[edge[k][1]] > c->end[edge[k][0]],
               "engined, %s, seed %llu, frame %llu: task %u started before its input %u ended", how,
               (unsigned long long)seed, (unsigned long long)c->frame, edge[k][1], edge[k][0]);
    /* The order of starts, hashed: task ids by start. */
    for (uint32_t s = 1; s <= 2 * ENGINE_TASKS; s++)
        for (unsigned i = 0; i < ENGINE_TASKS; i++)
            if (c->start[i] == s)
                c->hash = (c->hash ^ (i + 1)) * UINT64_C(0x100000001b3);
    memset(c->start, 0, sizeof c->start);
    memset(c->end, 0, sizeof c->end);
    memset(c->runs, 0, sizeof c->runs);
    atomic_store(&c->seq, 0);
}

/* How engine_frames runs engined: G_run, started runs, a pipeline (depth
 * 2, drained after each frame). */
enum { E_BY_RUN, E_BY_START, E_BY_PIPE };
static const char *const e_how[] = {"G_run", "started runs", "pipeline"};

/* `frames` frames of engined on a fresh runtime with a guest slot,
 * shuffled with seed (plain serial for 0), run `by`, with a guest thread
 * helping when guest. */
static void engine_frames(struct engine_ctx *c, uint64_t seed, int by, bool guest, int frames)
{
    const char *how = e_how[by];
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.serial = seed == 0;
    cfg.shuffle = seed != 0;
    cfg.shuffle_seed = seed;
    cfg.guest_threads = 1;
    memset(c, 0, sizeof *c);
    c->hash = UINT64_C(0xcbf29ce484222325);
    atomic_store(&c->value, UINT64_MAX);
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    c->rt = rt;
    pthread_t th;
    atomic_store(&g_stop, 0);
    atomic_store(&g_state, 0);
    if (guest) {
        EXPECT(pthread_create(&th, NULL, g_helper, rt) == 0, "pthread_create");
        while (atomic_load(&g_state) == 0)
            dagrt_pump_main(rt);
        EXPECT(atomic_load(&g_state) == 1, "the guest could not attach");
    }
    static engined_instance_t inst;
    static engined_pipeline_t pipe;
    if (by == E_BY_START)
        EXPECT(engined_instance_init(&inst) == 0, "instance init");
    if (by == E_BY_PIPE)
        EXPECT(engined_pipeline_init(&pipe, 2) == 0, "pipeline init");
    for (int f = 0; f < frames; f++) {
        c->frame = (uint64_t)f;
        int rc;
        if (by == E_BY_START) {
            rc = engined_instance_start(rt, &inst, c);
            if (rc == 0)
                rc = engined_instance_wait(rt, &inst);
        } else if (by == E_BY_PIPE) {
            rc = engined_pipeline_submit(rt, &pipe, c);   /* the context by pointer */
            if (rc == 0)
                rc = engined_pipeline_drain(rt, &pipe);
        } else {
            rc = engined_run(rt, c);
        }
        EXPECT(rc == 0, "engined, %s, frame %d: %d", how, f, rc);
        engine_frame_check(c, how, seed);
    }
    if (guest) {
        atomic_store(&g_stop, 1);
        while (atomic_load(&g_state) != 2)
            dagrt_pump_main(rt);   /* the guest's last main task */
        pthread_join(th, NULL);
    }
    dagrt_destroy(rt);
}

int shuffle_engine_scenario(void)
{
    bad = 0;
    static struct engine_ctx c, d;
    uint32_t helped = 0;
    for (int by = E_BY_RUN; by <= E_BY_PIPE; by++) {
        const char *how = e_how[by];
        for (uint64_t seed = 1; seed <= ENGINE_SEEDS; seed++) {
            engine_frames(&c, seed * 7777, by, true, ENGINE_BOUND);
            EXPECT(c.stale > 0, "engined, %s, a guest helping, seed %llu: the planted bug did not "
                   "show in %d frames", how, (unsigned long long)(seed * 7777), ENGINE_BOUND);
            if (seed == 1 && c.stale)
                printf("engined, %s, a guest helping: seed %llu shows the planted bug first in frame "
                       "%llu (stale in %llu of %d)\n", how, (unsigned long long)(seed * 7777),
                       (unsigned long long)c.first_stale - 1, (unsigned long long)c.stale, ENGINE_BOUND);
            helped += atomic_load(&c.off_main);
        }
        /* The caller alone beside the guest slot: a seed replays exactly,
         * another draws other orders. */
        engine_frames(&c, 1234, by, false, 60);
        engine_frames(&d, 1234, by, false, 60);
        EXPECT(c.hash == d.hash && c.first_stale == d.first_stale && c.stale == d.stale,
               "engined, %s: seed 1234 twice, two runs", how);
        EXPECT(c.stale >= 8, "engined, %s: stale in %llu of 60 frames", how, (unsigned long long)c.stale);
        engine_frames(&d, 4321, by, false, 60);
        EXPECT(c.hash != d.hash, "engined, %s: seeds 1234 and 4321 drew the same orders", how);
        /* The control: the plain switch's FIFO list never shows it. */
        engine_frames(&c, 0, by, false, 60);
        EXPECT(c.stale == 0, "engined, %s, plain serial: stale in %llu frames", how,
               (unsigned long long)c.stale);
        /* The plain switch with the guest helping: every task once, after
         * its inputs (the list is shared: no one-thread run with a guest
         * slot; such runs lost a node in about one frame of 400 here). */
        engine_frames(&c, 0, by, true, ENGINE_PLAIN);
        helped += atomic_load(&c.off_main);
    }
    /* The guest really drained beside the caller: about three of the
     * seven tasks a frame here (a guest without a CPU for the whole run,
     * over a thousand frames, is the only way to none). */
    int frames = 3 * (ENGINE_SEEDS * ENGINE_BOUND + ENGINE_PLAIN);
    printf("engined: %u task runs on the guest over %d frames\n", helped, frames);
    EXPECT(helped > 0, "engined: the guest ran no task in %d frames", frames);
    return bad;
}
