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
/* What the benchmark and the load have had of the CPUs: wall time, and CPU
 * seconds of this process (every thread, user and system) and of the load's
 * processes together (-1 where the system does not say: not Linux). Two
 * samples' differences give each side's CPUs over a run (the load's at a
 * 10 ms tick: meaningful over runs of a second or more). */
typedef struct bench_cpu_sample {
    double wall_s, self_s, load_s;
} bench_cpu_sample;
void bench_load_sample(bench_cpu_sample *s);
/* total += b - a. */
void bench_load_add(bench_cpu_sample *total, const bench_cpu_sample *a, const bench_cpu_sample *b);
/* The table of CPUs each side had over a contender's timed runs (CPU
 * seconds over wall seconds): its header, and one contender's row. */
void bench_load_cpu_header(void);
void bench_load_cpu_row(const char *name, const bench_cpu_sample *total);
/* Kills and reaps them (nothing if none runs). */
void bench_load_stop(void);

#endif
