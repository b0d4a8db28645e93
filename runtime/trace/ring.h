/*
 * trace/ring.h - the trace recorder's own structures, shared by its
 * files: trace/record.c (the rings and recording), trace/write.c (the file) and
 * trace/speedscope.c (speedscope's format).
 * Not installed; the rest of the runtime sees trace/record.h only.
 */
#ifndef DAGRT_TRACE_RING_H
#define DAGRT_TRACE_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../arch/apart.h"
#include "../os/os.h"
#include "record.h"

#define RT_TRACE_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* EV_IO: an I/O wait, ts its end (rt_trace_io). EV_TASK: a spawned task
 * of the program's, or a fiber task's slice (rt_trace_task_begin): name,
 * cat, index and frame its parent node's (name NULL: none known), b the
 * task's descriptor, e its function's address. */
enum { EV_NODE = 0, EV_IDLE = 1, EV_MARK = 2, EV_IO = 3, EV_TASK = 4 };
/* F_TASK: an open span that is a spawned task's (its n: the parent node,
 * begin the task, end its function). */
enum { F_PIECE = 1, F_RESUMED = 2, F_SUSPENDED = 4, F_TASK = 8 };

typedef struct ev {
    uint64_t ts, dur;           /* ticks since the trace's start (trace/ring.h: counter) */
    const char *name, *cat;
    uint64_t frame, b, e;
    uint32_t index;
    uint8_t kind, flags;
} ev;

/* Open spans per thread: nesting comes from waits that help (a task waits
 * and runs others on its thread) and from pieces inside a task. */
#define DEPTH 32

typedef struct open_span {
    uint64_t ts;
    rt_trace_node n;
    uint8_t flags;
} open_span;

typedef struct ring {
    /* Events written so far; slot head % cap is the next. */
    _Alignas(RT_APART) _Atomic uint64_t head;
    ev *slot;
    uint64_t cap;
    uint32_t gen;                /* the start this thread's open spans belong to */
    uint32_t depth;              /* open spans, up to DEPTH stored */
    uint64_t idle_ts;            /* idle since (0: not idle) */
    open_span open[DEPTH];
} ring;

struct rt_trace {
    _Atomic bool on;
    bool use_counter;            /* ticks: counter(); else ns */
    uint64_t t0_ns;              /* the clock at t0 */
    _Atomic uint32_t gen;        /* starts so far: spans open before one are dropped */
    uint32_t nthreads;
    uint32_t nworkers;           /* thread names: tids above it are guest slots */
    uint64_t frames;
    size_t max_bytes;
    uint64_t t0;                 /* ticks at creation */
    double ns_per_tick;          /* set by the writer */
    uint64_t written, cut;
    bool speedscope;             /* this write: speedscope's format (set by the writer) */
    bool flows;                  /* flow events in the file (DAGRT_TRACE_FLOWS) */
    /* The graphs whose frames ran while flows were on (rt_trace_graph):
     * written by the main thread only, slots before ngraphs whole. */
    _Atomic uint32_t ngraphs;
    const struct dagrt_graph *graphs[RT_TRACE_GRAPHS];
    ring *rings;
};

/* An event the writer keeps, and its thread: what trace/speedscope.c
 * writes in speedscope's format from trace/write.c's choice. */
typedef struct rt_trace_pick {
    const ev *e;
    uint32_t tid;
} rt_trace_pick;

/* Writes s (NULL: "") to f as a JSON string; both file formats name
 * their events through it (trace/write.c). */
void rt_trace_put_str(FILE *f, const char *s);

/* Writes the n kept events to f as a speedscope file, k ns per tick.
 * 0 or DAGRT_ENOMEM. */
int rt_trace_put_speedscope(FILE *f, const rt_trace_pick *pick, size_t n, uint32_t nthreads,
                            uint32_t nworkers, double k);

/* Writes the flow events between the n kept node events of pick
 * (trace/flow.c), ids from 1, k ns per tick; returns how many, or -1
 * when out of memory. */
long long rt_trace_put_flows(rt_trace *t, FILE *f, const rt_trace_pick *pick, size_t n, long pid,
                             double k);

static inline uint64_t now_ns(void)
{
    return rt_os_now_ns();
}

/* Events are stamped with the CPU's constant-rate counter where there is
 * one (cheaper than a clock call), converted to nanoseconds
 * when the file is written, by the counter's rate over the recording
 * (measured against the monotonic clock from creation to the write). */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
static inline uint64_t counter(void)
{
    unsigned lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline bool counter_ok(void) { return rt_os_counter_invariant(); }
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
static inline uint64_t counter(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
}
static inline bool counter_ok(void) { return true; }   /* the generic timer: constant rate */
#else
static inline uint64_t counter(void) { return 0; }
static inline bool counter_ok(void) { return false; }
#endif

#endif
