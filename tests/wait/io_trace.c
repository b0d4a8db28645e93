/* io_trace.c - the I/O waits in the trace and in dagrt_get_stats, the same
 * on every system (wait_list.h: io_trace, and io_trace_fb on the fallback):
 * a write, a read, a poll that times out on a quiet datagram socket and a
 * read cancelled before it starts, from a fiber; then an asynchronous poll
 * (dagrt_poll_async, as a coroutine's co::poll) and write, whose spans the
 * trace records too. */
#define _GNU_SOURCE
#include "io_ops.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* An asynchronous call's end. */
typedef struct trace_async {
    _Atomic int done;
    int64_t result;
} trace_async;

static void trace_async_end(void *arg, int64_t r)
{
    trace_async *t = arg;
    t->result = r;
    atomic_store(&t->done, 1);   /* seq_cst: result is the waiter's after it */
}

/* ------------------------------------------------------------- the trace */

typedef struct trace_job {
    dagrt *rt;
    io_file fd;
    io_sock quiet;   /* a datagram socket nobody sends to: the poll times out */
    int bad;
} trace_job;

static void trace_fiber(void *arg)
{
    trace_job *j = arg;
    int bad = 0;
    char buf[4096];
    memset(buf, 'q', sizeof buf);
    EXPECT(dagrt_write(j->rt, H(j->fd), buf, sizeof buf, 0, NULL) == 4096);
    EXPECT(dagrt_read(j->rt, H(j->fd), buf, sizeof buf, 0, NULL) == 4096);
    EXPECT(dagrt_poll(j->rt, H(j->quiet), DAGRT_POLL_IN, dagrt_now_ns() + 2000000, NULL) == DAGRT_ETIMEDOUT);
    dagrt_cancel c;
    dagrt_cancel_init(&c, NULL);
    dagrt_cancel_request(&c);
    EXPECT(dagrt_read(j->rt, H(j->fd), buf, sizeof buf, 0, &c) == DAGRT_ECANCELED);
    j->bad = bad;
}

/* The ts (us) of the trace event that starts with head and has the given
 * id ("" : any, and *id gets it); -1 when there is none. */
static double slice_ts(const char *text, const char *head, char *id, size_t idn)
{
    for (const char *at = strstr(text, head); at; at = strstr(at + 1, head)) {
        const char *ip = strstr(at, "\"id\":\"");
        const char *tp = strstr(at, "\"ts\":");
        const char *end = strchr(at, '}');
        if (!ip || !tp || !end || ip > end || tp > end)
            continue;
        ip += 6;
        const char *iq = strchr(ip, '"');
        if (!iq)
            continue;
        if (*id && (strlen(id) != (size_t)(iq - ip) || strncmp(id, ip, (size_t)(iq - ip)) != 0))
            continue;
        if (!*id && (size_t)(iq - ip) < idn) {
            memcpy(id, ip, (size_t)(iq - ip));
            id[iq - ip] = 0;
        }
        return strtod(tp + 5, NULL);
    }
    return -1;
}

/* Each I/O call is in the trace: the operation, the handle, the bytes and
 * the result, on the thread it returned on; and in dagrt_get_stats. */
static int trace(bool fallback)
{
    int bad = 0;
    if (make_tmpdir() != 0)
        FAIL("temporary directory: %s", io_os_why());
    static unsigned char zero[4096];
    bool ok;
    trace_job j = { 0 };
    j.fd = tmp_file_with("t", zero, sizeof zero, &ok);
    struct sockaddr_in a;
    j.quiet = udp_socket(&a);
    dagrt *rt = make_rt(fallback, 1);
    if (!rt || !ok || j.quiet == IO_SOCK_BAD)
        FAIL("setup: %s", io_os_why());
    j.rt = rt;
    EXPECT(dagrt_trace_start(rt, NULL) == 0);
    dagrt_group g;
    dagrt_group_init(&g);
    EXPECT(dagrt_spawn_ex(rt, &g, trace_fiber, &j, DAGRT_SPAWN_FIBER) == 0);
    EXPECT(dagrt_group_wait(rt, &g) == 0);
    bad += j.bad;
    /* The counts per kind in dagrt_get_stats, summed over the threads (a
     * fiber may return on any); the cancelled read never reached the
     * reactor: a cancellation, not an operation. */
    dagrt_thread_stats ts[8];
    int nt = dagrt_get_stats(rt, ts, 8);
    EXPECT(nt >= 2 && nt <= 8);
    dagrt_thread_stats sum;
    memset(&sum, 0, sizeof sum);
    for (int i = 0; i < nt && i < 8; i++)
        for (int k = 0; k < DAGRT_IO_KINDS; k++) {
            sum.io_ops[k] += ts[i].io_ops[k];
            sum.io_bytes[k] += ts[i].io_bytes[k];
            sum.io_timeouts[k] += ts[i].io_timeouts[k];
            sum.io_cancels[k] += ts[i].io_cancels[k];
        }
    EXPECT(sum.io_ops[DAGRT_IO_WRITE] == 1 && sum.io_bytes[DAGRT_IO_WRITE] == 4096);
    EXPECT(sum.io_ops[DAGRT_IO_READ] == 1 && sum.io_bytes[DAGRT_IO_READ] == 4096);
    EXPECT(sum.io_cancels[DAGRT_IO_READ] == 1 && sum.io_timeouts[DAGRT_IO_READ] == 0);
    EXPECT(sum.io_ops[DAGRT_IO_POLL] == 1 && sum.io_timeouts[DAGRT_IO_POLL] == 1);
    EXPECT(sum.io_bytes[DAGRT_IO_POLL] == 0 && sum.io_cancels[DAGRT_IO_POLL] == 0);
    EXPECT(sum.io_ops[DAGRT_IO_RECVFROM] == 0 && sum.io_ops[DAGRT_IO_ACCEPT] == 0);
    dagrt_io_stats is;
    EXPECT(dagrt_get_io_stats(rt, &is) == 0);
    EXPECT(is.kind[DAGRT_IO_READ].ops == 1 && is.kind[DAGRT_IO_READ].cancels == 1);
    EXPECT(is.kind[DAGRT_IO_POLL].timeouts == 1);
    /* The asynchronous forms, from the main thread: a poll that waits
     * (pending, 20 ms: a deadline that had passed before the call armed
     * it would end it at once, as a 3 ms one did once under Wine) and a
     * write; each a span as the blocking calls'. */
    trace_async ta = {0, 0};
    dagrt_async rec;
    dagrt_async_init(&rec, trace_async_end, &ta, 0);
    EXPECT(dagrt_poll_async(rt, &rec, H(j.quiet), DAGRT_POLL_IN, dagrt_now_ns() + 20000000, NULL) ==
           DAGRT_PENDING);
    while (!atomic_load(&ta.done))
        (void)dagrt_sleep(rt, 200000, NULL);   /* helps: the end may be queued here */
    EXPECT(ta.result == DAGRT_ETIMEDOUT);
    static char wbuf[512];
    memset(wbuf, 'w', sizeof wbuf);
    atomic_store(&ta.done, 0);
    dagrt_async_init(&rec, trace_async_end, &ta, 0);
    int64_t wr = dagrt_write_async(rt, &rec, H(j.fd), wbuf, sizeof wbuf, 0, NULL);
    if (wr == DAGRT_PENDING) {
        while (!atomic_load(&ta.done))
            (void)dagrt_sleep(rt, 200000, NULL);
        wr = ta.result;
    }
    EXPECT(wr == 512);
    EXPECT(dagrt_trace_stop(rt) == 0);
    char path[600];
    snprintf(path, sizeof path, "%s", tmp_path("trace.json"));
    EXPECT(dagrt_trace_write(rt, path) == 0);
    dagrt_destroy(rt);
    static char text[1 << 20];   /* the waits' idle and wake events too */
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f)
        fclose(f);
    text[n] = 0;
    char want[160];
    snprintf(want, sizeof want, "\"handle\":%lld,\"bytes\":4096,\"result\":4096", (long long)H(j.fd));
    EXPECT(strstr(text, "\"name\":\"io read\"") != NULL);
    EXPECT(strstr(text, "\"name\":\"io write\"") != NULL);
    EXPECT(strstr(text, want) != NULL);
    snprintf(want, sizeof want, "\"handle\":%lld,\"bytes\":0,\"result\":%d", (long long)H(j.quiet),
             DAGRT_ETIMEDOUT);
    EXPECT(strstr(text, "\"name\":\"io poll\"") != NULL && strstr(text, want) != NULL);
    /* Each wait is a slice: a begin and an end of one id, the poll's as
     * long as its wait (its deadline was 2 ms after it started). */
    char id[64] = "";
    double b = slice_ts(text, "{\"ph\":\"b\",\"name\":\"io poll\"", id, sizeof id);
    double e = *id ? slice_ts(text, "{\"ph\":\"e\",\"name\":\"io poll\"", id, sizeof id) : -1;
    EXPECT(b >= 0 && e >= 0);
    EXPECT(e - b >= 1500.0);
    /* The asynchronous poll's slice: a second one, as long as its wait. */
    int npoll = 0, nlong = 0;
    for (const char *at = strstr(text, "{\"ph\":\"b\",\"name\":\"io poll\""); at;
         at = strstr(at + 1, "{\"ph\":\"b\",\"name\":\"io poll\"")) {
        id[0] = 0;
        b = slice_ts(at, "{\"ph\":\"b\",\"name\":\"io poll\"", id, sizeof id);
        e = *id ? slice_ts(text, "{\"ph\":\"e\",\"name\":\"io poll\"", id, sizeof id) : -1;
        npoll++;
        nlong += b >= 0 && e - b >= 1500.0;
    }
    EXPECT(npoll == 2 && nlong == 2);
    snprintf(want, sizeof want, "\"handle\":%lld,\"bytes\":512,\"result\":512", (long long)H(j.fd));
    EXPECT(strstr(text, want) != NULL);   /* the asynchronous write */
    id[0] = 0;
    b = slice_ts(text, "{\"ph\":\"b\",\"name\":\"io read\"", id, sizeof id);
    e = *id ? slice_ts(text, "{\"ph\":\"e\",\"name\":\"io read\"", id, sizeof id) : -1;
    EXPECT(b >= 0 && e >= b);
    if (bad)
        fprintf(stderr, "trace: %.2000s\n", text);
    io_file_close(j.fd);
    io_sock_close(j.quiet);
    remove(path);
    rm_tmpdir("t");
    return bad;
}

int io_trace(void) { return trace(false); }
int io_trace_fb(void) { return trace(true); }
