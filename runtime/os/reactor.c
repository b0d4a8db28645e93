/*
 * reactor.c - which reactor starts (reactor.h): the system's own where it
 * has one that the kernel accepts, else the portable fallback. The one
 * place outside a system's files that asks which system this is.
 */
#include "reactor.h"

#include "dagrt.h"

rt_reactor *rt_os_reactor_make(bool fallback, unsigned entries, unsigned nslots, int *err,
                               int *os_err)
{
    rt_reactor *r = NULL;
    *os_err = 0;
#if defined(_WIN32)
    (void)nslots;
    r = fallback ? rt_reactor_iocp_lane_create(entries, err) : rt_reactor_iocp_create(entries, err);
#else
#  if defined(DAGRT_HAVE_URING)
    if (!fallback)
        r = rt_reactor_uring_create(entries, nslots, err);
#  else
    (void)fallback;
    (void)nslots;
#  endif
    if (!r)
        r = rt_reactor_epoll_create(entries, err, os_err);
#endif
    return r;
}
