/*
 * bench_pingpong.h - what one cache line's round trip between two threads
 * costs on this machine (bench_pingpong.c), to read the frame figures by;
 * bench_frame measures it at its start and its end, so that a change of the
 * machine's state during a run shows beside the table.
 */
#ifndef BENCH_PINGPONG_H
#define BENCH_PINGPONG_H

/* The median round trip in ns of runs (<= 15) runs of trips trips each (a
 * run stops early after about cap_ms), with the fastest and slowest run in
 * *min and *max; -1 if no thread could be started. */
double bench_pingpong_ns(int trips, int runs, double cap_ms, double *min, double *max);

#endif
