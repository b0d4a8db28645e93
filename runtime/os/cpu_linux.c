/*
 * cpu_linux.c - the CPUs on Linux (os.h, "CPUs"): how many the process may
 * use (its affinity mask, capped by the cgroup v2 CPU quota), their
 * topology from sysfs (SMT siblings, hybrid classes), the current one, and
 * affinity masks. Out of os_linux.c, a room of its own.
 */
#define _GNU_SOURCE
#include "os.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --------------------------------------------------------------- CPUs */

#if defined(__linux__)
/* DAGRT_SYSFS_ROOT, for tests: a directory that stands in for "/". */
static const char *sys_root(void)
{
    const char *root = getenv("DAGRT_SYSFS_ROOT");
    return root ? root : "";
}

/* The first line of ROOT/rel (formatted), without its newline; false when
 * there is no such file. */
static bool read_line(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool read_line(char *buf, size_t n, const char *fmt, ...)
{
    char path[4096];
    int k = snprintf(path, sizeof path, "%s", sys_root());
    if (k < 0 || (size_t)k >= sizeof path)
        return false;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path + k, sizeof path - (size_t)k, fmt, ap);
    va_end(ap);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

/* A kernel CPU list ("0-3,8,10-11") into s; the CPUs in it (those beyond
 * RT_OS_CPUSET_BITS are not kept), or -1 for text that is not one. */
static int parse_list(const char *p, rt_os_cpuset *s)
{
    memset(s, 0, sizeof *s);
    int n = 0;
    while (*p == ' ' || *p == '\t')
        p++;
    if (!*p)
        return 0;
    for (;;) {
        char *end;
        long a = strtol(p, &end, 10), b;
        if (end == p || a < 0)
            return -1;
        p = end;
        b = a;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a)
                return -1;
            p = end;
        }
        for (long i = a; i <= b && i < RT_OS_CPUSET_BITS; i++)
            if (!rt_os_cpuset_has(s, (int)i)) {
                rt_os_cpuset_add(s, (int)i);
                n++;
            }
        if (*p == ',') {
            p++;
            continue;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        return *p ? -1 : n;
    }
}

/* A fake tree's allowed CPUs (its proc/self/status "Cpus_allowed_list:"
 * line): their count, or -1 where there is no fake tree or no such line. */
static int fake_allowed(rt_os_cpuset *s)
{
    if (!*sys_root())
        return -1;
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/proc/self/status", sys_root());
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int n = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            line[strcspn(line, "\n")] = 0;
            n = parse_list(line + 18, s);
            break;
        }
    fclose(f);
    return n;
}

/* CPUs in the calling thread's affinity mask (what taskset, a cpuset
 * cgroup or the creator's own pinning leave it), or 0 where unknown. The
 * kernel refuses a mask smaller than its own (EINVAL): grow until it fits. */
static int affinity_count(void)
{
    for (int ncpu = 1024; ncpu <= (1 << 20); ncpu *= 2) {
        cpu_set_t *m = CPU_ALLOC(ncpu);
        if (!m)
            return 0;
        size_t sz = CPU_ALLOC_SIZE(ncpu);
        CPU_ZERO_S(sz, m);
        if (sched_getaffinity(0, sz, m) == 0) {
            int n = CPU_COUNT_S(sz, m);
            CPU_FREE(m);
            return n;
        }
        int e = errno;
        CPU_FREE(m);
        if (e != EINVAL)
            return 0;
    }
    return 0;
}

/* The whole CPUs a cgroup v2 "cpu.max" file allows ("QUOTA PERIOD",
 * microseconds; quota/period rounded down, at least 1), or 0: no limit
 * ("max"), no file, or a line we cannot read. */
static int cpu_max_file(const char *path)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    char line[128];
    int n = 0;
    if (fgets(line, sizeof line, f)) {
        char *end;
        errno = 0;
        long long quota = strtoll(line, &end, 10);
        if (end != line && errno == 0 && quota > 0) {
            char *p2 = end;
            long long period = strtoll(p2, &end, 10);
            if (end != p2 && errno == 0 && period > 0) {
                long long q = quota / period;
                n = q < 1 ? 1 : q > INT32_MAX ? INT32_MAX : (int)q;
            }
        }
    }
    fclose(f);
    return n;
}

/* The CPU quota of the process's cgroup v2 (its "0::PATH" line in
 * /proc/self/cgroup): the smallest cpu.max limit on the way from its
 * cgroup up to the hierarchy's root (a parent's quota bounds its
 * children), or 0 when none applies. DAGRT_SYSFS_ROOT, for tests, names a
 * directory that stands in for "/" in both paths. */
static int cgroup_cpus(void)
{
    const char *root = sys_root();
    char path[8192], line[2048], cg[2048] = "";
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = 0;
            memcpy(cg, line + 3, strlen(line + 3) + 1);
            break;
        }
    }
    fclose(f);
    if (cg[0] != '/')
        return 0;   /* no cgroup v2 line: a v1-only system */
    int best = 0;
    for (;;) {
        size_t len = strlen(cg);
        while (len > 1 && cg[len - 1] == '/')
            cg[--len] = 0;
        snprintf(path, sizeof path, "%s/sys/fs/cgroup%s/cpu.max", root, len == 1 ? "" : cg);
        int q = cpu_max_file(path);
        if (q > 0 && (best == 0 || q < best))
            best = q;
        if (len == 1)
            break;
        char *slash = strrchr(cg, '/');
        if (slash == cg)
            cg[1] = 0;
        else
            *slash = 0;
    }
    return best;
}
#endif

int rt_os_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
#if defined(__linux__)
    rt_os_cpuset fake;
    int mask = fake_allowed(&fake);
    if (mask <= 0)
        mask = affinity_count();
    if (mask > 0)
        n = mask;
    int quota = cgroup_cpus();
    if (quota > 0 && quota < n)
        n = quota;
#endif
    return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int)n;
}

int rt_os_topology(rt_os_cpu_info *out, int n, int *quota)
{
#if defined(__linux__)
    rt_os_cpuset allowed, atom, sib;
    *quota = 0;
    if (fake_allowed(&allowed) <= 0) {
        cpu_set_t m;
        if (sched_getaffinity(0, sizeof m, &m) != 0)
            return -1;
        memset(&allowed, 0, sizeof allowed);
        for (int i = 0; i < RT_OS_CPUSET_BITS && i < CPU_SETSIZE; i++)
            if (CPU_ISSET(i, &m))
                rt_os_cpuset_add(&allowed, i);
    }
    *quota = cgroup_cpus();
    char line[4096];
    /* Intel's hybrid parts list their cores under two PMUs. */
    bool hybrid = read_line(line, sizeof line, "/sys/devices/cpu_atom/cpus") &&
                  parse_list(line, &atom) > 0;
    int k = 0;
    for (int cpu = 0; cpu < RT_OS_CPUSET_BITS && k < n; cpu++) {
        if (!rt_os_cpuset_has(&allowed, cpu))
            continue;
        rt_os_cpu_info *r = &out[k++];
        r->cpu = cpu;
        r->core = cpu;
        r->group = 0;
        r->rank = 0;
        if (read_line(line, sizeof line, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu) &&
            parse_list(line, &sib) > 0)
            for (int j = 0; j < RT_OS_CPUSET_BITS; j++)
                if (rt_os_cpuset_has(&sib, j)) {
                    r->core = j < cpu ? j : cpu;
                    break;
                }
        if (hybrid)
            r->rank = rt_os_cpuset_has(&atom, cpu) ? 0 : 1;
        else if (read_line(line, sizeof line, "/sys/devices/system/cpu/cpu%d/cpu_capacity", cpu))
            r->rank = atoi(line);   /* ARM's big.LITTLE: 1024 the biggest */
    }
    if (k == 0)
        return -1;
    rt_os_topology_finish(out, k);
    return k;
#else
    (void)out;
    (void)n;
    *quota = 0;
    return -1;
#endif
}

int rt_os_cpu_current(void)
{
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
}

#if defined(__linux__)
static void from_native(const cpu_set_t *m, rt_os_cpuset *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < RT_OS_CPUSET_BITS && i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, m))
            rt_os_cpuset_add(s, i);
}

static void to_native(const rt_os_cpuset *s, cpu_set_t *m)
{
    CPU_ZERO(m);
    for (int i = 0; i < RT_OS_CPUSET_BITS && i < CPU_SETSIZE; i++)
        if (rt_os_cpuset_has(s, i))
            CPU_SET(i, m);
}

static pthread_t thread_of(const rt_os_thread *t)
{
    return t ? (pthread_t)t->h : pthread_self();
}
#endif

int rt_os_affinity_get(const rt_os_thread *t, rt_os_cpuset *s)
{
#if defined(__linux__)
    cpu_set_t m;
    if (pthread_getaffinity_np(thread_of(t), sizeof m, &m) != 0)
        return -1;
    from_native(&m, s);
    return 0;
#else
    (void)t;
    (void)s;
    return -1;
#endif
}

int rt_os_affinity_set(const rt_os_thread *t, const rt_os_cpuset *s)
{
#if defined(__linux__)
    cpu_set_t m;
    to_native(s, &m);
    return pthread_setaffinity_np(thread_of(t), sizeof m, &m) == 0 ? 0 : -1;
#else
    (void)t;
    (void)s;
    return -1;
#endif
}

int rt_os_affinity_process(rt_os_cpuset *s)
{
#if defined(__linux__)
    /* The process's mask is the main thread's (pid), whatever the calling
     * thread was given. */
    cpu_set_t m;
    if (sched_getaffinity(getpid(), sizeof m, &m) != 0)
        return -1;
    from_native(&m, s);
    return 0;
#else
    (void)s;
    return -1;
#endif
}
