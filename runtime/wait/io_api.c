/*
 * wait/io_api.c - the public I/O calls of "waiting on the world" (design/io.md):
 * each fills an op record and makes the one call of wait/io.c (rt_io_call);
 * and the I/O statistics, summed from the threads' own lines.
 */
#include <string.h>

#include "../core/core.h"   /* first: the runtime's view of dagrt.h */
#include "io.h"

/* Linux moves at most this much in one read or write (MAX_RW_COUNT). */
#define IO_MAX_BYTES ((size_t)0x7ffff000)

int64_t dagrt_read(dagrt *rt, dagrt_handle h, void *buf, size_t n, int64_t offset, dagrt_cancel *c)
{
    if (!buf && n)
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_READ, h);
    op.buf = buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.off = offset < 0 ? -1 : offset;
    return rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
}

int64_t dagrt_write(dagrt *rt, dagrt_handle h, const void *buf, size_t n, int64_t offset, dagrt_cancel *c)
{
    if (!buf && n)
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_WRITE, h);
    op.buf = (void *)(uintptr_t)buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.off = offset < 0 ? -1 : offset;
    return rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
}

int64_t dagrt_recvfrom(dagrt *rt, dagrt_handle s, void *buf, size_t n,
                       struct sockaddr *from, size_t *fromlen, dagrt_cancel *c)
{
    if ((!buf && n) || (from && !fromlen))
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_RECVFROM, s);
    op.buf = buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.addr = from;
    op.addrlen = from ? *fromlen : 0;
    int64_t r = rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
    if (r >= 0 && from)
        *fromlen = out.addrlen;
    return r;
}

int64_t dagrt_sendto(dagrt *rt, dagrt_handle s, const void *buf, size_t n,
                     const struct sockaddr *to, size_t tolen, dagrt_cancel *c)
{
    if ((!buf && n) || (to && tolen == 0))
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_SENDTO, s);
    op.buf = (void *)(uintptr_t)buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.addr = (void *)(uintptr_t)to;
    op.addrlen = to ? tolen : 0;
    return rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
}

int dagrt_accept(dagrt *rt, dagrt_handle s, dagrt_handle *outh, dagrt_cancel *c)
{
    if (!outh)
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_ACCEPT, s);
    int64_t r = rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
    if (r < 0)
        return (int)r;
    *outh = (dagrt_handle)r;
    return 0;
}

int dagrt_connect(dagrt *rt, dagrt_handle s, const struct sockaddr *to, size_t tolen, dagrt_cancel *c)
{
    if (!to || tolen == 0)
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_CONNECT, s);
    op.addr = (void *)(uintptr_t)to;
    op.addrlen = tolen;
    int64_t r = rt_io_call(rt, &op, DAGRT_FOREVER, c, &out);
    return r < 0 ? (int)r : 0;
}

int dagrt_poll(dagrt *rt, dagrt_handle h, unsigned events, uint64_t deadline_ns, dagrt_cancel *c)
{
    if (events & ~(unsigned)(DAGRT_POLL_IN | DAGRT_POLL_OUT | DAGRT_POLL_ERR))
        return rt_error_set(DAGRT_EINVAL, 0);   /* dagrt.h: dagrt_last_os_error */
    rt_io_op op, out;
    rt_io_op_clear(&op, RT_IO_POLL, h);
    op.events = events;
    int64_t r = rt_io_call(rt, &op, deadline_ns, c, &out);
    return (int)r;
}

/* The asynchronous forms (dagrt.h, dagrt_*_async): the same op records,
 * through rt_io_call_async. */

int64_t dagrt_read_async(dagrt *rt, dagrt_async *a, dagrt_handle h, void *buf, size_t n,
                         int64_t offset, dagrt_cancel *c)
{
    if (!buf && n)
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_READ, h);
    op.buf = buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.off = offset < 0 ? -1 : offset;
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, NULL, NULL);
}

int64_t dagrt_write_async(dagrt *rt, dagrt_async *a, dagrt_handle h, const void *buf, size_t n,
                          int64_t offset, dagrt_cancel *c)
{
    if (!buf && n)
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_WRITE, h);
    op.buf = (void *)(uintptr_t)buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.off = offset < 0 ? -1 : offset;
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, NULL, NULL);
}

int64_t dagrt_recvfrom_async(dagrt *rt, dagrt_async *a, dagrt_handle s, void *buf, size_t n,
                             struct sockaddr *from, size_t *fromlen, dagrt_cancel *c)
{
    if ((!buf && n) || (from && !fromlen))
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_RECVFROM, s);
    op.buf = buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.addr = from;
    op.addrlen = from ? *fromlen : 0;
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, from ? fromlen : NULL, NULL);
}

int64_t dagrt_sendto_async(dagrt *rt, dagrt_async *a, dagrt_handle s, const void *buf, size_t n,
                           const struct sockaddr *to, size_t tolen, dagrt_cancel *c)
{
    if ((!buf && n) || (to && tolen == 0))
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_SENDTO, s);
    op.buf = (void *)(uintptr_t)buf;
    op.n = n > IO_MAX_BYTES ? IO_MAX_BYTES : n;
    op.addr = (void *)(uintptr_t)to;
    op.addrlen = to ? tolen : 0;
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, NULL, NULL);
}

int64_t dagrt_accept_async(dagrt *rt, dagrt_async *a, dagrt_handle s, dagrt_handle *outh,
                           dagrt_cancel *c)
{
    if (!outh)
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_ACCEPT, s);
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, NULL, outh);
}

int64_t dagrt_connect_async(dagrt *rt, dagrt_async *a, dagrt_handle s, const struct sockaddr *to,
                            size_t tolen, dagrt_cancel *c)
{
    if (!to || tolen == 0)
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_CONNECT, s);
    op.addr = (void *)(uintptr_t)to;
    op.addrlen = tolen;
    return rt_io_call_async(rt, a, &op, DAGRT_FOREVER, c, NULL, NULL);
}

int64_t dagrt_poll_async(dagrt *rt, dagrt_async *a, dagrt_handle h, unsigned events,
                         uint64_t deadline_ns, dagrt_cancel *c)
{
    if (events & ~(unsigned)(DAGRT_POLL_IN | DAGRT_POLL_OUT | DAGRT_POLL_ERR))
        return rt_error_set(DAGRT_EINVAL, 0);
    rt_io_op op;
    rt_io_op_clear(&op, RT_IO_POLL, h);
    op.events = events;
    return rt_io_call_async(rt, a, &op, deadline_ns, c, NULL, NULL);
}

int dagrt_get_io_stats(const dagrt *rt, dagrt_io_stats *out)
{
    if (!rt || !out)
        return DAGRT_EINVAL;
    memset(out, 0, sizeof *out);
    rt_io *io = io_of(rt);
    /* relaxed: statistics (see kstat). */
    out->priority_refused = atomic_load_explicit(&((dagrt *)(uintptr_t)rt)->prio_refused, memory_order_relaxed);
    out->reactor = io ? io->kind : "none";
    if (!io)
        return 0;
    /* relaxed: a statistic. */
    out->submits = atomic_load_explicit(&io->r->submits, memory_order_relaxed);
    for (int k = 0; k < RT_IO_KINDS; k++) {
        /* relaxed: statistics (see kstat); the sum of the threads' lines
         * (count), each exact, the set not one snapshot. */
        out->kind[k].errors = atomic_load_explicit(&io->errors[k], memory_order_relaxed);
        for (int i = 0; i < rt->nctx; i++) {
            const rt_tstats *t = &rt->ctx[i].stats;
            out->kind[k].ops += atomic_load_explicit(&t->io_ops[k], memory_order_relaxed);
            out->kind[k].bytes += atomic_load_explicit(&t->io_bytes[k], memory_order_relaxed);
            out->kind[k].timeouts += atomic_load_explicit(&t->io_timeouts[k], memory_order_relaxed);
            out->kind[k].cancels += atomic_load_explicit(&t->io_cancels[k], memory_order_relaxed);
        }
    }
    return 0;
}
