/* io_poll_past.c - a poll whose deadline has already passed looks once
 * (docs/runtime.md, "Cancellation and deadlines"; like poll(2) with a
 * timeout of 0): a ready handle returns its set every time, an empty one
 * DAGRT_ETIMEDOUT every time. Many rounds from every kind of caller (the
 * main thread, a fiber, a plain task on a worker, a thread outside the
 * runtime, the asynchronous call), on each reactor (NAME_fb: the
 * fallback; on Windows the blocking lane, where every poll goes). The
 * same on every system (io_ops.h's io_pair).
 *
 * Before such a poll looked on the submitting thread (rt_io_op.once,
 * os/reactor.h) it was queued like any poll and cancelled at once by its
 * deadline: on the Windows lane the cancel took it off the queue before a
 * lane thread looked, most rounds, and lost the race now and then, so
 * io_poll_callers_fb was flaky under Wine and the rounds here failed. */
#define _GNU_SOURCE
#include "io_ops.h"

#include <pthread.h>

#define ROUNDS 400

typedef struct past_job {
    dagrt *rt;
    io_pair *ready, *empty;
    int rounds;
    _Atomic int bad;          /* rounds that answered wrong */
    _Atomic int first_wrong;  /* the first wrong answer, for the message */
} past_job;

static void wrong(past_job *j, int got)
{
    int none = 0;
    atomic_compare_exchange_strong(&j->first_wrong, &none, got);
    atomic_fetch_add(&j->bad, 1);
}

/* Three deadlines in the past (0, now, 1 ns) on the ready handle, for IN
 * and for OUT, and one on the empty handle, each round. */
static void past_rounds(past_job *j)
{
    for (int i = 0; i < j->rounds; i++) {
        uint64_t dl = i % 3 == 0 ? 0 : i % 3 == 1 ? dagrt_now_ns() : 1;
        int r = dagrt_poll(j->rt, io_pair_rd(j->ready), DAGRT_POLL_IN, dl, NULL);
        if (r != DAGRT_POLL_IN)
            wrong(j, r);
        r = dagrt_poll(j->rt, io_pair_writable(j->ready), DAGRT_POLL_OUT, dl, NULL);
        if (r != DAGRT_POLL_OUT)
            wrong(j, r);
        r = dagrt_poll(j->rt, io_pair_rd(j->empty), DAGRT_POLL_IN, dl, NULL);
        if (r != DAGRT_ETIMEDOUT)
            wrong(j, r == 0 ? -1000 : r);
    }
}

static void past_task(void *arg) { past_rounds(arg); }
static void *past_thread(void *arg) { past_rounds(arg); return NULL; }

/* The asynchronous call: a once poll is answered inside the call, so the
 * result is there at once, never DAGRT_PENDING. */
static void async_never(void *arg, int64_t r) { wrong(arg, (int)r); }

static void past_async(past_job *j)
{
    dagrt_async a;
    for (int i = 0; i < j->rounds; i++) {
        dagrt_async_init(&a, async_never, j, 0);
        int64_t r = dagrt_poll_async(j->rt, &a, io_pair_rd(j->ready), DAGRT_POLL_IN, 0, NULL);
        if (r != DAGRT_POLL_IN)
            wrong(j, (int)r);
        dagrt_async_init(&a, async_never, j, 0);
        r = dagrt_poll_async(j->rt, &a, io_pair_rd(j->empty), DAGRT_POLL_IN, 1, NULL);
        if (r != DAGRT_ETIMEDOUT)
            wrong(j, (int)r);
    }
}
static void past_async_task(void *arg) { past_async(arg); }

static int poll_past(bool fallback)
{
    int bad = 0;
    io_pair ready, empty;
    if (io_pair_open(&ready) || io_pair_open(&empty))
        FAIL("pairs: %s", io_os_why());
    dagrt *rt = make_rt(fallback, 2);
    if (!rt)
        FAIL("dagrt_create");
    EXPECT(io_pair_put(&ready, 'x'));   /* never read: ready for good */
    /* Wait until the byte has arrived (a datagram over loopback). */
    EXPECT(dagrt_poll(rt, io_pair_rd(&ready), DAGRT_POLL_IN, DAGRT_FOREVER, NULL) == DAGRT_POLL_IN);
    const char *who[] = { "main thread", "fiber", "plain task", "thread outside", "async (main)",
                          "async (task)" };
    for (int k = 0; k < 6; k++) {
        past_job j = { rt, &ready, &empty, ROUNDS, 0, 0 };
        dagrt_group g;
        dagrt_group_init(&g);
        if (k == 0) {
            past_rounds(&j);
        } else if (k == 1 || k == 2) {
            EXPECT(dagrt_spawn_ex(rt, &g, past_task, &j, k == 1 ? DAGRT_SPAWN_FIBER : 0) == 0);
            EXPECT(dagrt_group_wait(rt, &g) == 0);
        } else if (k == 3) {
            pthread_t t;
            EXPECT(pthread_create(&t, NULL, past_thread, &j) == 0);
            pthread_join(t, NULL);
        } else if (k == 4) {
            past_async(&j);
        } else {
            EXPECT(dagrt_spawn(rt, &g, past_async_task, &j) == 0);
            EXPECT(dagrt_group_wait(rt, &g) == 0);
        }
        int n = atomic_load(&j.bad);
        if (n) {
            fprintf(stderr, "poll_past%s: %s: %d of %d answers wrong (first: %d)\n", fallback ? "_fb" : "",
                    who[k], n, k >= 4 ? 2 * ROUNDS : 3 * ROUNDS, atomic_load(&j.first_wrong));
            bad++;
        }
    }
    /* Each empty look is counted as a timeout (one a round, six callers),
     * and the byte is still there. */
    dagrt_io_stats st;
    EXPECT(dagrt_get_io_stats(rt, &st) == 0);
    EXPECT(st.kind[DAGRT_IO_POLL].timeouts == 6u * ROUNDS);
    char c = 0;
    EXPECT(io_pair_get(rt, &ready, &c, NULL) == 1 && c == 'x');
    bad += check_reactor(rt, fallback);
    dagrt_destroy(rt);
    io_pair_close(&ready);
    io_pair_close(&empty);
    return bad;
}

int io_poll_past(void) { return poll_past(false); }
int io_poll_past_fb(void) { return poll_past(true); }
