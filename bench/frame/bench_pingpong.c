/*
 * bench_pingpong.c - what one cache line's trip between two cores costs on
 * this machine, to read the frame benchmark's figures by (pingpong.c):
 * the round trip in ns, median of 5 runs of 200,000 trips (or 1 s). The executor's
 * cross-core costs (runtime/exec/exec.c) are multiples of it.
 *
 *   bench_pingpong
 */
#include <stdio.h>

#include "bench_pingpong.h"

int main(void)
{
    double lo, hi, med = bench_pingpong_ns(200000, 5, 1000, &lo, &hi);
    if (med < 0) {
        fprintf(stderr, "bench_pingpong: cannot start a thread\n");
        return 1;
    }
    printf("cache-line round trip between two threads: %.0f ns (median of 5; min %.0f, max %.0f)\n",
           med, lo, hi);
    return 0;
}
