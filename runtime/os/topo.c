/*
 * os/topo.c - the CPU topology's portable end (os.h, rt_os_topology):
 * what both systems do once they have one record per CPU the process may
 * use. Sorting and the classes live here so that the rule (the highest
 * rank is the performance class) is one rule on both.
 */
#include "os.h"

void rt_os_topology_finish(rt_os_cpu_info *recs, int n)
{
    /* Insertion sort: at most RT_OS_CPUSET_BITS records, once per query,
     * and both systems nearly deliver them in order already. */
    for (int i = 1; i < n; i++) {
        rt_os_cpu_info x = recs[i];
        int j = i;
        for (; j > 0 && recs[j - 1].cpu > x.cpu; j--)
            recs[j] = recs[j - 1];
        recs[j] = x;
    }
    int top = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || recs[i].rank > top)
            top = recs[i].rank;
    for (int i = 0; i < n; i++)
        recs[i].klass = recs[i].rank == top ? RT_OS_CLASS_PERF : RT_OS_CLASS_EFF;
}

int rt_os_rate_cpus(uint32_t rate, int ncpus)
{
    if (rate == 0 || ncpus < 1 || rate >= 10000)
        return 0;   /* no rate, or the whole machine: no cap */
    int n = (int)(((uint64_t)rate * (uint64_t)ncpus) / 10000u);
    return n < 1 ? 1 : n;
}
