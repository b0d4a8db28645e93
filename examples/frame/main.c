/*
 * main.c - the example game loop: runs the frame graph of frame.dag (wired
 * statically by dagc at build time) for a few hundred frames on libdagrt and
 * prints per-frame timing and where the graph's diagram is.
 *
 *   frame [FRAMES]        (default 300)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "frame.h"

#ifndef FRAME_SVG
#define FRAME_SVG "frame.svg"
#endif

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 300;
    if (frames < 1 || frames > 10000000) {
        fprintf(stderr, "usage: %s [FRAMES]   (1..10000000, default 300)\n", argv[0]);
        return 2;
    }
    int err = 0;
    dagrt *rt = dagrt_create_ex(NULL, &err);
    if (!rt) {
        fprintf(stderr, "frame: cannot create the runtime: %s\n", dagrt_strerror(err));
        return 1;
    }
    static struct game game;
    game_init(&game, rt);
    double *t = malloc((size_t)frames * sizeof *t);
    if (!t) {
        fprintf(stderr, "frame: out of memory\n");
        return 1;
    }
    for (int f = 0; f < frames; f++) {
        double t0 = now_us();
        int rc = frame_run(rt, &game);
        t[f] = now_us() - t0;
        if (rc != 0) {
            fprintf(stderr, "frame: frame_run failed: %s\n", dagrt_strerror(rc));
            return 1;
        }
    }
    double sum = 0;
    for (int f = 0; f < frames; f++)
        sum += t[f];
    qsort(t, (size_t)frames, sizeof *t, cmp_double);
    printf("frame graph: input, physics (%d bodies), animation, ai, audio (fiber, waits for the mixer),\n"
           "  particles (%d, parallel), streaming, shadows (even frames), cull (%d boxes), render, present\n",
           GAME_BODIES, GAME_PARTICLES, GAME_BOXES);
    printf("runtime: %d workers + the main thread\n", dagrt_worker_count(rt));
    printf("%d frames: mean %.1f us, p50 %.1f us, p99 %.1f us, max %.1f us\n", frames,
           sum / frames, t[frames / 2], t[(int)((frames - 1) * 0.99)], t[frames - 1]);
    printf("last frame: %u of %d boxes visible, %u shadow casters; shadows ran on %llu of %d frames\n",
           game.nvisible, GAME_BOXES, game.shadow_casters, (unsigned long long)game.shadow_frames,
           frames);
    int ok = game.presented == (uint64_t)frames && game.audio_frames == (uint64_t)frames &&
             game.shadow_frames == (uint64_t)frames / 2 && game.main_thread_ok;
    printf("checks: %s (presented %llu, audio %llu, main-thread tasks on main: %s)\n",
           ok ? "ok" : "FAILED", (unsigned long long)game.presented,
           (unsigned long long)game.audio_frames, game.main_thread_ok ? "yes" : "no");
    printf("diagram: %s\n", FRAME_SVG);
    free(t);
    dagrt_destroy(rt);
    return ok ? 0 : 1;
}
