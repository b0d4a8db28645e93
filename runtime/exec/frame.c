/*
 * exec/frame.c - frame memory (dagrt_frame_alloc, and frame arenas: a
 * task's handle bumping a slice of its own, inline; "frame arenas" below)
 * and the frame a task belongs to (dagrt_get_frame).
 *
 * The frame of the calling thread is rt_ctx.frame: the graph run whose
 * node body (or parallel-for piece) runs there now, set around each body
 * by rt_exec_dispatch, cleared around every other task (core/work.c),
 * carried by a fiber as it moves (fiber/sched.c) and by a parallel-for's
 * takers (pfor/share.c).
 *
 * A graph state holds two arenas, which its runs use in turn (run k takes
 * arena k % 2). An arena is a list of chunks. Each thread that allocates
 * in a frame bumps a chunk of its own, through its window (dagrt__fwin, a
 * thread-local [cur, end)): while the window is open, the chunk's bump
 * pointer is the window's cur, and the chunk's own cur (rt_ctx.fhome
 * points at it) is stale until the window closes and writes it back. Every
 * change of rt_ctx.frame closes it (rt_ctx_set_frame), and so does every
 * change of rt_tls_ctx away from the ctx, so an open window is always the
 * current ctx's current frame's and the common path checks nothing but
 * room: dagrt.h inlines it (the thread pointer, two loads, one store; no
 * lock, no atomic, no call). The slow path (dagrt__frame_alloc_slow)
 * closes the window, finds the thread's chunk again in the ctx's small
 * cache (rt_ctx.fcache, keyed by the arena's address and the frame's
 * number gen, which is unique on the runtime) or takes a new one, and
 * opens the window on it. Taking a chunk (from the
 * runtime's free list, or the system the first times) links it to the
 * arena under the runtime's frame lock; so does retiring an arena, which
 * gives all its chunks back at once (poisoned under AddressSanitizer).
 *
 * Lifetimes. A frame's arena retires once the frame after it has ended
 * too, so that frame may still read it: for G_run and instances at the
 * end of the state's next run (rt_frame_end), for a pipeline's frame N at
 * the wait of frame N+1 (exec/pipe.c: frames are waited for oldest first;
 * N's arena is not N+1's, which runs on another state or, at depth 1, on
 * the other arena of the same one). rt_frame_end's rule covers a
 * pipeline's too, D frames later, should the eager one not have run.
 * A state's run also retires its own arena first if it still holds a
 * frame's (a state used by G_run and pipelines in turn).
 *
 * The inline path (dagrt.h, x86-64 Linux with GCC or Clang) finds the
 * window afresh at every call: the thread pointer read by a volatile asm,
 * which the compiler neither merges with another nor moves across a call
 * (a fiber task may resume on another thread after any call into the
 * runtime, and compilers may keep a thread-local's address across calls
 * otherwise), plus the window's offset from it (the initial-exec TLS
 * sequence; the linker relaxes it in an executable). Its check is
 * size - 1 < end - p: 1 <= size <= the room (size 0 and an empty window,
 * NULL and NULL, go the slow way), align - 1 < 4096 and a power of two (0
 * and bad ones go the slow way too); p never passes end, because every
 * window's end is aligned to 4096 (chunks are: below). Everything else
 * is dagrt__frame_alloc_slow's.
 *
 * Ordering. A chunk's bump pointer (cur) is written only by the thread
 * that took it, during the frame (the window's close, which every node
 * body's end makes, writes it back); the retirer reads it once the frame
 * has ended, which the executor's own waits order after every node body. gen
 * and the arena's fields are written by the caller at the frame's start,
 * before the frame's nodes are published (the same release/acquire that
 * publishes the reset).
 */
#include "exec.h"

#if defined(__SANITIZE_ADDRESS__)
#define FRAME_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FRAME_ASAN 1
#endif
#endif
#ifdef FRAME_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

/* A chunk: this header, then its bytes. 64 KiB in all, or more for an
 * allocation that would not fit one (a "big" chunk, kept on a list of its
 * own and reused by size: a multiple of 64 KiB). 64 KiB chunks are cut
 * from slabs of 2 MiB, each one block from the system aligned to 2 MiB
 * and hinted for a large page (rt_os_hint_large_pages): frame memory
 * cycles through the chunks of every frame alive, which with 4 KiB pages
 * took a TLB entry, and after any flush (a process that unmaps memory
 * between frames: bench_frame_alloc.c's malloc mode) a page walk, every
 * 4 KiB written: 4 KiB allocations beside that mode took 23-25 ns a
 * piece instead of 27-29 (docs/benchmarks-log.md, h-falloc3). A slab's
 * chunks never go back to the system before the runtime's destroy, so
 * its large page stays whole. Chunks are aligned to
 * FRAME_MAX_ALIGN, so a chunk's end, and the end of every window opened
 * on it, is a multiple of every alignment allowed: rounding a cursor
 * that is not past the end up to one never passes the end, which spares
 * dagrt.h's inline path that check. */
#define FRAME_CHUNK ((size_t)64 * 1024)
#define FRAME_HEAD ((size_t)64)
#define FRAME_MAX_ALIGN ((size_t)4096)
#define FRAME_MAX_SIZE ((size_t)1 << 30)
#define FRAME_SLAB ((size_t)2 * 1024 * 1024)

typedef struct fchunk {
    struct fchunk *next;   /* the arena's list, or a free list (frame lock) */
    struct fchunk *all;    /* every chunk of the runtime (frame lock) */
    char *cur;             /* next free byte: the taker's, read by the retirer */
    char *end;
    size_t size;           /* the whole chunk, header included */
    size_t block;          /* the system block this chunk heads (a slab or a
                              big chunk: on rt->frame_all), 0 for the rest
                              of a slab's chunks */
} fchunk;

_Static_assert(sizeof(fchunk) <= FRAME_HEAD, "frame chunk header");
_Static_assert(FRAME_CHUNK % FRAME_MAX_ALIGN == 0, "a chunk's end is aligned to every align");
_Static_assert(FRAME_SLAB % FRAME_CHUNK == 0, "a slab is whole chunks");

static char *bytes_of(fchunk *k) { return (char *)k + FRAME_HEAD; }

static _Thread_local int frame_err;
/* The calling thread's window (core/core.h). */
_Thread_local dagrt__frame_window dagrt__fwin;
static _Atomic uint64_t runtimes;   /* runtimes made: each one's frame_id */

/* The system block m of `size` bytes made a chunk of `chunk` bytes that
 * heads it (linked on rt->frame_all, which the destroy frees), its bytes
 * poisoned. Frame lock held, or the runtime not yet shared. */
static fchunk *block_head(dagrt *rt, void *m, size_t size, size_t chunk)
{
    fchunk *k = m;
    k->size = chunk;
    k->block = size;
    k->all = rt->frame_all;
    rt->frame_all = k;
    POISON(bytes_of(k), chunk - FRAME_HEAD);
    return k;
}

/* A block of `size` bytes from the system, aligned to `align`, made a
 * chunk of `chunk` bytes that heads it (block_head); NULL when the system
 * has no memory. */
static fchunk *block_new(dagrt *rt, size_t align, size_t size, size_t chunk)
{
    void *m = rt_os_alloc_aligned(align, size);
    return m ? block_head(rt, m, size, chunk) : NULL;
}

/* A slab's first chunk, the others put on the free list in address
 * order (the next takers bump upwards through the slab); NULL when the
 * system has no memory. The large-page hint comes before any byte of the
 * slab is touched, so that its first touch can fault in a large page. */
static fchunk *slab_new(dagrt *rt)
{
    char *m = rt_os_alloc_aligned(FRAME_SLAB, FRAME_SLAB);
    if (!m)
        return NULL;
    rt_os_hint_large_pages(m, FRAME_SLAB);
    for (size_t off = FRAME_SLAB - FRAME_CHUNK; off > 0; off -= FRAME_CHUNK) {
        fchunk *k = (fchunk *)(m + off);
        k->size = FRAME_CHUNK;
        k->block = 0;
        k->all = NULL;
        k->next = rt->frame_free;
        rt->frame_free = k;
        POISON(bytes_of(k), FRAME_CHUNK - FRAME_HEAD);
    }
    return block_head(rt, m, FRAME_SLAB, FRAME_CHUNK);
}

int rt_frame_pool_init(dagrt *rt)
{
    rt_os_mutex_init(&rt->frame_mu);
    rt->frame_free = rt->frame_big = rt->frame_all = NULL;
    rt->frame_gen = 0;
    /* relaxed: only a unique number is wanted, no order. */
    rt->frame_id = atomic_fetch_add_explicit(&runtimes, 1, memory_order_relaxed) + 1;
    size_t want = rt->cfg.frame_reserve;
    for (size_t made = 0; made < want; made += FRAME_SLAB) {
        fchunk *k = slab_new(rt);
        if (!k)
            return DAGRT_ENOMEM;   /* the caller's fini frees what was made */
        k->next = rt->frame_free;
        rt->frame_free = k;
    }
    return 0;
}

void rt_frame_pool_fini(dagrt *rt)
{
    fchunk *k = rt->frame_all;   /* the blocks: slabs and big chunks */
    while (k) {
        fchunk *n = k->all;
        UNPOISON(k, k->block);
        rt_os_free_aligned(k);
        k = n;
    }
    rt->frame_all = rt->frame_free = rt->frame_big = NULL;
    rt_os_mutex_fini(&rt->frame_mu);
}

/* Gives arena a's chunks back to rt's free lists (frame lock held by the
 * caller); returns the bytes the frame allocated. */
static uint64_t give_back(dagrt *rt, rt_farena *a)
{
    uint64_t used = 0;
    fchunk *k = a->chunks;
    while (k) {
        fchunk *n = k->next;
        used += (uint64_t)(k->cur - bytes_of(k));
        POISON(bytes_of(k), k->size - FRAME_HEAD);
        if (k->size == FRAME_CHUNK) {
            k->next = rt->frame_free;
            rt->frame_free = k;
        } else {
            k->next = rt->frame_big;
            rt->frame_big = k;
        }
        k = n;
    }
    return used;
}

/* Retires arena a on rt (the caller's thread: the one that ended the
 * frame, or starts its state's next one). Chunks of another runtime (the
 * state ran on one before) are left to that runtime, which frees them at
 * its destroy. */
static void retire(dagrt *rt, rt_farena *a)
{
    if (a->chunks && a->rt_id == rt->frame_id) {
        rt_os_mutex_lock(&rt->frame_mu);
        uint64_t used = give_back(rt, a);
        rt_os_mutex_unlock(&rt->frame_mu);
        rt_ctx *c = rt_ctx_here(rt);
        if (c) {
            rt_tstat_add(&c->stats.frames_retired, 1);
            /* relaxed load + store: this thread alone writes its line. */
            if (used > atomic_load_explicit(&c->stats.frame_bytes_max, memory_order_relaxed))
                atomic_store_explicit(&c->stats.frame_bytes_max, used, memory_order_relaxed);
        }
    }
    a->chunks = NULL;
    a->held = 0;
}

void rt_frame_begin(graph_rt *r, dagrt *rt, const rt_frame_id *fid)
{
    r->fseq = fid ? fid->seq : r->runs;
    r->fslots = fid ? fid->slots : 2;
    rt_farena *a = &r->arena[r->runs & 1];
    if (a->chunks)
        retire(rt, a);
    a->gen = ++rt->frame_gen;   /* main thread only: every frame starts there */
    a->rt_id = rt->frame_id;
    r->fa = a;
}

void rt_frame_retire(dagrt *rt, rt_farena *a, uint64_t gen)
{
    if (a && a->gen == gen && a->chunks)
        retire(rt, a);
}

void rt_frame_end(graph_rt *r)
{
    rt_farena *o = &r->arena[(r->runs & 1) ^ 1];
    if (o->chunks)
        retire(r->rt, o);
}

void *rt_frame_enter_fiber(graph_rt *r)
{
    rt_ctx *c = rt_ctx_current(r->rt);
    if (!c)
        return NULL;
    void *prev = c->frame;
    rt_ctx_set_frame(c, r);
    return prev;
}

void rt_frame_leave_fiber(dagrt *rt, void *prev)
{
    rt_ctx *c = rt_ctx_current(rt);
    if (c)
        rt_ctx_set_frame(c, prev);
}

static void *fail(int err)
{
    frame_err = err;
    return NULL;
}

static size_t cache_slot(const void *a)
{
    /* Arenas are 32 bytes apart within a state and states far apart. */
    return (size_t)(((uintptr_t)a >> 5) * 0x9E3779B1u >> 7) % RT_FCACHE;
}

/* A free chunk of at least `need` bytes in all (frame lock held), or a
 * new one (a 64 KiB chunk from a new slab, or from a block of its own
 * when the system has no 2 MiB to give); NULL when the system has no
 * memory. */
static fchunk *take_chunk(dagrt *rt, rt_ctx *c, size_t need)
{
    fchunk *k = NULL;
    if (need == FRAME_CHUNK) {
        k = rt->frame_free;
        if (k)
            rt->frame_free = k->next;
    } else {
        for (fchunk **at = (fchunk **)&rt->frame_big; *at; at = &(*at)->next)
            if ((*at)->size >= need) {
                k = *at;
                *at = k->next;
                break;
            }
    }
    if (!k && need == FRAME_CHUNK) {
        k = slab_new(rt);
        if (k)
            rt_tstat_add(&c->stats.frame_chunks_new, FRAME_SLAB / FRAME_CHUNK);
    }
    if (!k) {
        k = block_new(rt, FRAME_MAX_ALIGN, need, need);
        if (!k)
            return NULL;
        rt_tstat_add(&c->stats.frame_chunks_new, 1);
    }
    UNPOISON(bytes_of(k), k->size - FRAME_HEAD);
    k->cur = bytes_of(k);
    k->end = (char *)k + k->size;
    rt_tstat_add(&c->stats.frame_chunks, 1);
    return k;
}

static char *bump(fchunk *k, size_t size, size_t align)
{
    uintptr_t p = ((uintptr_t)k->cur + align - 1) & ~(uintptr_t)(align - 1);
    if (p > (uintptr_t)k->end || size > (uintptr_t)k->end - p)
        return NULL;
    k->cur = (char *)p + size;
    return (char *)p;
}

/* A chunk of `need` bytes for frame arena a (rt's frame lock taken
 * here), linked to it and counted against the budget; NULL (counted,
 * error set) when the budget is spent or the system has no memory. */
static fchunk *arena_take(dagrt *rt, rt_ctx *c, rt_farena *a, size_t need)
{
    rt_os_mutex_lock(&rt->frame_mu);
    fchunk *k = NULL;
    size_t budget = rt->cfg.frame_budget;
    if (!budget || (a->held <= budget && need <= budget - a->held))
        k = take_chunk(rt, c, need);
    if (k) {
        k->next = a->chunks;
        a->chunks = k;
        a->held += need;
    }
    rt_os_mutex_unlock(&rt->frame_mu);
    if (!k) {
        rt_tstat_add(&c->stats.frame_refused, 1);
        frame_err = DAGRT_ENOMEM;
    }
    return k;
}

/* The checks every allocation's slow path makes: align (0 means 16) and
 * size; 0 with *align set, or the error. */
static int check_args(size_t size, size_t *align)
{
    if (*align == 0)
        *align = 16;
    if ((*align & (*align - 1)) != 0 || *align > FRAME_MAX_ALIGN || size > FRAME_MAX_SIZE)
        return DAGRT_EINVAL;
    return 0;
}

static bool is_big(size_t size, size_t align) { return size + align > FRAME_CHUNK - FRAME_HEAD; }

static size_t big_need(size_t size, size_t align)
{
    return (size + align + FRAME_HEAD + FRAME_CHUNK - 1) & ~(FRAME_CHUNK - 1);
}

/* Opens the calling thread's window on chunk k (c, the thread's ctx,
 * has none open): from now on k's bump pointer is the window's. Its end
 * is k's, aligned to FRAME_MAX_ALIGN (above); k->cur <= k->end. */
static void window_open(rt_ctx *c, fchunk *k)
{
    dagrt__fwin.cur = k->cur;
    dagrt__fwin.end = k->end;
    c->fhome = &k->cur;
}

/* The calling thread's chunk for frame r (c's cache entry for its
 * arena), or NULL when it has none. c's window is closed (k->cur is
 * current). */
static fchunk *thread_chunk(rt_ctx *c, graph_rt *r)
{
    rt_farena *a = r->fa;
    rt_fcache *e = &c->fcache[cache_slot(a)];
    if (e->arena != a || e->gen != a->gen)
        return NULL;
    return e->chunk;
}

/* A new chunk for the calling thread in frame r, made its chunk for it
 * (the cache entry); NULL when refused. */
static fchunk *thread_new_chunk(rt_ctx *c, graph_rt *r)
{
    rt_farena *a = r->fa;
    fchunk *k = arena_take(r->rt, c, a, FRAME_CHUNK);
    if (k) {
        rt_fcache *e = &c->fcache[cache_slot(a)];
        e->arena = a;
        e->gen = a->gen;
        e->chunk = k;
    }
    return k;
}

/* An allocation in frame r from the calling thread's chunk, a new one,
 * or a big chunk of its own (checked arguments); the window is left open
 * on the thread's chunk. */
static void *alloc_in(rt_ctx *c, graph_rt *r, size_t size, size_t align)
{
    rt_ctx_window_close(c);
    fchunk *k = thread_chunk(c, r);
    char *p = k ? bump(k, size, align) : NULL;
    if (!p && is_big(size, align)) {
        fchunk *b = arena_take(r->rt, c, r->fa, big_need(size, align));
        p = b ? bump(b, size, align) : NULL;
    } else if (!p) {
        k = thread_new_chunk(c, r);
        p = k ? bump(k, size, align) : NULL;
    }
    if (k)
        window_open(c, k);
    return p;
}

/* Everything but the common path: the calling thread's window for its
 * frame when it is empty (the frame changed since), a new chunk, a chunk
 * of its own for a big allocation, and every error. Out of line, so
 * that the common path stays a few instructions. */
void *dagrt__frame_alloc_slow(size_t size, size_t align)
{
    rt_ctx *c = rt_tls_ctx;
    graph_rt *r = c ? c->frame : NULL;
    if (!r)
        return fail(DAGRT_EPERM);
    int err = check_args(size, &align);
    if (err)
        return fail(err);
    return alloc_in(c, r, size, align);
}

/* ------------------------------------------------------- frame arenas */
/* A handle (dagrt_frame_arena) bumps a slice of it own, [cur_, end_),
 * carved from the top of the chunk of the thread it refills on, which
 * moves that chunk's bump pointer past it: from then on the slice is the
 * handle's alone (the task's, not a thread's), so a fiber task that moves
 * between threads keeps bumping it and no thread bumps it meanwhile; the
 * inline path reads the handle alone. Slices start at 4 KiB and double up
 * to 32 KiB per refill, so that a task that allocates little wastes
 * little and one that allocates much refills seldom; a slice whose end is
 * still its chunk's top grows in place. An allocation over 32 KiB is
 * dagrt_frame_alloc's. A close gives the rest of the slice back when it
 * is still the top of the closing thread's chunk (the usual case: a task
 * that did not move or yield); otherwise the rest is unused until the
 * frame retires. Chunks are taken as dagrt_frame_alloc takes them, so a
 * frame needs no more chunks than before. */
#define SLICE_MIN ((size_t)4096)
#define SLICE_MAX ((size_t)32768)

static void arena_clear(dagrt_frame_arena *h)
{
    h->cur_ = h->end_ = NULL;
    h->frame_ = NULL;
    h->gen_ = 0;
    h->slice_ = SLICE_MIN;
}

int dagrt_frame_arena_open(dagrt_frame_arena *h)
{
    if (!h)
        return DAGRT_EINVAL;
    arena_clear(h);
    rt_ctx *c = rt_tls_ctx;
    graph_rt *r = c ? c->frame : NULL;
    if (!r)
        return DAGRT_EPERM;
    h->frame_ = r->fa;
    h->gen_ = r->fa->gen;
    return 0;
}

/* The calling thread's frame when it is h's (h open, the caller a task
 * of h's frame), else NULL. */
static graph_rt *arena_frame(rt_ctx *c, const dagrt_frame_arena *h)
{
    graph_rt *r = c ? c->frame : NULL;
    if (!r || !h->frame_ || r->fa != h->frame_ || r->fa->gen != h->gen_)
        return NULL;
    return r;
}

static char *slice_bump(dagrt_frame_arena *h, size_t size, size_t align)
{
    uintptr_t p = ((uintptr_t)h->cur_ + align - 1) & ~(uintptr_t)(align - 1);
    if (!h->cur_ || p > (uintptr_t)h->end_ || size > (uintptr_t)h->end_ - p)
        return NULL;
    h->cur_ = (char *)p + size;
    return (char *)p;
}

void *dagrt__frame_arena_refill(dagrt_frame_arena *h, size_t size, size_t align)
{
    rt_ctx *c = rt_tls_ctx;
    graph_rt *r = arena_frame(c, h);
    if (!r)
        return fail(DAGRT_EPERM);
    int err = check_args(size, &align);
    if (err)
        return fail(err);
    char *p = slice_bump(h, size, align);   /* size 0, or an align sent here */
    if (p)
        return p;
    size_t want = size + align;
    if (want > SLICE_MAX)
        return alloc_in(c, r, size, align);
    size_t len = h->slice_ > want ? h->slice_ : want;
    rt_ctx_window_close(c);   /* the chunk's cur current, for the carve */
    fchunk *k = thread_chunk(c, r);
    if (k && (size_t)(k->end - k->cur) < len) {
        if ((size_t)(k->end - k->cur) >= want)
            len = (size_t)(k->end - k->cur);   /* the chunk's rest: enough for this one */
        else
            k = NULL;
    }
    if (!k && !(k = thread_new_chunk(c, r)))
        return NULL;
    if (h->cur_ && h->end_ == k->cur) {
        h->end_ += len;   /* still the chunk's top: grow in place */
    } else {
        h->cur_ = k->cur;
        h->end_ = k->cur + len;
    }
    k->cur += len;
    window_open(c, k);   /* the chunk's rest, for dagrt_frame_alloc */
    if (h->slice_ < SLICE_MAX)
        h->slice_ *= 2;
    return slice_bump(h, size, align);
}

void dagrt_frame_arena_close(dagrt_frame_arena *h)
{
    if (!h)
        return;
    if (h->cur_) {
        rt_ctx *c = rt_tls_ctx;
        graph_rt *r = arena_frame(c, h);
        if (r)
            rt_ctx_window_close(c);   /* the chunk's cur current */
        fchunk *k = r ? thread_chunk(c, r) : NULL;
        if (k && k->cur == h->end_)
            k->cur = h->cur_;   /* the slice is the chunk's top: its rest back */
    }
    arena_clear(h);
}

/* The call form (dagrt.h inlines the same where it can): the calling
 * thread's window (emptied whenever c->frame or rt_tls_ctx changes), a
 * good align (0 and bad ones go the slow way), room in it. A real call,
 * so a fiber task that moved to another thread reads its new thread's
 * window. */
void *dagrt_frame_alloc(size_t size, size_t align)
{
    dagrt__frame_window *w = &dagrt__fwin;
    uintptr_t p = ((uintptr_t)w->cur + align - 1) & ~(uintptr_t)(align - 1);
    uintptr_t end = (uintptr_t)w->end;
    /* p <= end: the window's end is aligned to FRAME_MAX_ALIGN (top of file). */
    if (RT_LIKELY(align - 1 < FRAME_MAX_ALIGN && (align & (align - 1)) == 0 &&
                  size - 1 < end - p)) {
        w->cur = (char *)p + size;
        return (void *)p;
    }
    return dagrt__frame_alloc_slow(size, align);
}

int dagrt_frame_last_error(void) { return frame_err; }

int dagrt_get_frame(dagrt_frame_info *out)
{
    if (!out)
        return DAGRT_EINVAL;
    rt_ctx *c = rt_tls_ctx;
    const graph_rt *r = c ? c->frame : NULL;
    if (!r)
        return DAGRT_EPERM;
    out->number = r->fseq;
    out->slots = r->fslots;
    out->slot = (uint32_t)(r->fseq % r->fslots);
    out->state = r;
    out->graph = r->g;
    out->rt = r->rt;
    return 0;
}
