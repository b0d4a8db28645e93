/*
 * bench_example_frame - examples/frame's game frame (frame.dag, game.c:
 * real bodies, a parallel task, fibers, streamed asset reads), run three
 * ways side by side in one process, round after round:
 *
 *   serial       the same frames on a runtime with the serial switch
 *                (cfg.serial: no worker, every task on the caller): the
 *                frame's work W, the bodies alone on one thread
 *   one at a time frame_instance_run, the default runtime (caller + workers)
 *   pipelined    frame_pipeline_submit, depth D (default 2), drained at the end
 *
 * Each way runs the same FRAMES frames from a fresh game, so the three
 * games must end equal (the checks: same world, every frame presented,
 * `prev` inputs honoured, every streamed byte verified). Printed: us per
 * frame, and the ratios that answer "what does pipelining gain, and how
 * far is each way from its bound": pipelined / one at a time, and each
 * against the work bound W / threads (no schedule on T threads runs a
 * frame faster than its work spread evenly over them, bodies as fast as
 * alone). The critical-path bound needs per-task costs: `dagc --stats
 * --costs` gives it (docs/example.md).
 *
 *   bench_example_frame [--frames N] [--rounds R] [--in-flight D] [--quick]
 *
 * The serial runtime is made and destroyed inside each round, nested in
 * the main one (docs/runtime.md: a thread may be the main thread of
 * several runtimes in nested fashion), outside the timed part.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

#ifndef BENCH_BUILD
#define BENCH_BUILD "?"
#endif

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[64];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
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

/* The game's own checks after `frames` frames (as main.c's). */
static int game_ok(const struct game *g, long frames)
{
    return g->presented == (uint64_t)frames && g->audio_frames == (uint64_t)frames &&
           g->main_thread_ok && game_prev_missed(g) == 0 && g->stream_bad == 0 &&
           g->stream_bytes == g->streamed * (uint64_t)GAME_CELL_BYTES;
}

/* The asset files: frame-assets beside this program. */
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

static struct game game_buf;          /* ~1 MB: not on the stack */
static frame_instance_t inst;
static frame_pipeline_t pipe_buf;

enum { WAY_SERIAL, WAY_ONE, WAY_PIPE, NWAYS };
static const char *const way_name[NWAYS] = {"serial", "one at a time", "pipelined"};

/* Runs `frames` frames of a fresh game one way (after `warm` frames of
 * another fresh game the same way); us per frame, the game's digest in
 * *digest, -1 on an error or a failed check. */
static double run_way(dagrt *rt, const struct game_assets *a, int way, long frames, long warm,
                      unsigned depth, uint64_t *digest)
{
    struct game *g = &game_buf;
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        long n = pass == 0 ? warm : frames;
        game_init(g, rt, a);
        rc = way == WAY_PIPE ? frame_pipeline_init(&pipe_buf, depth) : frame_instance_init(&inst);
        double t0 = game_now_us();
        for (long f = 0; f < n && rc == 0; f++)
            rc = way == WAY_PIPE ? frame_pipeline_submit(rt, &pipe_buf, g)
                                 : frame_instance_run(rt, &inst, g);
        if (rc == 0 && way == WAY_PIPE)
            rc = frame_pipeline_drain(rt, &pipe_buf);
        double us = game_now_us() - t0;
        if (rc != 0) {
            fprintf(stderr, "bench_example_frame: %s: %s\n", way_name[way], dagrt_strerror(rc));
            return -1;
        }
        if (pass == 1) {
            if (!game_ok(g, n)) {
                fprintf(stderr, "bench_example_frame: %s: the game's checks failed\n",
                        way_name[way]);
                return -1;
            }
            *digest = game_digest(g);
            return us / (double)n;
        }
    }
    return -1;
}

/* The serial way: a runtime of its own with the serial switch, nested in
 * the main one, and its own handles on the asset files. */
static double run_serial(const char *dir, long frames, long warm, uint64_t *digest)
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.serial = true;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        fprintf(stderr, "bench_example_frame: the serial runtime: %s\n", dagrt_strerror(err));
        return -1;
    }
    static struct game_assets a;
    char why[1200];
    double us = -1;
    if (game_assets_open(&a, rt, dir, why, sizeof why) != 0) {
        fprintf(stderr, "bench_example_frame: the asset files: %s\n", why);
    } else {
        us = run_way(rt, &a, WAY_SERIAL, frames, warm, 0, digest);
        game_assets_close(&a, rt);
    }
    dagrt_destroy(rt);
    return us;
}

int main(int argc, char **argv)
{
    long frames = 2000, rounds = 5, depth = 2, warm = 100;
    for (int i = 1; i < argc; i++) {
        long *to = NULL, hi = 0, lo = 1;
        if (strcmp(argv[i], "--quick") == 0) {
            frames = 200, rounds = 1, warm = 20;
            continue;
        }
        if (strcmp(argv[i], "--frames") == 0)
            to = &frames, hi = 1000000;
        else if (strcmp(argv[i], "--rounds") == 0)
            to = &rounds, hi = 64;
        else if (strcmp(argv[i], "--in-flight") == 0)
            to = &depth, hi = DAGRT_MAX_IN_FLIGHT;
        if (!to || i + 1 == argc || (*to = parse_count(argv[++i], lo, hi)) < 0) {
            fprintf(stderr, "usage: %s [--frames N (1..1000000)] [--rounds R (1..64)] "
                    "[--in-flight D (1..%d)] [--quick]\n", argv[0], DAGRT_MAX_IN_FLIGHT);
            return 2;
        }
    }
    int err = 0;
    dagrt *rt = dagrt_create_ex(NULL, &err);
    if (!rt) {
        fprintf(stderr, "bench_example_frame: cannot create the runtime: %s\n", dagrt_strerror(err));
        return 1;
    }
    static struct game_assets assets;
    char dir[1024], why[1200];
    assets_dir(argv[0], dir, sizeof dir);
    if (game_assets_open(&assets, rt, dir, why, sizeof why) != 0) {
        fprintf(stderr, "bench_example_frame: the asset files: %s\n", why);
        dagrt_destroy(rt);
        return 1;
    }
    int threads = dagrt_worker_count(rt) + 1;
    printf("bench_example_frame: %s\n", BENCH_BUILD);
    printf("examples/frame's frame, %ld frames per way per round (after %ld to warm up), %ld rounds, "
           "the ways' order turning each round; %d threads (caller + %d workers); pipelined: %ld in flight\n",
           frames, warm, rounds, threads, threads - 1, depth);
    printf("%-6s %12s %16s %12s %16s %16s %16s\n", "round", "serial us", "one at a time us",
           "pipelined us", "pipelined/one", "one/(W/T)", "pipelined/(W/T)");
    double us[NWAYS][64];
    int ok = 1;
    for (long r = 0; r < rounds && ok; r++) {
        uint64_t dig[NWAYS] = {0};
        for (int k = 0; k < NWAYS && ok; k++) {
            int way = (int)((k + r) % NWAYS);
            us[way][r] = way == WAY_SERIAL ? run_serial(dir, frames, warm, &dig[way])
                                           : run_way(rt, &assets, way, frames, warm,
                                                     (unsigned)depth, &dig[way]);
            ok = us[way][r] > 0;
        }
        if (ok && (dig[WAY_ONE] != dig[WAY_SERIAL] || dig[WAY_PIPE] != dig[WAY_SERIAL])) {
            fprintf(stderr, "bench_example_frame: round %ld: the three games differ\n", r + 1);
            ok = 0;
        }
        if (ok) {
            double bound = us[WAY_SERIAL][r] / threads;
            printf("%-6ld %12.1f %16.1f %12.1f %16.3f %16.2f %16.2f\n", r + 1, us[WAY_SERIAL][r],
                   us[WAY_ONE][r], us[WAY_PIPE][r], us[WAY_PIPE][r] / us[WAY_ONE][r],
                   us[WAY_ONE][r] / bound, us[WAY_PIPE][r] / bound);
        }
    }
    if (ok) {
        int n = (int)rounds;
        double w = median(us[WAY_SERIAL], n), one = median(us[WAY_ONE], n),
               pip = median(us[WAY_PIPE], n);
        double ratio[64];
        for (int r = 0; r < n; r++)
            ratio[r] = us[WAY_PIPE][r] / us[WAY_ONE][r];
        printf("%-6s %12.1f %16.1f %12.1f %16.3f %16.2f %16.2f\n", "median", w, one, pip,
               median(ratio, n), one / (w / threads), pip / (w / threads));
        printf("work bound W/T = %.1f us (serial %.1f us / %d threads); pipelining gains %+.1f%% "
               "over one at a time (median of the rounds' ratios)\n", w / threads, w, threads,
               (1 / median(ratio, n) - 1) * 100);
        printf("checks: ok (three games equal in every round, every frame presented, prev inputs "
               "honoured, streamed bytes verified)\n");
    }
    game_assets_close(&assets, rt);
    dagrt_destroy(rt);
    return ok ? 0 : 1;
}
