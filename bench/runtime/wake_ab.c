/*
 * wake_ab.c - the parked wake-up alone, for A/B sittings across commits
 * (bench/runtime/wake_ab.sh links it against each commit's libdagrt.a, so
 * the benchmark code is the same on both sides; issue 22 item 5).
 *
 * usage: wake_ab TRIPS
 * Prints "wake_park_us M" then "futex_floor_us F": the median over TRIPS
 * trips of
 *  - wake_park: a runtime with 1 worker and the park policy; per trip the
 *    main thread sleeps 5 ms (the worker has long parked), spawns a task
 *    that stores a flag, and waits for the flag (bench_wait.h); the time
 *    from before dagrt_spawn to seeing the flag;
 *  - futex_floor: the same trip with a bare thread in FUTEX_WAIT and a
 *    FUTEX_WAKE instead of the runtime (Linux only; -1 elsewhere).
 * Only the public header: any commit's library links.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dagrt.h"
#include "bench_wait.h"

static _Atomic int flag;

static uint64_t now_ns(void)
{
    return bench_wait_clock_ns();
}

static void sleep_5ms(void)
{
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static double median_us(uint64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return (double)v[n / 2] / 1000.0;
}

static void flag_task(void *p)
{
    (void)p;
    /* release: the waiter's acquire load sees the store and ends its trip. */
    atomic_store_explicit(&flag, 1, memory_order_release);
}

static double wake_park_us(int trips, uint64_t *lat)
{
    dagrt_config c;
    dagrt_config_init(&c);
    c.workers = 1;
    c.idle = DAGRT_IDLE_PARK;
    c.seed = 1;
    dagrt *rt = dagrt_create(&c);
    if (!rt) {
        fprintf(stderr, "wake_ab: dagrt_create failed\n");
        exit(1);
    }
    for (int i = 0; i < trips; i++) {
        sleep_5ms();
        atomic_store(&flag, 0);
        dagrt_group g;
        dagrt_group_init(&g);
        uint64_t t0 = now_ns();
        dagrt_spawn(rt, &g, flag_task, NULL);
        BENCH_WAIT_UNTIL(atomic_load_explicit(&flag, memory_order_acquire));
        lat[i] = now_ns() - t0;
        dagrt_group_wait(rt, &g);
    }
    dagrt_destroy(rt);
    return median_us(lat, trips);
}

#if defined(__linux__)
#include <linux/futex.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint32_t fx_word;   /* 0 sleep, 1 go, 2 exit */

static void *fx_sleeper(void *p)
{
    (void)p;
    for (;;) {
        while (atomic_load(&fx_word) == 0)
            syscall(SYS_futex, (uint32_t *)&fx_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
        if (atomic_load(&fx_word) == 2)
            return NULL;
        atomic_store(&fx_word, 0);
        atomic_store_explicit(&flag, 1, memory_order_release);   /* release: as in flag_task */
    }
}

static double futex_floor_us(int trips, uint64_t *lat)
{
    pthread_t th;
    atomic_store(&fx_word, 0);
    if (pthread_create(&th, NULL, fx_sleeper, NULL) != 0)
        return -1;
    for (int i = 0; i < trips; i++) {
        sleep_5ms();
        atomic_store(&flag, 0);
        uint64_t t0 = now_ns();
        atomic_store(&fx_word, 1);
        syscall(SYS_futex, (uint32_t *)&fx_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        BENCH_WAIT_UNTIL(atomic_load_explicit(&flag, memory_order_acquire));
        lat[i] = now_ns() - t0;
    }
    atomic_store(&fx_word, 2);
    syscall(SYS_futex, (uint32_t *)&fx_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pthread_join(th, NULL);
    return median_us(lat, trips);
}
#else
static double futex_floor_us(int trips, uint64_t *lat)
{
    (void)trips;
    (void)lat;
    return -1;
}
#endif

int main(int argc, char **argv)
{
    int trips = argc > 1 ? atoi(argv[1]) : 300;
    if (trips < 1) {
        fprintf(stderr, "usage: wake_ab TRIPS (TRIPS >= 1)\n");
        return 2;
    }
    uint64_t *lat = malloc(sizeof *lat * (size_t)trips);
    if (!lat)
        return 1;
    printf("wake_park_us %.2f\n", wake_park_us(trips, lat));
    printf("futex_floor_us %.2f\n", futex_floor_us(trips, lat));
    free(lat);
    return 0;
}
