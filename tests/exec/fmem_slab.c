/*
 * fmem_slab.c - where frame memory's chunks come from (runtime/exec/
 * frame.c): 64 KiB chunks cut from 2 MiB slabs, 32 made at a time, taken
 * in address order, counted in frame_chunks_new as made; the reserve
 * rounded up to a slab; a slab's chunks poisoned until taken (under
 * AddressSanitizer); the system's refusal (the os layer's seam) a NULL
 * with DAGRT_ENOMEM and a counted refusal, then frames as before; and
 * chunks recycled across frames only once their frame retired: each
 * frame fills every chunk it takes with its own number and checks them
 * all at its end, and the next frame checks the previous one's again
 * (a chunk handed to a frame while another still held it shows as the
 * other's number). Part of fmem_scenario (fmem_slab_case).
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dagrt.h"
#include "fmem_scenario.h"

/* The os layer's out-of-memory seam (runtime/os/os.h, which this
 * library's include path does not reach; the tests link the static
 * runtime, where the symbol is visible). */
void rt_os_alloc_refuse(bool refuse);

#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#endif

static int bad;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fmem_slab:%d: ", __LINE__);                           \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            bad++;                                                                 \
        }                                                                          \
    } while (0)

#define SLAB ((uintptr_t)2 << 20)
#define CHUNK ((uintptr_t)64 << 10)
#define HEAD 64
/* One allocation a chunk: two do not fit one (64 KiB less its header). */
#define BIG 40000
#define MAX_TAKE 80

/* The frame's task: `take` allocations of BIG bytes, each filled with
 * the frame's number; the previous frame's checked (still live) and this
 * one's checked again at the end. Runs on the main thread alone (0
 * workers), so the test reads these between frames without sync. */
static int take;
static uint64_t frame_no;
static unsigned char *got[2][MAX_TAKE];
static int got_n[2], task_err;

static int filled_with(const unsigned char *p, unsigned char v)
{
    for (size_t i = 0; i < BIG; i += 97)
        if (p[i] != v)
            return 0;
    return p[BIG - 1] == v;
}

static void slab_run(void *ctx)
{
    (void)ctx;
    int cur = (int)(frame_no & 1), prev = cur ^ 1;
    unsigned char me = (unsigned char)(frame_no + 1), before = (unsigned char)frame_no;
    got_n[cur] = 0;
    task_err = 0;
    for (int i = 0; i < take; i++) {
        unsigned char *p = dagrt_frame_alloc(BIG, 16);
        if (!p) {
            task_err = dagrt_frame_last_error();
            break;
        }
        memset(p, me, BIG);
        got[cur][got_n[cur]++] = p;
    }
    for (int i = 0; frame_no > 0 && i < got_n[prev]; i++)
        if (!filled_with(got[prev][i], before)) {
            fprintf(stderr, "fmem_slab: frame %llu: frame %llu's chunk %d overwritten\n",
                    (unsigned long long)frame_no, (unsigned long long)frame_no - 1, i);
            task_err = -1;
            break;
        }
    for (int i = 0; i < got_n[cur]; i++)
        if (!filled_with(got[cur][i], me)) {
            fprintf(stderr, "fmem_slab: frame %llu: its own chunk %d overwritten\n",
                    (unsigned long long)frame_no, i);
            task_err = -1;
            break;
        }
}

static const uint32_t slab_succ[1] = {0};
static const dagrt_node slab_node = {.name = "slab", .kind = DAGRT_NODE_TASK, .run = slab_run};
static const dagrt_graph slab_g = {.version = DAGRT_GRAPH_VERSION, .nnodes = 1, .name = "slab",
                                   .nodes = &slab_node, .succ = slab_succ};

static uint64_t stat_sum(dagrt *rt, size_t field)
{
    dagrt_thread_stats st[8];
    int n = dagrt_get_stats(rt, st, 8);
    uint64_t s = 0;
    for (int i = 0; i < n && i < 8; i++)
        s += *(const uint64_t *)(const void *)((const char *)&st[i] + field);
    return s;
}

#define CHUNKS_NEW(rt) stat_sum((rt), offsetof(dagrt_thread_stats, frame_chunks_new))
#define REFUSED(rt) stat_sum((rt), offsetof(dagrt_thread_stats, frame_refused))

static int run_frame(dagrt *rt, dagrt_graph_state *st, int n)
{
    take = n;
    int rc = dagrt_graph_run(rt, &slab_g, st, NULL);
    frame_no++;
    return rc;
}

/* Frames of 33 chunks each: slabs made 32 chunks at a time, the first
 * slab's chunks taken in address order, no new chunk once warm, and no
 * chunk of a live frame handed to another. */
static void slabs_made(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 0;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    frame_no = 0;
    EXPECT(run_frame(rt, &st, 33) == 0 && task_err == 0 && got_n[0] == 33, "frame 0: %d, %d",
           task_err, got_n[0]);
    /* 33 chunks: two slabs made, each counted whole. */
    EXPECT(CHUNKS_NEW(rt) == 64, "after frame 0: %llu chunks made, want 64 (two slabs)",
           (unsigned long long)CHUNKS_NEW(rt));
    /* The first 32 in one slab, in address order: chunk i at i x 64 KiB. */
    uintptr_t base = (uintptr_t)got[0][0] - HEAD;
    EXPECT(base % SLAB == 0, "the first chunk %p is not at a 2 MiB boundary", (void *)base);
    for (int i = 1; i < 32 && got_n[0] == 33; i++)
        EXPECT((uintptr_t)got[0][i] == base + (uintptr_t)i * CHUNK + HEAD,
               "chunk %d at %p, want %p", i, (void *)got[0][i],
               (void *)(base + (uintptr_t)i * CHUNK + HEAD));
#ifdef SLAB_ASAN
    /* The second slab's 31 chunks not taken yet: poisoned. */
    uintptr_t next = (uintptr_t)got[0][32] - HEAD + CHUNK;
    EXPECT(__asan_address_is_poisoned((void *)(next + HEAD)), "a free slab chunk unpoisoned");
#endif
    /* Frame 1 (the state's other arena): 31 free + 2 from a third slab. */
    EXPECT(run_frame(rt, &st, 33) == 0 && task_err == 0, "frame 1: %d", task_err);
    EXPECT(CHUNKS_NEW(rt) == 96, "after frame 1: %llu chunks made, want 96",
           (unsigned long long)CHUNKS_NEW(rt));
    /* From now on frame k takes frame k - 2's chunks: none new. */
    for (int f = 2; f < 12; f++)
        EXPECT(run_frame(rt, &st, 33) == 0 && task_err == 0, "frame %d: %d", f, task_err);
    EXPECT(CHUNKS_NEW(rt) == 96, "warm: %llu chunks made, want 96",
           (unsigned long long)CHUNKS_NEW(rt));
    EXPECT(REFUSED(rt) == 0, "refusals: %llu", (unsigned long long)REFUSED(rt));
    dagrt_destroy(rt);
}

/* The reserve: 1 byte is a slab (32 chunks), so 32 chunks need nothing
 * new and the 33rd makes a slab. */
static void reserve_rounds_up(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 0;
    cfg.frame_reserve = 1;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create with a 1-byte reserve");
    if (!rt)
        return;
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    frame_no = 0;
    EXPECT(run_frame(rt, &st, 32) == 0 && task_err == 0, "reserve frame 0: %d", task_err);
    EXPECT(CHUNKS_NEW(rt) == 0, "32 chunks on a 1-byte reserve: %llu made, want 0",
           (unsigned long long)CHUNKS_NEW(rt));
    EXPECT(run_frame(rt, &st, 1) == 0 && task_err == 0, "reserve frame 1: %d", task_err);
    EXPECT(CHUNKS_NEW(rt) == 32, "the 33rd chunk: %llu made, want 32",
           (unsigned long long)CHUNKS_NEW(rt));
    dagrt_destroy(rt);
}

/* The system refuses (the os layer's seam): NULL, DAGRT_ENOMEM, counted;
 * then frames allocate again. */
static void system_refuses(void)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 0;
    dagrt *rt = dagrt_create(&cfg);
    EXPECT(rt != NULL, "dagrt_create");
    if (!rt)
        return;
    static dagrt_node_state ns[1];
    static dagrt_graph_state st = DAGRT_GRAPH_STATE_INIT(ns);
    frame_no = 0;
    /* A frame with no allocation first: the runtime's own memory made. */
    EXPECT(run_frame(rt, &st, 0) == 0 && task_err == 0, "frame 0: %d", task_err);
    rt_os_alloc_refuse(true);
    int rc = run_frame(rt, &st, 1);
    rt_os_alloc_refuse(false);
    EXPECT(rc == 0 && got_n[1] == 0 && task_err == DAGRT_ENOMEM,
           "refused: run %d, %d allocations, error %d", rc, got_n[1], task_err);
    EXPECT(REFUSED(rt) == 1, "%llu refusals counted, want 1", (unsigned long long)REFUSED(rt));
    EXPECT(run_frame(rt, &st, 3) == 0 && task_err == 0 && got_n[0] == 3,
           "after the refusal: %d, %d allocations", task_err, got_n[0]);
    EXPECT(CHUNKS_NEW(rt) == 32, "after the refusal: %llu chunks made, want 32",
           (unsigned long long)CHUNKS_NEW(rt));
    dagrt_destroy(rt);
}

int fmem_slab_case(void)
{
    bad = 0;
    slabs_made();
    reserve_rounds_up();
    system_refuses();
    return bad;
}
