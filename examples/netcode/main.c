/*
 * main.c - the netcode example: a sender and a receiver over UDP on
 * 127.0.0.1 in one process, each a fiber task of the frame graph of
 * netcode.dag (wired by dagc at build time), with loss injection, then a
 * clean shutdown that cancels a receive waiting with no traffic.
 *
 *   netcode [--frames N] [--drop N]   (frames 1..1000000, default 300;
 *                                      drop 0 = none, or 2..1000000: every
 *                                      Nth datagram is dropped before send)
 *
 * Exit status 0 only if the checks pass (the `checks:` line), 1 if they
 * fail or the sockets cannot be had, 2 for a bad argument.
 */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netcode.h"

#define WINDOW_NS   10000000ull     /* receive waits up to 10 ms for its frame's datagram */
#define SETTLE_NS   20000000ull     /* the shutdown's receive waits this long with no traffic */
#define GIVE_UP_NS  10000000000ull  /* the last word must arrive within 10 s */

static int usage(const char *prog, const char *why)
{
    fprintf(stderr, "%s: %s\nusage: %s [--frames N] [--drop N]   (frames 1..1000000, default 300; "
            "drop 0 or 2..1000000, default 0)\n", prog, why, prog);
    return 2;
}

static long parse_count(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

/* A UDP socket bound to 127.0.0.1 on a port the system picks. */
static int udp_socket(uint64_t addr[2])
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &l) != 0) {
        close(s);
        return -1;
    }
    memcpy(addr, &a, sizeof a);
    return s;
}

static unsigned port_of(const uint64_t addr[2])
{
    struct sockaddr_in a;
    memcpy(&a, addr, sizeof a);
    return ntohs(a.sin_port);
}

int main(int argc, char **argv)
{
    long frames = 300, drop = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 || strcmp(argv[i], "--drop") == 0) {
            if (i + 1 == argc)
                return usage(argv[0], "an option needs a number");
            bool is_drop = argv[i][2] == 'd';
            long v = parse_count(argv[++i], is_drop ? 0 : 1, 1000000);
            if (v < 0 || (is_drop && v == 1))
                return usage(argv[0], is_drop ? "--drop must be 0 or a whole number from 2"
                                              : "--frames must be a whole number in range");
            *(is_drop ? &drop : &frames) = v;
        } else {
            return usage(argv[0], "unknown argument");
        }
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;   /* the two fibers and main's waits, whatever the machine */
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        fprintf(stderr, "netcode: cannot create the runtime: %s\n", dagrt_strerror(err));
        return 1;
    }
    static struct net n;
    static net_instance_t inst;
    net_init(&n, rt);
    n.drop_every = (uint32_t)drop;
    n.window_ns = WINDOW_NS;
    n.tx_sock = udp_socket(n.tx_addr);
    n.rx_sock = udp_socket(n.rx_addr);
    if (n.tx_sock < 0 || n.rx_sock < 0) {
        fprintf(stderr, "netcode: cannot bind a UDP socket on 127.0.0.1: %s\n", strerror(errno));
        return 1;
    }
    int rc = 0;
    for (long f = 0; f < frames && rc == 0; f++)
        rc = net_run(rt, &n);

    /* The shutdown frame: the sender's last word, then the receiver waits
     * with no traffic until main cancels its scope. Started, so that main
     * is free to watch (net_instance_start, net_instance_wait). */
    n.shutdown = true;
    bool converged = false;
    uint64_t t0 = dagrt_now_ns();
    if (rc == 0 && (rc = net_instance_init(&inst)) == 0 && (rc = net_instance_start(rt, &inst, &n)) == 0) {
        while (dagrt_now_ns() - t0 < GIVE_UP_NS) {
            /* acquire: pairs with the stores' release in send and receive. */
            uint64_t fin = atomic_load_explicit(&n.tx_final, memory_order_acquire);
            if (fin && atomic_load_explicit(&n.rx_armed, memory_order_acquire) == fin) {
                converged = true;
                break;
            }
            dagrt_sleep(rt, 1000000, NULL);
        }
        /* Let the receive park with nothing to receive, then end it. */
        dagrt_sleep(rt, SETTLE_NS, NULL);
        dagrt_cancel_request(&n.rx_cancel);
        rc = net_instance_wait(rt, &inst);
    }
    if (rc != 0) {
        fprintf(stderr, "netcode: running the frames failed: %s\n", dagrt_strerror(rc));
        return 1;
    }
    dagrt_io_stats io;
    const char *reactor = dagrt_get_io_stats(rt, &io) == 0 ? io.reactor : "?";

    bool all_arrived = n.rx_received == n.tx_sent && n.tx_errors == 0 && n.rx_errors == 0;
    bool drops_seen = n.rx_gaps - n.rx_out_of_order == n.tx_dropped && n.rx_malformed == 0;
    bool same_state = converged && memcmp(n.rx.pos, n.tx.pos, sizeof n.tx.pos) == 0 &&
                      memcmp(n.rx.vel, n.tx.vel, sizeof n.tx.vel) == 0;
    bool cancelled = n.rx_last == DAGRT_ECANCELED;
    bool ok = all_arrived && drops_seen && same_state && cancelled;

    printf("netcode: sender 127.0.0.1:%u -> receiver 127.0.0.1:%u over UDP, %ld frames, ",
           port_of(n.tx_addr), port_of(n.rx_addr), frames);
    if (drop)
        printf("dropping every datagram whose sequence number is a multiple of %ld", drop);
    else
        printf("no loss injected");
    printf(" (reactor: %s)\n", reactor);
    printf("sender: %llu datagrams (%ld frames + the last word), %llu sent, %llu dropped, %llu failed\n",
           (unsigned long long)n.tx.seq, frames, (unsigned long long)n.tx_sent,
           (unsigned long long)n.tx_dropped, (unsigned long long)n.tx_errors);
    printf("receiver: %llu received, %llu dropped (sequence gaps), %llu out of order, %llu malformed; "
           "in step with the sender on %llu of %llu frames; %llu windows ended with nothing\n",
           (unsigned long long)n.rx_received, (unsigned long long)(n.rx_gaps - n.rx_out_of_order),
           (unsigned long long)n.rx_out_of_order, (unsigned long long)n.rx_malformed,
           (unsigned long long)n.in_step, (unsigned long long)n.frames,
           (unsigned long long)n.rx_windows_empty);
    printf("shutdown: the receive waiting with no traffic returned %s after %.1f ms parked\n",
           n.rx_last < 0 ? dagrt_strerror((int)n.rx_last) : "data", (double)n.rx_cancel_wait_ns / 1e6);
    printf("checks: %s (every datagram sent arrived: %s, drops seen = drops made: %s, final state = "
           "sender's last (seq %u): %s, receive cancelled: %s)\n", ok ? "ok" : "FAILED",
           all_arrived ? "yes" : "no", drops_seen ? "yes" : "no", n.rx.seq,
           same_state ? "yes" : "no", cancelled ? "yes" : "no");
    dagrt_close(rt, n.tx_sock);
    dagrt_close(rt, n.rx_sock);
    dagrt_destroy(rt);
    return ok ? 0 : 1;
}
