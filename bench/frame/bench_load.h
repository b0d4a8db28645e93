/*
 * bench_load.h - the competing load of bench_frame --load (bench_load.c):
 * busy-looping processes beside the benchmark, as a game's render or audio
 * thread keeps a core busy, started and stopped by the benchmark itself.
 */
#ifndef BENCH_LOAD_H
#define BENCH_LOAD_H

/* Starts n busy-looping child processes (n <= 16). Returns 0, or -1 with
 * none left running. */
int bench_load_start(int n);
/* Kills and reaps them (nothing if none runs). */
void bench_load_stop(void);

#endif
