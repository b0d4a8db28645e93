/*
 * os/reactor_win32.h - what the two Windows reactors share (internal): the
 * completion port (reactor_iocp.c) and the blocking lane
 * (reactor_lane_win32.c), which the port hands what it cannot take.
 */
#ifndef DAGRT_OS_REACTOR_WIN32_H
#define DAGRT_OS_REACTOR_WIN32_H

#include <stdint.h>

#include "reactor.h"

/* rt_io_op.rflags. */
#define RF_CANCEL 1u   /* rt_reactor_cancel asked */
#define RF_PORT   2u   /* issued on the port (else: the lane's) */
#define RF_SOCK   4u   /* the handle is a socket */

/* rt_io_op.rwhere: where a lane op is (the port's are W_NONE). */
enum { W_NONE = 0, W_QUEUED, W_RUNNING };

/* The handle's mode: 1 opened for overlapped I/O, 0 not, -1 unknown (the
 * call then reports the handle's error). In reactor_lane_win32.c. */
int rt_win_handle_overlapped(intptr_t h);

#endif
