/*
 * bench_frame_alloc.c - frame memory against malloc (+ free) and against
 * a bare per-thread bump pointer with no frames, side by side in one run:
 * each frame's tasks (1 or 2 at once: the main thread and a worker) make
 * N allocations of one size and write a byte of each; the frame's time
 * per allocation. Frame memory three ways: a frame arena (a handle the
 * task opens, dagrt_frame_arena_alloc inlined), dagrt_frame_alloc (inline
 * on x86-64 Linux, dagrt.h) and dagrt_frame_alloc's call form (the
 * library's function, as other platforms get it; bench_frame_alloc_call.c).
 * The bare bump pointer is inlined into the loop; "bump (call)" is the
 * same behind a call, as a library's allocator is. Target (issue 39):
 * dagrt_frame_alloc and the frame arena within 1.5x the inlined bump
 * pointer and below malloc.
 *
 * "bump x2" is the inlined bump pointer over two buffers a thread uses in
 * turn, frame after frame: memory that lives as long as frame memory does
 * (a frame's until the next one has ended), with no allocator around it.
 * It is not the target's baseline; frame_alloc/bump x2 says how much of
 * the gap to "bump" is the lifetime rather than the allocator: with one
 * buffer, the best of R frames is one whose buffer is still in the core's
 * L2 (bump and bump (call) share it), which no memory that must outlive
 * the next frame can be once a frame writes more than half the L2
 * (256 B x 4096 = 1 MiB a task; docs/benchmarks-log.md, h-falloc3).
 *
 * malloc+free's frames disturb the others' from 256 B: glibc gives the
 * freed heap back to the system at each frame's end and faults it in
 * again at the next (0.4-49 us a malloc), so memory not written since
 * the last malloc frame is cold in the caches and the TLB, as frame
 * memory's always is. Without that mode (MODES) the others compare
 * alone. So on glibc the run keeps what is freed in the heap (mallopt
 * M_TRIM_THRESHOLD: no trim between frames, as an engine would tune its
 * malloc): malloc+free then costs 32-43 ns at every size instead of up to
 * 49 us, a stronger baseline, and its frames no longer fault the heap in
 * again in the middle of the others' (BENCH_MALLOC_TRIM=1 keeps glibc's
 * default trim, to see that effect).
 *
 * Each task times its own body, so the executor's work around it (a
 * worker's wake-up, its run policy) is left out: with 2 threads the
 * slower task's time counts. Sizes of 256 B and more are bound by memory
 * traffic (a byte written per allocation, 1-16 MiB a task per frame):
 * the bare bump pointer reuses one buffer frame after frame, while frame
 * memory cycles through the chunks of the frames alive (each lives until
 * the next frame has ended), so those rows compare memory more than the
 * allocators.
 *
 * Noise: the modes run interleaved frame by frame (a slow moment hits all
 * alike), each mode's best of R frames makes a round, and K rounds each
 * give a ratio; the median ratio is printed with the rounds' spread, and
 * the target is read on the median.
 *
 *   bench_frame_alloc [N per task, default 4096] [R, default 30] [K, default 5]
 *                     [MODES, default all: a comma-separated list of the
 *                      columns' names, e.g. frame_alloc,bump (the others
 *                      print "-"): to see what one mode's frames do to
 *                      another's]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_frame_alloc.h"
#include "dagrt.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

enum {
    MODE_ARENA,
    MODE_FRAME,
    MODE_FRAME_CALL,
    MODE_MALLOC,
    MODE_BUMP,
    MODE_BUMP_CALL,
    MODE_BUMP2,
    MODES
};
static const char *const mode_name[MODES] = {"arena", "frame_alloc", "fa(call)", "malloc+free",
                                             "bump", "bump(call)", "bump_x2"};
static bool mode_on[MODES];

static int mode;
static size_t size, n_per_task;
static void *ptrs[2][1 << 16];
static _Atomic int failed;

/* The bare bump pointer: a buffer per thread, reset each frame. The
 * inlined one bumps through a pointer to the thread's state taken once
 * per task (its fastest form: the loop's loads and stores are plain
 * ones; bumping the thread-local fields themselves, %fs-relative each
 * time, ran 1.1 or 2.7 ns at 16 B for whole rounds on this machine's
 * AMD EPYC, which made the ratios read either way). */
struct bumper {
    char *buf;
    size_t at, cap;
};
static _Thread_local struct bumper bumper;
/* "bump x2": two buffers used in turn, frame after frame. */
static _Thread_local struct bumper bumper2[2];
static _Thread_local unsigned bumper2_turn;

static inline void *bump(struct bumper *b, size_t sz, size_t align)
{
    size_t p = (b->at + align - 1) & ~(align - 1);
    if (p + sz > b->cap)
        return NULL;
    b->at = p + sz;
    return b->buf + p;
}

/* The same bump pointer behind a call the compiler may not inline, as a
 * library's allocator is (it finds the thread's state itself): what a
 * call costs, without frames. */
__attribute__((noinline)) static void *bump_call(size_t sz, size_t align)
{
    __asm__ volatile("");
    return bump(&bumper, sz, align);
}

static void body(int k)
{
    void **out = ptrs[k];
    switch (mode) {
    case MODE_ARENA: {
        dagrt_frame_arena h;
        if (dagrt_frame_arena_open(&h) != 0) {
            failed = 1;
            return;
        }
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = dagrt_frame_arena_alloc(&h, size, 16);
            if (!p) {
                failed = 1;
                break;
            }
            p[0] = (char)i;
        }
        dagrt_frame_arena_close(&h);
        break;
    }
    case MODE_FRAME:
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = dagrt_frame_alloc(size, 16);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
        }
        break;
    case MODE_FRAME_CALL:
        if (bench_frame_alloc_calls(n_per_task, size) != 0)
            failed = 1;
        break;
    case MODE_MALLOC:
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = malloc(size);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
            out[i] = p;
        }
        for (size_t i = 0; i < n_per_task; i++)
            free(out[i]);
        break;
    default: {
        void *(*fn)(size_t, size_t) = mode == MODE_BUMP_CALL ? bump_call : NULL;
        struct bumper *b = mode == MODE_BUMP2 ? &bumper2[bumper2_turn++ & 1] : &bumper;
        if (b->cap < n_per_task * (size + 16)) {
            /* Once per thread, for the largest size, every page touched
             * now: no frame of the bump modes pays a page fault (a
             * buffer made for each size, or given back by free, would
             * fault its pages in again). */
            free(b->buf);
            b->cap = n_per_task * (4096 + 16);
            b->buf = malloc(b->cap);
            if (!b->buf) {
                failed = 1;
                return;
            }
            memset(b->buf, 0, b->cap);
        }
        b->at = 0;
        for (size_t i = 0; i < n_per_task; i++) {
            char *p = fn ? fn(size, 16) : bump(b, size, 16);
            if (!p) {
                failed = 1;
                return;
            }
            p[0] = (char)i;
        }
        break;
    }
    }
}

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Each task's own time (its body: a frame arena's open and close
 * included), so that what the executor does around the bodies (waking
 * the worker, its run policy) is not in the figures. */
static double task_ns[2];

static void timed(int k)
{
    double t0 = now_ns();
    body(k);
    task_ns[k] = now_ns() - t0;
}

static void task0(void *ctx) { (void)ctx; timed(0); }
static void task1(void *ctx) { (void)ctx; timed(1); }

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (sorted in place). */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { MAX_ROUNDS = 64 };

int main(int argc, char **argv)
{
    n_per_task = argc > 1 ? (size_t)atol(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 30;
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    bool bad = n_per_task == 0 || n_per_task > (1u << 16) || reps <= 0 || rounds <= 0 ||
               rounds > MAX_ROUNDS;
    for (int m = 0; m < MODES; m++)
        mode_on[m] = argc <= 4;
    if (argc > 4) {
        for (const char *t = argv[4]; !bad;) {
            size_t len = strcspn(t, ",");
            int m = 0;
            while (m < MODES && (strlen(mode_name[m]) != len || strncmp(t, mode_name[m], len) != 0))
                m++;
            if (m == MODES)
                bad = true;
            else
                mode_on[m] = true;
            if (t[len] == '\0')
                break;
            t += len + 1;
        }
    }
    if (bad) {
        fprintf(stderr, "usage: bench_frame_alloc [N 1..65536] [R] [K 1..64] [MODES: a comma-separated "
                        "list of arena,frame_alloc,fa(call),malloc+free,bump,bump(call),bump_x2]\n");
        return 2;
    }
#if defined(__GLIBC__)
    /* No trim between malloc+free's frames (see the top). */
    const char *trim = getenv("BENCH_MALLOC_TRIM");
    if (!(trim && strcmp(trim, "1") == 0))
        (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return 1;
    static const uint32_t succ[1] = {0};
    static const dagrt_node nodes[2] = {
        {.name = "a0", .kind = DAGRT_NODE_TASK, .run = task0},
        {.name = "a1", .kind = DAGRT_NODE_TASK, .run = task1},
    };
    /* A graph state per mode: the executor's run policy learns each
     * state's frame costs, and one state shared by modes of very
     * different costs (malloc's frames are 20-1000x the others') would
     * run some modes' frames the way another mode's costs ask for
     * (shared with the worker, a wake-up each: about 11 us a frame). */
    static dagrt_node_state ns[MODES][2];
    static dagrt_graph_state st[MODES];
    for (int m = 0; m < MODES; m++)
        if (dagrt_graph_state_init(&st[m], ns[m], 2) != 0)
            return 1;
    static const size_t sizes[] = {16, 64, 256, 1024, 4096};
    printf("bench_frame_alloc: ns per allocation (each with a 1-byte write), best of %d frames "
           "of %zu allocations per task, median of %d rounds; ratios: median [min-max] of the "
           "rounds' ratios\n", reps, n_per_task, rounds);
    /* The ratios printed: the target's four (a/bump within 1.5x, a/malloc
     * below 1) and frame_alloc against the double-buffered bump pointer. */
    static const struct {
        int a, b;
        const char *name;
        double limit;   /* the target: ratio <= limit (malloc's: < 1), or 0 */
    } ratio[] = {
        {MODE_ARENA, MODE_BUMP, "arena/bump", 1.5},
        {MODE_ARENA, MODE_MALLOC, "arena/malloc", 1.0},
        {MODE_FRAME, MODE_BUMP, "frame_alloc/bump", 1.5},
        {MODE_FRAME, MODE_MALLOC, "frame_alloc/malloc", 1.0},
        {MODE_FRAME, MODE_BUMP2, "frame_alloc/bump_x2", 0},
    };
    enum { RATIOS = sizeof ratio / sizeof ratio[0] };
    printf("%-3s %5s", "thr", "size");
    for (int m = 0; m < MODES; m++)
        printf(" %7s", mode_name[m]);
    printf(" ");
    for (int q = 0; q < RATIOS; q++)
        printf(" %-19s", ratio[q].name);
    printf("\n");
    int worst = 0, judged = 0, targets = 0;   /* targets: the target's ratios measured (of 4) */
    for (int q = 0; q < RATIOS; q++)
        targets += ratio[q].limit > 0 && mode_on[ratio[q].a] && mode_on[ratio[q].b];
    uint64_t rng = 0x2545F4914F6CDD1Dull;   /* the orders' (fixed: runs comparable) */
    for (int threads = 1; threads <= 2; threads++) {
        dagrt_graph g = {.version = DAGRT_GRAPH_VERSION, .nnodes = (uint32_t)threads,
                         .name = "alloc", .nodes = nodes, .succ = succ};
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            size = sizes[s];
            double ns_per[MODES][MAX_ROUNDS];
            double rq[RATIOS][MAX_ROUNDS];
            for (int k = 0; k < rounds; k++) {
                double best[MODES];
                for (int m = 0; m < MODES; m++)
                    best[m] = 1e300;
                /* Modes interleaved frame by frame, so that a slow moment
                 * of the machine hits all of them alike, in an order
                 * shuffled each time, so that no mode always follows the
                 * same one (malloc's leaves caches cold; a frame-memory
                 * mode takes the chunks another frame just gave back). */
                for (int r = 0; r < reps + 3; r++) {
                    int order[MODES];
                    for (int j = 0; j < MODES; j++)
                        order[j] = j;
                    for (int j = MODES - 1; j > 0; j--) {
                        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
                        int o = (int)((rng >> 33) % (uint64_t)(j + 1)), t = order[j];
                        order[j] = order[o];
                        order[o] = t;
                    }
                    for (int j = 0; j < MODES; j++) {
                        int m = order[j];
                        if (!mode_on[m])
                            continue;
                        mode = m;
                        task_ns[0] = task_ns[1] = 0;
                        if (dagrt_graph_run(rt, &g, &st[m], NULL) != 0 || failed) {
                            fprintf(stderr, "bench_frame_alloc: a frame failed\n");
                            return 1;
                        }
                        /* The slower task's (they run at once). */
                        double t = task_ns[0] > task_ns[1] ? task_ns[0] : task_ns[1];
                        double per = t / (double)n_per_task;
                        if (r >= 3 && per < best[m])   /* the first frames warm up */
                            best[m] = per;
                    }
                }
                for (int m = 0; m < MODES; m++)
                    ns_per[m][k] = best[m];
                for (int q = 0; q < RATIOS; q++)
                    rq[q][k] = best[ratio[q].a] / best[ratio[q].b];
            }
            printf("%-3d %5zu", threads, size);
            for (int m = 0; m < MODES; m++) {
                if (mode_on[m])
                    printf(" %7.2f", median(ns_per[m], rounds));
                else
                    printf(" %7s", "-");
            }
            printf(" ");
            for (int q = 0; q < RATIOS; q++) {
                char cell[32] = "-";
                if (mode_on[ratio[q].a] && mode_on[ratio[q].b]) {
                    double v = median(rq[q], rounds);   /* sorts: [0] and [rounds-1] the spread */
                    snprintf(cell, sizeof cell, "%.2fx [%.2f-%.2f]", v, rq[q][0], rq[q][rounds - 1]);
                    if (ratio[q].limit > 0) {
                        judged = 1;
                        if (ratio[q].limit == 1.0 ? v >= 1.0 : v > ratio[q].limit)
                            worst = 1;
                    }
                }
                printf(" %-19s", cell);
            }
            printf("\n");
        }
    }
    printf("target (dagrt_frame_alloc and the frame arena within 1.5x the inlined bump "
           "pointer, below malloc; medians): %s%s\n",
           !judged ? "not measured (modes left out)" : worst ? "missed" : "met",
           judged && targets < 4 ? " (on the ratios measured: modes left out)" : "");
    dagrt_destroy(rt);
    return 0;
}
