/*
 * main.c - the example game loop: runs the frame graph of frame.dag (wired
 * statically by dagc at build time) for a few hundred frames on libdagrt,
 * one frame at a time (frame_instance_run) and as a pipeline with frames in
 * flight (frame_pipeline_submit, frame_pipeline_drain), and prints both
 * side by side: frames per second and frame latency, and where the graph's
 * diagram is.
 *
 *   frame [FRAMES] [--in-flight N]   (FRAMES default 300; N default 2,
 *                                     1..DAGRT_MAX_IN_FLIGHT)
 *
 * A frame's latency runs from its start to the end of its last node
 * (present records it). One at a time a frame starts when frame_instance_run is
 * called; in the pipeline when frame_pipeline_submit is called or, with N frames in
 * flight, when the oldest frame ended (frame_pipeline_submit first waits for it), so
 * the wait for a free place in the pipeline is not counted as latency.
 *
 * The streaming task reads the world's cells from asset files in the
 * directory frame-assets beside the program (written on the first run,
 * assets.c), through the runtime's reactor; the checks verify every byte.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

#ifndef FRAME_SVG
#define FRAME_SVG "frame.svg"
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int usage(const char *prog, const char *why)
{
    fprintf(stderr, "%s: %s\nusage: %s [FRAMES] [--in-flight N]   (FRAMES 1..1000000, default 300; "
            "N 1..%d, default 2)\n", prog, why, prog, DAGRT_MAX_IN_FLIGHT);
    return 2;
}

/* A whole decimal number in [lo, hi], or -1. */
static long parse_count(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

/* How one way of running the frames went. */
typedef struct way {
    const char *name;
    double total_us;    /* all the frames, wall clock */
    double *lat;        /* each frame's latency (us), sorted by report() */
} way;

static void report(way *w, int frames)
{
    qsort(w->lat, (size_t)frames, sizeof *w->lat, cmp_double);
    printf("%-26s %10.1f %10.1f %10.1f %10.1f\n", w->name, frames / (w->total_us / 1e6),
           w->lat[frames / 2], w->lat[(int)((frames - 1) * 0.99)], w->lat[frames - 1]);
}

/* Every cell streamed in was read in full and matched its checksum. */
static int stream_ok(const struct game *g)
{
    return g->streamed > 0 && g->stream_bad == 0 &&
           g->stream_bytes == g->streamed * (uint64_t)GAME_CELL_BYTES;
}

/* The per-frame checks of one game after `frames` frames. */
static int game_ok(const struct game *g, int frames)
{
    return g->presented == (uint64_t)frames && g->audio_frames == (uint64_t)frames &&
           g->shadow_frames == (uint64_t)frames / 2 && g->main_thread_ok &&
           game_prev_missed(g) == 0 && stream_ok(g);
}

/* The asset directory: frame-assets beside the program (argv[0]'s
 * directory; the current one when argv[0] names none). */
static void assets_dir(const char *argv0, char *out, size_t len)
{
    const char *cut = NULL;
    for (const char *p = argv0; *p; p++)
        if (*p == '/' || *p == '\\')
            cut = p;
    if (cut)
        snprintf(out, len, "%.*s/frame-assets", (int)(cut - argv0), argv0);
    else
        snprintf(out, len, "frame-assets");
}

int main(int argc, char **argv)
{
    long frames = 300, depth = 2;
    int have_frames = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--in-flight") == 0) {
            if (i + 1 == argc)
                return usage(argv[0], "--in-flight needs a number");
            if ((depth = parse_count(argv[++i], 1, DAGRT_MAX_IN_FLIGHT)) < 0)
                return usage(argv[0], "--in-flight must be a whole number in range");
        } else if (argv[i][0] == '-') {
            return usage(argv[0], "unknown option");
        } else if (have_frames++) {
            return usage(argv[0], "FRAMES given twice");
        } else if ((frames = parse_count(argv[i], 1, 1000000)) < 0) {
            return usage(argv[0], "FRAMES must be a whole number in range");
        }
    }
    int err = 0;
    dagrt *rt = dagrt_create_ex(NULL, &err);
    if (!rt) {
        fprintf(stderr, "frame: cannot create the runtime: %s\n", dagrt_strerror(err));
        return 1;
    }
    static struct game_assets assets;
    char dir[1024], why[1200];
    assets_dir(argv[0], dir, sizeof dir);
    if (game_assets_open(&assets, rt, dir, why, sizeof why) != 0) {
        fprintf(stderr, "frame: the streamed world's files: %s\n", why);
        dagrt_destroy(rt);
        return 1;
    }
    /* Three games: a short warm-up of both ways (threads, fibers, the
     * runtime's first-frame work), then one per way from the same start.
     * The typed per-frame copies (camera, cells) live in the instance and
     * the pipeline, so both are initialised again after the warm-up: their
     * copies start zeroed, as the measured games start from frame 0. */
    static struct game warm, one, piped;
    static frame_instance_t inst;
    static frame_pipeline_t pipe;
    game_init(&warm, rt, &assets);
    game_init(&one, rt, &assets);
    game_init(&piped, rt, &assets);
    int rc = frame_instance_init(&inst);
    if (rc == 0)
        rc = frame_pipeline_init(&pipe, (unsigned)depth);
    double *buf = calloc((size_t)frames * 6, sizeof *buf);
    if (rc != 0 || !buf) {
        fprintf(stderr, "frame: %s\n", rc ? dagrt_strerror(rc) : "out of memory");
        return 1;
    }
    double *start = buf, *lat1 = buf + frames, *lat2 = buf + 2 * frames;
    one.present_at = buf + 3 * frames;
    piped.input_at = buf + 4 * frames;
    piped.present_at = buf + 5 * frames;
    one.stamp_cap = piped.stamp_cap = (uint64_t)frames;

    for (int f = 0; f < 20 && rc == 0; f++)
        rc = frame_instance_run(rt, &inst, &warm);
    for (int f = 0; f < 20 && rc == 0; f++)
        rc = frame_pipeline_submit(rt, &pipe, &warm);
    if (rc == 0)
        rc = frame_pipeline_drain(rt, &pipe);
    if (rc == 0)
        rc = frame_instance_init(&inst);
    if (rc == 0)
        rc = frame_pipeline_init(&pipe, (unsigned)depth);

    way w1 = {"one at a time (instance)", 0, lat1};
    double t0 = game_now_us();
    for (long f = 0; f < frames && rc == 0; f++) {
        start[f] = game_now_us();
        rc = frame_instance_run(rt, &inst, &one);
        lat1[f] = one.present_at[f] - start[f];
    }
    w1.total_us = game_now_us() - t0;

    char name2[48];
    snprintf(name2, sizeof name2, "pipelined, %ld in flight", depth);
    way w2 = {name2, 0, lat2};
    t0 = game_now_us();
    for (long f = 0; f < frames && rc == 0; f++) {
        start[f] = game_now_us();
        rc = frame_pipeline_submit(rt, &pipe, &piped);
    }
    if (rc == 0)
        rc = frame_pipeline_drain(rt, &pipe);
    w2.total_us = game_now_us() - t0;
    if (rc != 0) {
        fprintf(stderr, "frame: running the frames failed: %s\n", dagrt_strerror(rc));
        return 1;
    }
    /* A pipelined frame's latency from its start (see the top), and the
     * overlap: frame f's input began before frame f - 1 presented. */
    long overlapped = 0;
    for (long f = 0; f < frames; f++) {
        double begin = start[f];
        if (f >= depth && piped.present_at[f - depth] > begin)
            begin = piped.present_at[f - depth];
        lat2[f] = piped.present_at[f] - begin;
        overlapped += f > 0 && piped.input_at[f] < piped.present_at[f - 1];
    }

    printf("frame graph: input, physics (%d bodies), animation, ai, mixer, audio (fiber, after the mixer),\n"
           "  particles (%d, parallel), streaming (fiber, reads the asset files), shadows (even frames), cull (%d boxes), ui, render,\n"
           "  present; prev inputs: animation <- physics, cull <- streaming, ui <- render\n",
           GAME_BODIES, GAME_PARTICLES, GAME_BOXES);
    printf("runtime: %d workers + the main thread; %ld frames each way\n", dagrt_worker_count(rt),
           frames);
    printf("%-26s %10s %10s %10s %10s\n", "", "frames/s", "p50 us", "p99 us", "max us");
    report(&w1, (int)frames);
    report(&w2, (int)frames);
    printf("pipelined: %ld of %ld frames began (input) before the frame before presented\n",
           overlapped, frames - 1);
    /* The last frame's slot, and the last even frame's (shadows). */
    const struct game_slot *last = &piped.slot[piped.present_n % GAME_SLOTS];
    const struct game_slot *even = &piped.slot[(piped.present_n & ~1ull) % GAME_SLOTS];
    printf("last frame: %u of %d boxes visible, %u shadow casters; %llu cells streamed in; "
           "shadows ran on %llu of %ld frames\n", last->nvisible, GAME_BOXES, even->shadow_casters,
           (unsigned long long)piped.streamed, (unsigned long long)piped.shadow_frames, frames);
    dagrt_io_stats io;
    const char *reactor = dagrt_get_io_stats(rt, &io) == 0 ? io.reactor : "?";
    printf("streaming: %llu + %llu cells of %d KiB read from %s through %s (%d of %d files "
           "written first); %llu failed their checksum\n",
           (unsigned long long)one.streamed, (unsigned long long)piped.streamed,
           GAME_CELL_BYTES / 1024, assets.dir, reactor, assets.written, GAME_CELLS,
           (unsigned long long)(one.stream_bad + piped.stream_bad));
    uint64_t d1 = game_digest(&one), d2 = game_digest(&piped);
    int ok = game_ok(&one, (int)frames) && game_ok(&piped, (int)frames) && d1 == d2;
    printf("checks: %s (presented %llu + %llu, audio %llu + %llu, main-thread tasks on main: %s, "
           "prev inputs honoured: %s, asset bytes verified: %s, same world both ways: %s)\n",
           ok ? "ok" : "FAILED", (unsigned long long)one.presented,
           (unsigned long long)piped.presented, (unsigned long long)one.audio_frames,
           (unsigned long long)piped.audio_frames,
           one.main_thread_ok && piped.main_thread_ok ? "yes" : "no",
           game_prev_missed(&one) + game_prev_missed(&piped) == 0 ? "yes" : "no",
           stream_ok(&one) && stream_ok(&piped) ? "yes" : "no", d1 == d2 ? "yes" : "no");
    printf("diagram: %s\n", FRAME_SVG);
    free(buf);
    game_assets_close(&assets, rt);
    dagrt_destroy(rt);
    return ok ? 0 : 1;
}
