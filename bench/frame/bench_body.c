/* bench_body.c - see bench_body.h. */
#define _POSIX_C_SOURCE 200809L
#include "bench_body.h"

#include <time.h>

const int bench_preds[BENCH_NODES][2] = {
    {-1, -1}, /* input */
    {0, -1}, /* n1 */
    {0, -1}, /* n2 */
    {0, -1}, /* n3 */
    {0, -1}, /* n4 */
    {1, 2}, /* n5 */
    {1, 2}, /* n6 */
    {2, 3}, /* n7 */
    {2, 3}, /* n8 */
    {3, 4}, /* n9 */
    {3, 4}, /* n10 */
    {4, 1}, /* n11 */
    {4, 1}, /* n12 */
    {5, 6}, /* n13 */
    {6, 7}, /* n14 */
    {7, 8}, /* n15 */
    {8, 9}, /* n16 */
    {9, 10}, /* n17 */
    {10, 11}, /* n18 */
    {11, 12}, /* n19 */
    {12, 5}, /* n20 */
    {13, 14}, /* n21 */
    {15, 16}, /* n22 */
    {17, 18}, /* n23 */
    {19, 20}, /* n24 */
    {21, 22}, /* n25 */
    {22, 23}, /* n26 */
    {23, 24}, /* n27 */
    {24, 21}, /* n28 */
    {25, 26}, /* n29 */
    {27, 28}, /* n30 */
    {29, 30}, /* present */
};

const char *const bench_names[BENCH_NODES] = {
    "input",
    "n1",
    "n2",
    "n3",
    "n4",
    "n5",
    "n6",
    "n7",
    "n8",
    "n9",
    "n10",
    "n11",
    "n12",
    "n13",
    "n14",
    "n15",
    "n16",
    "n17",
    "n18",
    "n19",
    "n20",
    "n21",
    "n22",
    "n23",
    "n24",
    "n25",
    "n26",
    "n27",
    "n28",
    "n29",
    "n30",
    "present",
};

/* A dependent chain: each step needs the previous one, so the compiler can
 * neither vectorise nor drop it, and its time is stable. */
static uint64_t lcg(uint64_t x, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

void bench_frame_advance(struct bench_ctx *c) { c->frame++; }

void bench_serial_frames(struct bench_ctx *c, long n)
{
    for (long f = 0; f < n; f++) {
        c->frame++;
        for (int i = 0; i < BENCH_NODES; i++)
            bench_body(c, i);
    }
}

void bench_body(struct bench_ctx *c, int idx)
{
    if (c->checked) {
        /* acquire: pairs with the predecessor's release store below, so a
         * stamp that says "this frame" is a real ordering, not a guess. */
        for (int k = 0; k < 2; k++) {
            int p = bench_preds[idx][k];
            if (p >= 0 && atomic_load_explicit(&c->node[p].stamp, memory_order_acquire) != c->frame)
                atomic_fetch_add_explicit(&c->errors, 1, memory_order_relaxed);
        }
    }
    if (c->iters)
        c->node[idx].sink = lcg(c->node[idx].sink + (uint64_t)idx, c->iters);
    if (c->checked)
        atomic_store_explicit(&c->node[idx].stamp, c->frame, memory_order_release);
}

double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

uint64_t bench_calibrate(double target_ns)
{
    const uint64_t n = 2000000;
    double best = 1e30;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 5; r++) {
        double t0 = bench_now_ns();
        sink += lcg(sink + (uint64_t)r, n);
        double dt = bench_now_ns() - t0;
        if (dt < best)
            best = dt;
    }
    uint64_t iters = (uint64_t)(target_ns / (best / (double)n));
    return iters ? iters : 1;
}
