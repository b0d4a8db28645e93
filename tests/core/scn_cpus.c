/* scn_cpus.c - the CPUs the system grants, on every system (Windows too,
 * under Wine: runtime/os/os_win32.c's processor groups): the topology is
 * consistent with itself and with DAGRT_WORKERS_AUTO's count, and
 * DAGRT_PLACEMENT_PIN runs tasks. The Linux-only checks (masks, fake
 * sysfs trees) are scn_engine.c's. See scenarios.h. */
#include "scenarios.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "dagrt.h"

#define FAIL(...) do { fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); v++; } while (0)

static void bump(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

int scn_topology_any(void)
{
    int v = 0;
    static dagrt_cpu cpus[1024];
    static int order[1024];
    dagrt_topology t;
    int n = dagrt_get_topology(&t, cpus, 1024);
    if (n < 1)
        return 1 + 0 * fprintf(stderr, "dagrt_get_topology: %d\n", n);
    fprintf(stderr, "topology: %d CPUs, %d cores, %d performance, %d efficiency, %d sharing a core, "
            "%d group(s), quota %d, usable %d\n", t.cpus, t.cores, t.performance, t.efficiency,
            t.smt, t.groups, t.quota, t.usable);
    if (t.cpus != n || t.performance + t.efficiency != n || t.cores < 1 || t.cores > n ||
        t.smt > n || t.groups < 1 || t.usable < 1 || t.usable > n || t.performance < 1)
        FAIL("summary not consistent");
    for (int i = 0; i < n; i++) {
        if (i > 0 && cpus[i].id <= cpus[i - 1].id)
            FAIL("not sorted at %d", i);
        if (cpus[i].core > cpus[i].id || cpus[i].group != cpus[i].id / 64)
            FAIL("CPU %d: core %d group %d", cpus[i].id, cpus[i].core, cpus[i].group);
    }
    if (dagrt_topology_order(cpus, n, order) != 0)
        FAIL("order refused");
    int seen = 0;
    for (int i = 0; i < n; i++)
        if (order[i] >= 0 && order[i] < n)
            seen++;
    if (seen != n)
        FAIL("order is no permutation");
    dagrt *rt = dagrt_create(NULL);
    if (!rt || dagrt_worker_count(rt) != t.usable - 1)
        FAIL("DAGRT_WORKERS_AUTO: %d workers, usable %d", rt ? dagrt_worker_count(rt) : -1, t.usable);
    if (rt)
        dagrt_destroy(rt);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    cfg.placement = DAGRT_PLACEMENT_PIN;
    rt = dagrt_create(&cfg);
    if (!rt)
        return v + 1;
    atomic_int k = 0;
    dagrt_group g;
    dagrt_group_init(&g);
    for (int i = 0; i < 1000; i++)
        dagrt_spawn(rt, &g, bump, &k);
    dagrt_group_wait(rt, &g);
    dagrt_thread_stats st[4];
    dagrt_get_stats(rt, st, 4);
    if (atomic_load(&k) != 1000)
        FAIL("pinned workers ran %d of 1000", atomic_load(&k));
    for (int w = 1; w <= 2; w++)
        if (st[w].pin_refused)
            FAIL("worker %d: its pin to an allowed CPU was refused", w);
    dagrt_destroy(rt);
    return v;
}
