/*
 * trace_check.h - reads a Chrome Trace Event Format file (through dagc's
 * strict JSON reader) into a flat list, and checks what every trace the
 * recorder writes must satisfy: the object form, complete events with
 * the fields that docs/runtime.md, "The built-in trace", names, and no two
 * events on one thread that overlap without nesting.
 */
#ifndef TRACE_CHECK_H
#define TRACE_CHECK_H

#include <stddef.h>
#include <stdint.h>

typedef struct tc_event {
    char ph;                 /* 'X', 'i', 'M' */
    char name[64], cat[64];
    uint64_t ts, dur;        /* ns (the file has microseconds, 3 decimals) */
    uint32_t tid;
    int64_t frame, node;     /* -1: absent */
    int64_t begin, end;      /* parallel piece; -1: absent */
    int resumed, suspended;
    char thread_name[64];    /* 'M' thread_name events */
    int64_t id;              /* async events ('b', 'e'): their id; -1: absent */
    char graph[64];          /* args.graph (the frame marker's; a spawned task's parent's) */
    char parent[64];         /* args.parent: a spawned task's parent node ("" absent) */
    char fn[24], task[24];   /* a spawned task's args.fn, and a fiber task's slice's
                                args.task ("" absent) */
    /* Flow events ('s', 'f'; DAGRT_TRACE_FLOWS): where the arrow goes
     * (frame and node above are where it comes from), -1: absent;
     * args.released (1 true, 0 false, -1 absent); "bp":"e" on an 'f'. */
    int64_t to_frame, to_node;
    int released, bp_e;
} tc_event;

typedef struct tc_trace {
    tc_event *ev;
    size_t n;
    int has_display_unit, has_other;
    uint64_t dropped;        /* otherData.dropped_events */
    int has_note;            /* otherData.note */
} tc_trace;

/* Parses PATH; returns 0, or -1 with a message in err. */
int tc_load(const char *path, tc_trace *t, char *err, size_t errsz);
void tc_free(tc_trace *t);
/* Returns the number of problems found (each described on stderr):
 * events partially overlapping on one thread, X events without frame and
 * node args (outside cat "dagrt"), missing thread names. */
int tc_check(const tc_trace *t);
/* tc_load then tc_check, a load error printed on stderr: returns -1 when
 * PATH did not load, else tc_check's count. */
int tc_load_checked(const char *path, tc_trace *t);
/* Counts events with ph 'X' named NAME (NULL: any) in frame FRAME (-1: any). */
size_t tc_count(const tc_trace *t, const char *name, int64_t frame);

#endif
