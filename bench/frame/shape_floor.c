/*
 * shape_floor.c - the uneven frames (shapes.h) with no runtime at all: the
 * caller and threads - 1 pthreads, each running a fixed list of xnodes in
 * order and spinning on per-xnode flags, as bench_floor.c does for the
 * uniform frame. The lists come from a critical-path list scheduler on the
 * declared costs (highest upward rank first among the ready xnodes, each
 * placed on the thread where it would finish earliest; `on main` xnodes on
 * the caller's list), made once at setup: what a static plan with the costs
 * known reaches with nothing of a runtime in it.
 *
 * Each xnode's flag is the floor's frame number it last completed (release
 * after its body, acquire before a successor's), never reset: a successor
 * waits for "at or after" its frame. One frame at a time: the caller posts
 * frame g (go), runs its list and waits for the sink. The ring (depth 2):
 * the caller posts frame g + 1 before it runs its own list of frame g, once
 * frame g - 1 has ended, so the helpers run up to one frame ahead of it.
 * A helper spins between frames for LINGER_NS, then sleeps on a condition
 * variable, so that it takes no core from the rows measured after it.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "bench_body.h"   /* bench_now_ns, bench_spin_hint */
#include "shapes.h"

#define LINGER_NS 200000.0
#define MAX_THREADS 16
#define SLOTS 8

static int nthreads;
static int list[MAX_THREADS][SHAPE_MAX_X], len[MAX_THREADS];
static struct {
    _Alignas(128) _Atomic uint64_t v;
} done[SHAPE_MAX_X];
static _Alignas(128) _Atomic uint64_t go;   /* the last frame posted */
static _Alignas(128) _Atomic int sleepers;
static _Atomic int stop;
static uint64_t frame_no;
static struct shape_ctx *frame_ctx[SLOTS];  /* frame g's context: [g % SLOTS] */
static pthread_t helper[MAX_THREADS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void run_list(int k, uint64_t f)
{
    struct shape_ctx *c = frame_ctx[f % SLOTS];
    for (int j = 0; j < len[k]; j++) {
        int x = list[k][j];
        for (int q = 0; q < shape_xg.npred[x]; q++)
            /* acquire: pairs with the release below, the input's body first. */
            while (atomic_load_explicit(&done[shape_xg.pred[x][q]].v, memory_order_acquire) < f)
                bench_spin_hint();
        shape_xnode(c, x);
        /* release: this body before the flag a successor reads. */
        atomic_store_explicit(&done[x].v, f, memory_order_release);
    }
}

static void *helper_main(void *arg)
{
    int k = (int)(intptr_t)arg;
    uint64_t seen = 0;
    for (;;) {
        double since = bench_now_ns();
        unsigned spins = 0;
        uint64_t g;
        /* acquire: the caller's frame_ctx store before its go. */
        while ((g = atomic_load_explicit(&go, memory_order_acquire)) == seen) {
            if (atomic_load_explicit(&stop, memory_order_relaxed))
                return NULL;
            bench_spin_hint();
            if (++spins % 256 == 0 && bench_now_ns() - since > LINGER_NS) {
                pthread_mutex_lock(&mu);
                /* seq_cst increment then load, against the caller's seq_cst
                 * store of go then load of sleepers: one of the two sees the
                 * other's, so no frame is posted to a sleeper nobody wakes. */
                atomic_fetch_add(&sleepers, 1);
                while (atomic_load(&go) == seen && !atomic_load(&stop))
                    pthread_cond_wait(&cv, &mu);
                atomic_fetch_sub(&sleepers, 1);
                pthread_mutex_unlock(&mu);
                since = bench_now_ns();
            }
        }
        while (seen < g)
            run_list(k, ++seen);
    }
}

static void post(struct shape_ctx *c)
{
    uint64_t g = ++frame_no;
    frame_ctx[g % SLOTS] = c;
    atomic_store(&go, g);   /* seq_cst: see helper_main; also a release */
    if (atomic_load(&sleepers)) {
        pthread_mutex_lock(&mu);
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

static void wait_end(uint64_t g)
{
    int sink = shape_xg.n - 1;
    /* acquire: the sink's body, and so the frame's, before the caller goes on. */
    while (atomic_load_explicit(&done[sink].v, memory_order_acquire) < g)
        bench_spin_hint();
}

/* The lists: critical-path list scheduling on the declared costs. */
static void plan(int threads)
{
    int n = shape_xg.n;
    double rank[SHAPE_MAX_X], fin[SHAPE_MAX_X], avail[MAX_THREADS] = {0};
    int left[SHAPE_MAX_X];
    bool placed[SHAPE_MAX_X] = {false};
    for (int x = n - 1; x >= 0; x--) {
        double m = 0;
        for (int s = 0; s < shape_xg.nsucc[x]; s++)
            if (rank[shape_xg.succ[x][s]] > m)
                m = rank[shape_xg.succ[x][s]];
        rank[x] = shape_xg.cost[x] + m;
        left[x] = shape_xg.npred[x];
    }
    memset(len, 0, sizeof len);
    for (int step = 0; step < n; step++) {
        int best = -1;
        for (int x = 0; x < n; x++)
            if (!placed[x] && left[x] == 0 && (best < 0 || rank[x] > rank[best]))
                best = x;
        double ready = 0;
        for (int q = 0; q < shape_xg.npred[best]; q++)
            if (fin[shape_xg.pred[best][q]] > ready)
                ready = fin[shape_xg.pred[best][q]];
        int t = 0;
        double t_fin = (avail[0] > ready ? avail[0] : ready) + shape_xg.cost[best];
        for (int k = 1; k < threads && !shape_xg.on_main[best]; k++) {
            double f = (avail[k] > ready ? avail[k] : ready) + shape_xg.cost[best];
            if (f < t_fin)
                t = k, t_fin = f;
        }
        fin[best] = avail[t] = t_fin;
        list[t][len[t]++] = best;
        placed[best] = true;
        for (int s = 0; s < shape_xg.nsucc[best]; s++)
            left[shape_xg.succ[best][s]]--;
    }
}

void shape_floor_setup(struct shape_ctx *c, int threads)
{
    (void)c;
    nthreads = threads < 1 ? 1 : threads > MAX_THREADS ? MAX_THREADS : threads;
    plan(nthreads);
    frame_no = 0;
    atomic_store(&go, 0);
    atomic_store(&stop, 0);
    for (int x = 0; x < SHAPE_MAX_X; x++)
        atomic_store_explicit(&done[x].v, 0, memory_order_relaxed);
    for (int k = 1; k < nthreads; k++)
        if (pthread_create(&helper[k], NULL, helper_main, (void *)(intptr_t)k) != 0) {
            /* Fewer threads: their lists go to the caller, still in order. */
            for (int j = k; j < nthreads; j++)
                len[j] = 0;
            nthreads = k;
            plan(nthreads);
            break;
        }
}

void shape_floor_frames(struct shape_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        post(c);
        run_list(0, frame_no);
        wait_end(frame_no);
    }
}

void shape_floor_ring(struct shape_ctx *c, long n)
{
    if (n <= 0)
        return;
    uint64_t first = frame_no + 1, last = frame_no + (uint64_t)n;
    post(shape_pipe_next(c));
    for (uint64_t g = first; g <= last; g++) {
        if (g < last) {
            wait_end(g - 1);   /* two frames in flight at most: g and g + 1 */
            post(shape_pipe_next(c));
        }
        run_list(0, g);
    }
    wait_end(last);
}

void shape_floor_teardown(void)
{
    atomic_store(&stop, 1);
    pthread_mutex_lock(&mu);
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    for (int k = 1; k < nthreads; k++)
        pthread_join(helper[k], NULL);
    nthreads = 0;
}
