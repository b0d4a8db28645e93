/* scn_wake.c - the wake-up latency counters (dagrt_config.wake_stats,
 * DAGRT_WAKE_STATS; dagrt_thread_stats.wakeups .. search_ns_max): a parked
 * worker woken by a spawn counts each wake, with a nonzero wake and search
 * time; off, or with a worker that never parks (DAGRT_IDLE_SPIN), they
 * stay 0. See scenarios.h. */
#include "scenarios.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"   /* rt->spin_ns: the worker parks at once */

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

typedef struct wk_arg {
    dagrt *rt;
    atomic_int done;
    atomic_int thread;
} wk_arg;

static void wk_task(void *p)
{
    wk_arg *a = p;
    atomic_store(&a->thread, dagrt_thread_index(a->rt));
    atomic_store(&a->done, 1);
}

static uint64_t wk_parks(dagrt *rt)
{
    dagrt_thread_stats s[2];
    memset(s, 0, sizeof s);
    return dagrt_get_stats(rt, s, 2) == 2 ? s[1].parks : 0;
}

/* Until the one worker has gone to sleep again since *last (its park
 * count moves once it has re-checked every queue and found none: from
 * then on a spawn's wake-up reaches it through the park, asleep already
 * or about to be), the count then in *last; false after 10 s. (Idle and
 * not polling is not enough: between the two the worker may still see the
 * spawn in its re-check and never sleep.) */
static bool wk_parked(dagrt *rt, uint64_t *last)
{
    uint64_t t0 = dagrt_now_ns(), p;
    while ((p = wk_parks(rt)) <= *last)
        if (dagrt_now_ns() - t0 > 10000000000u)
            return false;
    *last = p;
    return true;
}

/* rounds spawns from the main thread, each once the worker sleeps (or, for
 * a spinning worker, at once), run by the worker: the main thread polls a
 * flag rather than helping. Returns the worker's line in *st. */
static int wk_rounds(dagrt_config *cfg, int rounds, bool park, dagrt_thread_stats *st)
{
    int v = 0;
    dagrt *rt = dagrt_create(cfg);
    if (!rt)
        return 1;
    atomic_store(&rt->spin_ns, 0);   /* relaxed in the runtime: a knob */
    int on_worker = 0;
    uint64_t parks = 0;
    for (int i = 0; i < rounds; i++) {
        if (park && !wk_parked(rt, &parks)) {
            FAIL("wake: the worker never parked");
            break;
        }
        wk_arg a = {rt, 0, -1};
        dagrt_group g;
        dagrt_group_init(&g);
        dagrt_spawn(rt, &g, wk_task, &a);
        uint64_t t0 = dagrt_now_ns();
        while (!atomic_load(&a.done) && dagrt_now_ns() - t0 < 10000000000u)
            ;
        dagrt_group_wait(rt, &g);
        on_worker += atomic_load(&a.thread) == 1;
    }
    dagrt_thread_stats s[2];
    memset(s, 0, sizeof s);
    if (dagrt_get_stats(rt, s, 2) != 2)
        FAIL("wake: dagrt_get_stats");
    *st = s[1];
    if (on_worker < rounds / 2)
        FAIL("wake: only %d of %d tasks ran on the worker", on_worker, rounds);
    dagrt_destroy(rt);
    return v;
}

int scn_wake_latency(void)
{
    int v = 0;
    const int rounds = (int)scaled(200, 40);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 1;
    cfg.wake_stats = true;
    dagrt_thread_stats on, off, spin;
    v += wk_rounds(&cfg, rounds, true, &on);
    /* Every round a parked worker woken by the spawn: counted (a round
     * whose worker the spawn finds still on its way to sleep may not be). */
    if (on.wakeups < (uint64_t)rounds / 2 || on.wakeups > on.parks)
        FAIL("wake: %llu wake-ups in %d rounds, %llu parks", (unsigned long long)on.wakeups,
             rounds, (unsigned long long)on.parks);
    uint64_t n = on.wakeups ? on.wakeups : 1;
    if (on.wake_ns == 0 || on.wake_ns_max == 0 || on.wake_ns_max < on.wake_ns / n ||
        on.wake_ns_max > on.wake_ns || on.wake_ns / n > 1000000000u)
        FAIL("wake: wake %llu ns in all, %llu at most", (unsigned long long)on.wake_ns,
             (unsigned long long)on.wake_ns_max);
    if (on.search_ns == 0 || on.search_ns_max < on.search_ns / n || on.search_ns / n > 1000000000u)
        FAIL("wake: search %llu ns in all, %llu at most", (unsigned long long)on.search_ns,
             (unsigned long long)on.search_ns_max);
    fprintf(stderr, "wake: %llu wake-ups: wake %llu ns on average (max %llu), search %llu ns "
            "(max %llu)\n", (unsigned long long)on.wakeups, (unsigned long long)(on.wake_ns / n),
            (unsigned long long)on.wake_ns_max, (unsigned long long)(on.search_ns / n),
            (unsigned long long)on.search_ns_max);
    /* Off (the default): nothing counted, though the worker parked. */
    cfg.wake_stats = false;
    const char *env = getenv("DAGRT_WAKE_STATS");
    if (!env || !*env || strcmp(env, "0") == 0) {
        v += wk_rounds(&cfg, rounds / 4, true, &off);
        if (off.parks == 0 || off.wakeups || off.wake_ns || off.wake_ns_max || off.search_ns ||
            off.search_ns_max)
            FAIL("wake off: %llu parks, %llu wake-ups, %llu / %llu ns", (unsigned long long)off.parks,
                 (unsigned long long)off.wakeups, (unsigned long long)off.wake_ns,
                 (unsigned long long)off.search_ns);
    }
    /* A worker that never sleeps is never woken. */
    cfg.wake_stats = true;
    cfg.idle = DAGRT_IDLE_SPIN;
    v += wk_rounds(&cfg, rounds / 4, false, &spin);
    if (spin.parks || spin.wakeups || spin.wake_ns || spin.search_ns)
        FAIL("wake, spinning: %llu parks, %llu wake-ups", (unsigned long long)spin.parks,
             (unsigned long long)spin.wakeups);
    return v;
}
