/*
 * pfor/pfor.h - the parallel-for's shared pieces (internal): its tuning
 * constants, clock, the job and its slots. pfor/pfor.c is the caller's side
 * (starting, presplitting, finishing a loop; the kicks), pfor/share.c the
 * shared side (claims, splits, invitations, offers, the takers' task).
 * pfor/pfor.c's top comment describes the whole design.
 */
#ifndef DAGRT_PFOR_H
#define DAGRT_PFOR_H

#include "../core/core.h"

#define PFOR_FIRST_ITEMS   64
#define PFOR_SHARE_MIN_NS  2000.0    /* a loop shorter than this runs inline */
/* A thief splits only a remainder this long: a split costs each side one
 * cache-line transfer, and the last splits are the ones that even out
 * threads that do not run at the same speed (docs/benchmarks-log.md). */
#define PFOR_SPLIT_MIN_NS  500.0
#define PFOR_CHUNK_NS      8000.0    /* owner's claim between two looks at its word */
#define PFOR_BITE_NS       16000.0   /* a busy-hooked taker's split at most (rt_pfor_busy_hook) */
#define PFOR_WAKE_NS       30000.0   /* remainder that pays for waking a sleeper */
#define PFOR_END_SPIN_NS   30000.0   /* caller's spin on the last takers */
#define PFOR_KICK_GAP_NS   200000.0  /* "back to back": previous loop ended this recently */
#define PFOR_KICK_EVERY_NS 1000000.0 /* at most one speculative wake per thread this often */
#define PFOR_SLOTS         16        /* participants per loop (caller included) */
#define PFOR_BACK_NS       2000.0    /* a taker that left this recently is on its way back */
#define PFOR_UNITS_MAX     ((size_t)1 << 31)   /* units per loop (32-bit slot offsets) */

/* ------------------------------------------------------------ clock */

#if defined(__x86_64__) || defined(__i386__)
#define PFOR_TSC 1
/* The cycle counter (the compiler's builtin: no system header). */
static inline uint64_t rt_pfor_rdtsc(void) { return __builtin_ia32_rdtsc(); }
extern double rt_pfor_ns_per_tick;   /* pfor/pfor.c calibrates it once */
void rt_pfor_ticks_init(void);
static inline uint64_t ticks(void) { return rt_pfor_rdtsc(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t * rt_pfor_ns_per_tick; }
#else
static inline uint64_t ticks(void) { return rt_now_ns(); }
static inline double ticks_to_ns(uint64_t t) { return (double)t; }
static inline void rt_pfor_ticks_init(void) {}
#endif

/* -------------------------------------------------------- the loop */

typedef struct pfor_slot {
    _Alignas(RT_APART) _Atomic uint64_t r;   /* e << 32 | b, offsets from base */
} pfor_slot;

typedef struct pfor_job {
    /* Written before the first invitation, read-only after: the submit
     * (release) and the steal (acquire) publish them to takers. */
    dagrt *rt;
    void *frame;       /* the caller's frame (rt_ctx.frame): its takers' too */
    dagrt_range_fn fn;
    void *arg;
    size_t base;
    size_t end;        /* the loop's end (the last unit may be short) */
    size_t unit;       /* items per unit: slots count units (see dagrt_parallel_for) */
    uint32_t grain;    /* smallest piece a thief takes (and leaves), in units */
    uint32_t chunk;    /* items per owner claim (see claim_size) */
    double ns_per;     /* estimate, ns per item */
    rt_group *g;
    int maxslots;      /* slots in use at most: min(threads, PFOR_SLOTS) */
    /* Written by takers as they arrive; RT_APART bytes away so that the
     * caller's reads of the fields above stay hits. */
    _Alignas(RT_APART) _Atomic int nslots;   /* slots handed out; slot 0 is the caller's */
    _Atomic int invites;               /* invitations made (pending: invites - (nslots - 1)) */
    /* The taker that got slot 1: ticks when it started on it (0: none
     * did) and when its own share ran out, and how many items that share
     * held then. Plain: written by that taker before its completion is
     * counted, read by the caller after the count reached 0
     * (release/acquire there). */
    uint64_t t_join;
    uint64_t t_hend;
    uint32_t h_items;
    bool posted;       /* caller only: offer points to this job's offer */
    rt_task offer;     /* the offer's descriptor (rt_pfor_offer_post) */
    pfor_slot slot[PFOR_SLOTS];
} pfor_job;

static inline uint64_t pack(uint32_t b, uint32_t e) { return (uint64_t)e << 32 | b; }
static inline uint32_t lo(uint64_t w) { return (uint32_t)w; }
static inline uint32_t hi(uint64_t w) { return (uint32_t)(w >> 32); }

/* Calls fn on units [b, e) of the loop. */
static inline void run_units(const pfor_job *j, uint32_t b, uint32_t e)
{
    size_t n = j->end - j->base, hi_off = (size_t)e * j->unit;
    j->fn(j->arg, j->base + (size_t)b * j->unit, hi_off >= n ? j->end : j->base + hi_off);
}

static inline uint32_t claim_size(const pfor_job *j, uint32_t rem)
{
    /* Never leave a remainder smaller than a grain behind: it would become
     * a piece of its own. */
    return j->chunk < rem && rem - j->chunk >= j->grain ? j->chunk : rem;
}

/* ------------------------------------------------ pfor/share.c */

/* The calling thread's loop hints (pfor/pfor.c): what it learnt of its loops'
 * cost per item (a few (fn, arg) pairs), when its last loop ended and
 * whether a taker joined it, a polling taker's lag and relative speed,
 * and its last kick. Kept per thread, and reached only through
 * rt_pfor_here, a real call (out of line here, in pfor/share.c): a fiber
 * that ran fn or waited may be on another thread now, and a thread-local
 * address a compiler kept across that would be the old thread's. */
#define PFOR_HINTS 4
typedef struct pfor_hint {
    dagrt_range_fn fn;
    void *arg;
    double ns_per;
    unsigned uses;
} pfor_hint;
typedef struct pfor_tls {
    pfor_hint hints[PFOR_HINTS];
    unsigned hint_next;
    uint64_t last_end;       /* ticks; 0: none yet */
    /* How long after its invitation a polling taker starts on its share,
     * in ns: the head start the caller gets when it splits for such a
     * taker (presplit). Learnt from the loops that did. */
    double join_ns;
    uint64_t last_kick;
    bool last_joined;        /* a taker joined this thread's last shared loop */
    /* A taker's ns per item over the caller's, in the loops one joined:
     * how to share between the two (presplit). Learnt like join_ns. */
    double speed_ratio;
    /* rt_pfor_busy_hook's: whether this thread has work of its own now
     * (NULL: it has none to go back to). */
    bool (*busy)(void *);
    void *busy_arg;
} pfor_tls;
pfor_tls *rt_pfor_here(void);

/* Pushes one invitation from ctx c: 0 or an error (nothing pushed). */
int rt_pfor_invite(pfor_job *j, rt_ctx *c);
/* Posts j's offer if the offer word is free; withdraws it if nobody took
 * it (true: withdrawn, its count is the caller's to complete). */
bool rt_pfor_offer_post(pfor_job *j);
bool rt_pfor_offer_withdraw(pfor_job *j);
/* Runs slot s as its owner, a chunk per claim (per_out: time the first). */
void rt_pfor_run_slot(pfor_job *j, pfor_slot *s, double *per_out, bool full);
/* Splits the largest remainder into slot `mine`, at most `most` units of
 * it (UINT32_MAX: the usual half); false: nothing worth it. */
bool rt_pfor_steal_into(pfor_job *j, int mine, uint32_t most);
/* A participant's whole part: its slot, then what it can split off. */
void rt_pfor_run_part(pfor_job *j, int mine, uint64_t *own_end);

/* The invitation's task: a taker joins the loop. */
void rt_pfor_task(void *p);

/* core/placement.c: steering the wake-up of a sleeping worker off our CPU. */
uintptr_t rt_place_steer(dagrt *rt, int cpu);
void rt_place_unsteer(dagrt *rt, uintptr_t steered, int cpu);

#endif
