/*
 * os/cpu_win32.c - the system layer's CPUs (os.h) on Windows: the CPUs the
 * process may use over every processor group, their cores and efficiency
 * classes, a job object's CPU rate cap, the CPU a thread runs on, and
 * thread and process affinity (cpu_linux.c is Linux's).
 */
#ifndef _WIN32_WINNT
#  define _WIN32_WINNT 0x0A00   /* Windows 10: as os_win32.c */
#endif
#define WIN32_LEAN_AND_MEAN
#include "os.h"

#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* --------------------------------------------------------------- CPUs */

/* CPU numbers are group * 64 + the processor's number in its group, so a
 * machine with more than 64 CPUs (several processor groups) fits
 * rt_os_cpuset's bits. */

static int popcount64(uint64_t m)
{
    int n = 0;
    for (; m; m &= m - 1)
        n++;
    return n;
}

/* The system's cores, one record each (RelationProcessorCore), in a
 * block to free; NULL where the call fails. */
static SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *cores_info(DWORD *len)
{
    *len = 0;
    GetLogicalProcessorInformationEx(RelationProcessorCore, NULL, len);
    if (*len == 0)
        return NULL;
    SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *info = malloc(*len);
    if (info && !GetLogicalProcessorInformationEx(RelationProcessorCore, info, len)) {
        free(info);
        info = NULL;
    }
    return info;
}

/* The CPUs the process may use: its affinity mask in its own group, and
 * every other group's processors too when nobody narrowed that mask
 * (Windows 11 spreads a process's threads over every group; older
 * systems run a thread in another group once it asks to, which
 * rt_os_affinity_set does). A process already in several groups has no
 * single mask (GetProcessAffinityMask gives 0): every group then. */
static void allowed_mask(const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *info, DWORD len,
                         rt_os_cpuset *allowed)
{
    DWORD_PTR proc = 0, sys = 0;
    USHORT groups[4] = {0};
    USHORT ng = 4;
    USHORT primary = 0;
    if (GetProcessGroupAffinity(GetCurrentProcess(), &ng, groups) && ng >= 1)
        primary = groups[0];
    GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys);
    uint64_t in_primary = 0;
    for (DWORD off = 0; off < len;) {
        const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e =
            (const void *)((const char *)info + off);
        for (WORD g = 0; g < e->Processor.GroupCount; g++)
            if (e->Processor.GroupMask[g].Group == primary)
                in_primary |= (uint64_t)e->Processor.GroupMask[g].Mask;
        off += e->Size;
    }
    bool whole = proc == 0 || ((uint64_t)proc & in_primary) == in_primary;
    memset(allowed, 0, sizeof *allowed);
    for (DWORD off = 0; off < len;) {
        const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e =
            (const void *)((const char *)info + off);
        for (WORD g = 0; g < e->Processor.GroupCount; g++) {
            const GROUP_AFFINITY *ga = &e->Processor.GroupMask[g];
            uint64_t m = (uint64_t)ga->Mask;
            if (ga->Group == primary && !whole)
                m &= (uint64_t)proc;
            else if (ga->Group != primary && !whole)
                m = 0;
            if ((int)ga->Group < RT_OS_CPUSET_BITS / 64)
                allowed->bits[ga->Group] |= m;
        }
        off += e->Size;
    }
}

/* The CPU rate cap of the job object the process is in, in whole CPUs
 * (0: none). Only a cap counts: a hard CpuRate, or the MaxRate of a
 * minimum and maximum rate (the SDK's union { CpuRate; Weight; struct {
 * WORD MinRate, MaxRate; } }: MaxRate is CpuRate's high half, which
 * MinGW's header does not name); a weight or a soft rate lets the job use
 * idle CPUs. The rate is of all the machine's CPUs. The query fails where
 * there is no job, and under Wine, which does not implement it (error 87):
 * no cap. */
#ifndef JOB_OBJECT_CPU_RATE_CONTROL_MIN_MAX_RATE
#  define JOB_OBJECT_CPU_RATE_CONTROL_MIN_MAX_RATE 0x10
#endif
static int job_cpus(void)
{
    JOBOBJECT_CPU_RATE_CONTROL_INFORMATION info;
    memset(&info, 0, sizeof info);
    if (!QueryInformationJobObject(NULL, JobObjectCpuRateControlInformation, &info, sizeof info, NULL) ||
        !(info.ControlFlags & JOB_OBJECT_CPU_RATE_CONTROL_ENABLE))
        return 0;
    uint32_t rate;
    if (info.ControlFlags & JOB_OBJECT_CPU_RATE_CONTROL_HARD_CAP)
        rate = info.CpuRate;
    else if (info.ControlFlags & JOB_OBJECT_CPU_RATE_CONTROL_MIN_MAX_RATE)
        rate = info.CpuRate >> 16;   /* MaxRate */
    else
        return 0;
    return rt_os_rate_cpus(rate, (int)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS));
}

int rt_os_topology(rt_os_cpu_info *out, int n, int *quota)
{
    *quota = job_cpus();
    DWORD len;
    SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *info = cores_info(&len);
    if (!info)
        return -1;
    rt_os_cpuset allowed;
    allowed_mask(info, len, &allowed);
    int k = 0;
    for (DWORD off = 0; off < len;) {
        const SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *e =
            (const void *)((const char *)info + off);
        /* EfficiencyClass, the byte after Flags (older headers call it
         * Reserved[0]; 0 on systems that do not set it): higher is faster. */
        int rank = e->Processor.Reserved[0];
        int core = -1;
        for (WORD g = 0; g < e->Processor.GroupCount; g++) {
            const GROUP_AFFINITY *ga = &e->Processor.GroupMask[g];
            for (int b = 0; b < 64; b++) {
                int cpu = (int)ga->Group * 64 + b;
                if (!((uint64_t)ga->Mask >> b & 1) || !rt_os_cpuset_has(&allowed, cpu))
                    continue;
                if (core < 0 || cpu < core)
                    core = cpu;
            }
        }
        for (WORD g = 0; g < e->Processor.GroupCount; g++) {
            const GROUP_AFFINITY *ga = &e->Processor.GroupMask[g];
            for (int b = 0; b < 64 && k < n; b++) {
                int cpu = (int)ga->Group * 64 + b;
                if (!((uint64_t)ga->Mask >> b & 1) || !rt_os_cpuset_has(&allowed, cpu))
                    continue;
                out[k++] = (rt_os_cpu_info){.cpu = cpu, .core = core, .group = ga->Group, .rank = rank};
            }
        }
        off += e->Size;
    }
    free(info);
    if (k == 0)
        return -1;
    rt_os_topology_finish(out, k);
    return k;
}

int rt_os_cpu_count(void)
{
    DWORD len;
    SYSTEM_LOGICAL_PROCESSOR_INFORMATION_EX *info = cores_info(&len);
    int n = 0;
    if (info) {
        rt_os_cpuset allowed;
        allowed_mask(info, len, &allowed);
        n = rt_os_cpuset_count(&allowed);
        free(info);
    } else {
        DWORD_PTR proc = 0, sys = 0;
        /* The process's mask, not the system's: what it may run on (a
         * START /AFFINITY, a job object's affinity). */
        if (GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
            n = popcount64((uint64_t)proc);
    }
    int cap = job_cpus();
    if (cap > 0 && cap < n)
        n = cap;
    return n < 1 ? 1 : n;
}

int rt_os_cpu_current(void)
{
    PROCESSOR_NUMBER pn;
    GetCurrentProcessorNumberEx(&pn);
    return (int)pn.Group * 64 + (int)pn.Number;   /* numbered as rt_os_topology numbers */
}

static HANDLE thread_of(const rt_os_thread *t)
{
    return t ? (HANDLE)t->h : GetCurrentThread();
}

static void from_mask(uint64_t m, rt_os_cpuset *s)
{
    memset(s, 0, sizeof *s);
    s->bits[0] = m;
}

int rt_os_affinity_get(const rt_os_thread *t, rt_os_cpuset *s)
{
    GROUP_AFFINITY ga;
    if (!GetThreadGroupAffinity(thread_of(t), &ga))
        return -1;
    memset(s, 0, sizeof *s);
    if ((int)ga.Group < RT_OS_CPUSET_BITS / 64)
        s->bits[ga.Group] = (uint64_t)ga.Mask;
    return 0;
}

int rt_os_affinity_set(const rt_os_thread *t, const rt_os_cpuset *s)
{
    GROUP_AFFINITY ga;
    HANDLE h = thread_of(t);
    int group = -1;
    /* A thread runs in one processor group: a set spanning two is refused. */
    for (int i = 0; i < RT_OS_CPUSET_BITS / 64; i++)
        if (s->bits[i]) {
            if (group >= 0)
                return -1;
            group = i;
        }
    if (group < 0 || !GetThreadGroupAffinity(h, &ga))
        return -1;
    ga.Group = (WORD)group;
    ga.Mask = (KAFFINITY)s->bits[group];
    return SetThreadGroupAffinity(h, &ga, NULL) ? 0 : -1;
}

int rt_os_affinity_process(rt_os_cpuset *s)
{
    DWORD_PTR proc = 0, sys = 0;
    if (!GetProcessAffinityMask(GetCurrentProcess(), &proc, &sys))
        return -1;
    from_mask((uint64_t)proc, s);
    return 0;
}
