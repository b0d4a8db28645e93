/* io_scenarios.c - scenarios for cancel scopes and the clock, hosted by the
 * one scenario runner (tests/scenario: Criterion, and the plain driver for TSan). Each returns 0 or
 * prints why it failed and returns 1. */
#include <pthread.h>
#include <stdio.h>

#include "dagrt.h"
#include "scenario.h"

#define FAIL(...) do { fprintf(stderr, "%s: ", __func__); fprintf(stderr, __VA_ARGS__); \
                       fputc('\n', stderr); return 1; } while (0)

/* A request marks the scope and everything under it, never above it. */
static int io_cancel_nesting(void)
{
    dagrt_cancel root, mid, leaf, other;
    dagrt_cancel_init(&root, NULL);
    dagrt_cancel_init(&mid, &root);
    dagrt_cancel_init(&leaf, &mid);
    dagrt_cancel_init(&other, &root);
    if (dagrt_cancel_requested(&root) || dagrt_cancel_requested(&mid) ||
        dagrt_cancel_requested(&leaf) || dagrt_cancel_requested(&other))
        FAIL("a fresh scope reads as cancelled");
    dagrt_cancel_request(&mid);
    if (!dagrt_cancel_requested(&mid) || !dagrt_cancel_requested(&leaf))
        FAIL("mid's request did not reach mid and its child");
    if (dagrt_cancel_requested(&root) || dagrt_cancel_requested(&other))
        FAIL("a child's request reached its parent or a sibling");
    dagrt_cancel_request(&root);
    if (!dagrt_cancel_requested(&other))
        FAIL("root's request did not reach its other child");
    if (dagrt_cancel_requested(NULL))
        FAIL("NULL (no scope) reads as cancelled");
    dagrt_cancel_request(NULL);   /* ignored, no crash */
    return 0;
}

/* A request made on another thread is seen here, with what the requester
 * wrote before it (TSan checks the ordering). */
static dagrt_cancel xs;
static int payload;

static void *requester(void *arg)
{
    (void)arg;
    payload = 42;
    dagrt_cancel_request(&xs);
    return NULL;
}

static int io_cancel_cross_thread(void)
{
    dagrt_cancel parent;
    dagrt_cancel_init(&parent, NULL);
    dagrt_cancel_init(&xs, &parent);
    payload = 0;
    pthread_t t;
    if (pthread_create(&t, NULL, requester, NULL) != 0)
        FAIL("pthread_create");
    uint64_t t0 = dagrt_now_ns();
    while (!dagrt_cancel_requested(&xs)) {
        if (dagrt_now_ns() - t0 > UINT64_C(10000000000))
            FAIL("the request was not seen within 10 s");
    }
    int seen = payload;
    pthread_join(t, NULL);
    if (seen != 42)
        FAIL("the request was seen before the write made ahead of it (%d)", seen);
    if (dagrt_cancel_requested(&parent))
        FAIL("the child's request reached the parent");
    return 0;
}

/* The clock is monotonic and runs at nanosecond scale. */
static int io_clock(void)
{
    uint64_t a = dagrt_now_ns();
#ifdef _WIN32
    Sleep(3);                              /* ms; at least 2 ms */
#else
    struct timespec ts = { 0, 2000000 };   /* 2 ms */
    nanosleep(&ts, NULL);
#endif
    uint64_t b = dagrt_now_ns();
    if (b < a + 2000000)
        FAIL("2 ms of sleep measured %llu ns", (unsigned long long)(b - a));
    if (b - a > UINT64_C(5000000000))
        FAIL("2 ms of sleep measured over 5 s: not nanoseconds");
    return 0;
}

/* The scenarios of the suite's other files (io_ops.c), declared from the
 * list (extern keeps the linkage of one defined static above). */
#define SCENARIO(group, name, secs, flags) extern int name(void);
#include "io_list.h"
#undef SCENARIO

const scenario scenario_table[] = {
#define SCENARIO(group, name, secs, flags) {#name, name, NULL},
#include "io_list.h"
#undef SCENARIO
    {NULL, NULL, NULL},
};
