/*
 * net.c - the netcode example's tasks (the functions netcode.dag's
 * generated header asks for): the sender simulates and sends its whole
 * state with a sequence number, the receiver keeps the newest state it
 * got. A drop costs the receiver one frame behind, never a wrong state:
 * the next datagram carries everything again.
 */
#define _POSIX_C_SOURCE 200809L
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "netcode.h"

_Static_assert(sizeof(struct sockaddr_in) <= sizeof(((struct net *)0)->tx_addr), "address room");

void net_init(struct net *n, dagrt *rt)
{
    memset(n, 0, sizeof *n);
    n->rt = rt;
    n->tx_sock = n->rx_sock = -1;
    for (uint32_t i = 0; i < NET_ENTITIES; i++) {
        n->tx.pos[i][0] = (int32_t)(i * 7919u % 2000u) * 10 - 10000;
        n->tx.pos[i][1] = (int32_t)(i * 104729u % 2000u) * 10 - 10000;
        n->tx.vel[i][0] = (int32_t)(i % 5) * 13 - 26;
        n->tx.vel[i][1] = (int32_t)(i % 7) * 11 - 33;
    }
    dagrt_cancel_init(&n->rx_cancel, NULL);
}

static void put32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16); p[3] = (unsigned char)(v >> 24);
}

static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const unsigned char magic[4] = {'D', 'N', 'E', 'T'};

/* The wire: "DNET", seq, then each entity's x, z, vx, vz, little-endian. */
static void encode(const struct net_state *s, unsigned char *out)
{
    memcpy(out, magic, 4);
    put32(out + 4, s->seq);
    for (uint32_t i = 0; i < NET_ENTITIES; i++) {
        unsigned char *e = out + 8 + i * 16;
        put32(e, (uint32_t)s->pos[i][0]);
        put32(e + 4, (uint32_t)s->pos[i][1]);
        put32(e + 8, (uint32_t)s->vel[i][0]);
        put32(e + 12, (uint32_t)s->vel[i][1]);
    }
}

static int decode(const unsigned char *in, int64_t len, struct net_state *s)
{
    if (len != NET_WIRE_BYTES || memcmp(in, magic, 4) != 0)
        return -1;
    s->seq = get32(in + 4);
    for (uint32_t i = 0; i < NET_ENTITIES; i++) {
        const unsigned char *e = in + 8 + i * 16;
        s->pos[i][0] = (int32_t)get32(e);
        s->pos[i][1] = (int32_t)get32(e + 4);
        s->vel[i][0] = (int32_t)get32(e + 8);
        s->vel[i][1] = (int32_t)get32(e + 12);
    }
    return 0;
}

/* simulate: every entity moves one step and bounces off the arena's edge
 * (integers: the receiver's copy compares exactly). Not in the shutdown
 * frame: the world has stopped. */
void net_simulate(struct net *n)
{
    if (n->shutdown)
        return;
    for (uint32_t i = 0; i < NET_ENTITIES; i++)
        for (int k = 0; k < 2; k++) {
            int32_t p = n->tx.pos[i][k] + n->tx.vel[i][k];
            if (p > 10000 || p < -10000) {
                n->tx.vel[i][k] = -n->tx.vel[i][k];
                p = n->tx.pos[i][k] + n->tx.vel[i][k];
            }
            n->tx.pos[i][k] = p;
        }
}

/* send (a fiber): the whole state with the next sequence number, unless
 * the loss injection drops it. In the shutdown frame this is the sender's
 * last word: the stopped world's state once more, so the receiver gets the
 * last state even when the frame's datagram before was dropped (two in a
 * row are never dropped: --drop is 0 or at least 2). */
void net_send(struct net *n)
{
    struct net_state *s = &n->tx;
    s->seq++;
    if (n->drop_every && s->seq % n->drop_every == 0) {
        n->tx_dropped++;
    } else {
        encode(s, n->tx_buf);
        int64_t r = dagrt_sendto(n->rt, n->tx_sock, n->tx_buf, sizeof n->tx_buf,
                                 (const struct sockaddr *)n->rx_addr, sizeof(struct sockaddr_in), NULL);
        if (r == (int64_t)sizeof n->tx_buf)
            n->tx_sent++;
        else
            n->tx_errors++;
    }
    if (n->shutdown) {
        uint32_t last = s->seq - (n->drop_every && s->seq % n->drop_every == 0);
        /* release: main, which loads it with acquire, sees the counts above. */
        atomic_store_explicit(&n->tx_final, (uint64_t)1 << 32 | last, memory_order_release);
    }
}

/* The receiver keeps the newest state; an older one is out of order. */
static void take(struct net *n, int64_t got, const struct sockaddr_in *from, size_t fromlen)
{
    const struct sockaddr_in *tx = (const struct sockaddr_in *)n->tx_addr;
    struct net_state st;
    if (fromlen != sizeof *from || from->sin_port != tx->sin_port ||
        from->sin_addr.s_addr != tx->sin_addr.s_addr || decode(n->rx_buf, got, &st) != 0) {
        n->rx_malformed++;
        return;
    }
    n->rx_received++;
    if (st.seq <= n->rx.seq) {
        n->rx_out_of_order++;
        return;
    }
    n->rx_gaps += st.seq - n->rx.seq - 1;
    n->rx = st;
}

static int64_t receive_one(struct net *n, dagrt_cancel *c)
{
    struct sockaddr_in from;
    size_t fl = sizeof from;
    int64_t got = dagrt_recvfrom(n->rt, n->rx_sock, n->rx_buf, sizeof n->rx_buf,
                                 (struct sockaddr *)&from, &fl, c);
    if (got >= 0)
        take(n, got, &from, fl);
    return got;
}

/* receive (a fiber): waits up to the window for this frame's datagram
 * (sequence number = frame number), parked in the reactor; a late one is
 * taken by the next frame. In the shutdown frame it receives until its
 * scope is cancelled: main cancels it once the last word arrived, while it
 * waits with no traffic. */
void net_receive(struct net *n)
{
    uint32_t want = ++n->rx_frame;
    if (n->shutdown) {
        for (;;) {
            /* release: main's acquire load sees the state taken so far. */
            atomic_store_explicit(&n->rx_armed, (uint64_t)1 << 32 | n->rx.seq, memory_order_release);
            uint64_t t0 = dagrt_now_ns();
            int64_t r = receive_one(n, &n->rx_cancel);
            if (r < 0) {
                n->rx_last = r;
                n->rx_cancel_wait_ns = dagrt_now_ns() - t0;
                return;
            }
        }
    }
    uint64_t deadline = dagrt_now_ns() + n->window_ns;
    while (n->rx.seq < want) {
        int p = dagrt_poll(n->rt, n->rx_sock, DAGRT_POLL_IN, deadline, NULL);
        if (p == DAGRT_ETIMEDOUT) {
            n->rx_windows_empty++;
            return;
        }
        if (p < 0 || receive_one(n, NULL) < 0) {
            n->rx_errors++;
            return;
        }
    }
}

/* tally: whether the receiver holds the sender's state this frame. */
void net_tally(struct net *n)
{
    if (n->shutdown)
        return;
    n->frames++;
    n->in_step += memcmp(n->rx.pos, n->tx.pos, sizeof n->tx.pos) == 0 &&
                  memcmp(n->rx.vel, n->tx.vel, sizeof n->tx.vel) == 0;
}
