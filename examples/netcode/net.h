/*
 * net.h - the netcode example's state (examples/netcode): what the frame
 * graph's tasks read and write. The sender's fields are written by
 * simulate and send only, the receiver's by receive only; tally, after
 * both, reads them. Frames run one at a time (net_run), so a task's own
 * state is never touched by two frames at once. No socket headers here
 * (the e2e checker compiles this header on every system): the addresses
 * are kept as opaque bytes (net.c).
 */
#ifndef NET_H
#define NET_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define NET_ENTITIES   16
#define NET_WIRE_BYTES (8 + NET_ENTITIES * 16)   /* magic, seq, then x, z, vx, vz each */

/* The absolute state on the wire: everything the receiver needs. */
struct net_state {
    uint32_t seq;
    int32_t pos[NET_ENTITIES][2], vel[NET_ENTITIES][2];
};

struct net {
    dagrt *rt;
    dagrt_handle tx_sock, rx_sock;
    uint64_t tx_addr[2], rx_addr[2];   /* struct sockaddr_in of each socket */
    uint32_t drop_every;               /* 0: none, else drop seq % drop_every == 0 */
    uint64_t window_ns;                /* how long receive waits for the frame's datagram */
    bool shutdown;                     /* set by main between frames: the last frame */
    /* sender (simulate, send) */
    struct net_state tx;
    uint64_t tx_sent, tx_dropped, tx_errors;
    /* The last sequence number sent, with bit 32 set, stored by send in the
     * shutdown frame (main waits for it). */
    _Atomic uint64_t tx_final;
    unsigned char tx_buf[NET_WIRE_BYTES];
    /* receiver (receive) */
    uint32_t rx_frame;
    struct net_state rx;
    uint64_t rx_received, rx_gaps, rx_out_of_order, rx_malformed, rx_errors, rx_windows_empty;
    /* In the shutdown frame: the newest sequence number, with bit 32 set,
     * stored right before each receive that waits for traffic. */
    _Atomic uint64_t rx_armed;
    dagrt_cancel rx_cancel;            /* the shutdown's receive waits on it */
    int64_t rx_last;                   /* what the shutdown's last receive returned */
    uint64_t rx_cancel_wait_ns;        /* how long that receive was parked */
    unsigned char rx_buf[512];
    /* tally */
    uint64_t frames, in_step;
};

/* The sender's start state (the receiver starts from nothing, seq 0). */
void net_init(struct net *n, dagrt *rt);

#endif
