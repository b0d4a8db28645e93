/*
 * bench_example_frame - examples/frame's game frame (frame.dag, game.c:
 * real bodies, a parallel task, fibers, streamed asset reads), run several
 * ways side by side in one process, round after round:
 *
 *   serial        the same frames on a runtime with the serial switch
 *                 (cfg.serial: no worker, every task on the caller): the
 *                 frame's work W, the bodies alone on one thread
 *   one at a time frame_instance_run, the default runtime (caller + workers):
 *                 depth 1
 *   pipelined D   frame_pipeline_submit, D frames in flight (2, 3 and 4 by
 *                 default), drained at the end
 *
 * and each of them twice, with physics' two hand-overs (game.h, enum
 * game_handover): the heights, a snapshot (the game), and the whole bodies
 * (the form before the snapshot, 2026-12-05), so that what the snapshot
 * gained is measured in the same process, round by round.
 *
 * Each way runs the same FRAMES frames from a fresh game, so the games of
 * one hand-over must end equal (the checks: same world, every frame
 * presented, `prev` inputs honoured, every streamed byte verified). Printed:
 * us per frame each round, then per way the median and range, the median
 * of the rounds' ratios to one at a time (what pipelining gains) and to the
 * work bound W / threads (no schedule on T threads runs a frame faster than
 * its work spread evenly over them, bodies as fast as alone), and for the
 * whole bodies against the heights, the same round. The critical-path
 * bound needs per-task costs: `dagc --stats --costs` gives it
 * (docs/example.md).
 *
 *   bench_example_frame [--frames N] [--rounds R] [--in-flight D] [--handover H] [--quick]
 *
 * --in-flight D times one depth only (1: one at a time and serial alone);
 * --handover heights|bodies one hand-over only. The ways' order turns each
 * round. The serial runtime is made and destroyed inside each round,
 * nested in the main one (docs/runtime.md: a thread may be the main thread
 * of several runtimes in nested fashion), outside the timed part.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdbool.h>
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

static struct game game_buf;          /* ~1.3 MB: not on the stack */
static frame_instance_t inst;
static frame_pipeline_t pipe_buf;

/* A way to run the frames: serial, one at a time (depth 1), or pipelined
 * `depth` deep, with physics' hand-over `handover`. */
enum { KIND_SERIAL, KIND_ONE, KIND_PIPE };
typedef struct way {
    int kind;
    unsigned depth;
    int handover;
    char name[40];
} way;

static const char *const handover_name[2] = {"heights", "bodies"};

/* Runs `frames` frames of a fresh game one way (after `warm` frames of
 * another fresh game the same way); us per frame, the game's digest in
 * *digest, -1 on an error or a failed check. */
static double run_way(dagrt *rt, const struct game_assets *a, const way *w, long frames,
                      long warm, uint64_t *digest)
{
    struct game *g = &game_buf;
    int rc = 0;
    bool piped = w->kind == KIND_PIPE;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        long n = pass == 0 ? warm : frames;
        game_init(g, rt, a);
        g->handover = w->handover;
        rc = piped ? frame_pipeline_init(&pipe_buf, w->depth) : frame_instance_init(&inst);
        double t0 = game_now_us();
        for (long f = 0; f < n && rc == 0; f++)
            rc = piped ? frame_pipeline_submit(rt, &pipe_buf, g) : frame_instance_run(rt, &inst, g);
        if (rc == 0 && piped)
            rc = frame_pipeline_drain(rt, &pipe_buf);
        double us = game_now_us() - t0;
        if (rc != 0) {
            fprintf(stderr, "bench_example_frame: %s: %s\n", w->name, dagrt_strerror(rc));
            return -1;
        }
        if (pass == 1) {
            if (!game_ok(g, n)) {
                fprintf(stderr, "bench_example_frame: %s: the game's checks failed\n", w->name);
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
static double run_serial(const char *dir, const way *w, long frames, long warm, uint64_t *digest)
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
        us = run_way(rt, &a, w, frames, warm, digest);
        game_assets_close(&a, rt);
    }
    dagrt_destroy(rt);
    return us;
}

/* The ways: per hand-over, serial, one at a time and each depth. */
#define MAX_WAYS (2 * (2 + DAGRT_MAX_IN_FLIGHT))
static int make_ways(way *ways, int handover, long depth)
{
    int n = 0;
    for (int h = 0; h < 2; h++) {
        if (handover >= 0 && h != handover)
            continue;
        ways[n++] = (way){KIND_SERIAL, 0, h, ""};
        ways[n++] = (way){KIND_ONE, 1, h, ""};
        for (unsigned d = 2; d <= DAGRT_MAX_IN_FLIGHT; d++)
            if (depth == 0 || (long)d == depth)
                ways[n++] = (way){KIND_PIPE, d, h, ""};
    }
    for (int i = 0; i < n; i++) {
        way *w = &ways[i];
        if (w->kind == KIND_PIPE)
            snprintf(w->name, sizeof w->name, "%s, pipelined %u", handover_name[w->handover], w->depth);
        else
            snprintf(w->name, sizeof w->name, "%s, %s", handover_name[w->handover],
                     w->kind == KIND_SERIAL ? "serial" : "one at a time");
    }
    return n;
}

/* The way of ways[] that is `kind` with hand-over h (one at a time, or serial). */
static int find_way(const way *ways, int n, int kind, int h)
{
    for (int i = 0; i < n; i++)
        if (ways[i].kind == kind && ways[i].handover == h)
            return i;
    return -1;
}

static int usage(const char *prog)
{
    fprintf(stderr, "usage: %s [--frames N (1..1000000)] [--rounds R (1..64)] "
            "[--in-flight D (1..%d)] [--handover heights|bodies] [--quick]\n", prog,
            DAGRT_MAX_IN_FLIGHT);
    return 2;
}

int main(int argc, char **argv)
{
    long frames = 2000, rounds = 5, depth = 0, warm = 100;
    int handover = -1;   /* both */
    for (int i = 1; i < argc; i++) {
        long *to = NULL, hi = 0, lo = 1;
        if (strcmp(argv[i], "--quick") == 0) {
            frames = 200, rounds = 1, warm = 20;
            continue;
        }
        if (strcmp(argv[i], "--handover") == 0) {
            if (i + 1 == argc)
                return usage(argv[0]);
            i++;
            handover = strcmp(argv[i], "heights") == 0 ? GAME_HEIGHTS
                       : strcmp(argv[i], "bodies") == 0 ? GAME_WHOLE_BODIES : -2;
            if (handover == -2)
                return usage(argv[0]);
            continue;
        }
        if (strcmp(argv[i], "--frames") == 0)
            to = &frames, hi = 1000000;
        else if (strcmp(argv[i], "--rounds") == 0)
            to = &rounds, hi = 64;
        else if (strcmp(argv[i], "--in-flight") == 0)
            to = &depth, hi = DAGRT_MAX_IN_FLIGHT;
        if (!to || i + 1 == argc || (*to = parse_count(argv[++i], lo, hi)) < 0)
            return usage(argv[0]);
    }
    way ways[MAX_WAYS];
    int nw = make_ways(ways, handover, depth);
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
           "%d ways in an order turning each round; %d threads (caller + %d workers)\n",
           frames, warm, rounds, nw, threads, threads - 1);
    printf("us per frame; hand-over: physics hands over the heights (the snapshot) or the whole "
           "bodies (before it)\n%-6s", "round");
    for (int k = 0; k < nw; k++)
        printf(" %8.8s%c%-3s", handover_name[ways[k].handover], ' ',
               ways[k].kind == KIND_SERIAL ? "W" : ways[k].kind == KIND_ONE ? "1" :
               ways[k].depth == 2 ? "P2" : ways[k].depth == 3 ? "P3" : "P4");
    printf("\n");
    static double us[MAX_WAYS][64];
    int ok = 1;
    for (long r = 0; r < rounds && ok; r++) {
        uint64_t dig[MAX_WAYS] = {0};
        for (int k = 0; k < nw && ok; k++) {
            int i = (int)((k + r) % nw);
            us[i][r] = ways[i].kind == KIND_SERIAL ? run_serial(dir, &ways[i], frames, warm, &dig[i])
                                                  : run_way(rt, &assets, &ways[i], frames, warm, &dig[i]);
            ok = us[i][r] > 0;
        }
        for (int i = 0; i < nw && ok; i++) {
            int w0 = find_way(ways, nw, KIND_SERIAL, ways[i].handover);
            if (dig[i] != dig[w0]) {
                fprintf(stderr, "bench_example_frame: round %ld: %s ended another game than %s\n",
                        r + 1, ways[i].name, ways[w0].name);
                ok = 0;
            }
        }
        if (ok) {
            printf("%-6ld", r + 1);
            for (int i = 0; i < nw; i++)
                printf(" %12.1f", us[i][r]);
            printf("\n");
        }
    }
    if (ok) {
        int n = (int)rounds;
        printf("%-26s %22s %22s %8s %22s\n", "way", "us/frame: median (range)",
               "/ one at a time", "/ (W/T)", "bodies / heights");
        for (int i = 0; i < nw; i++) {
            const way *w = &ways[i];
            double r1[64], rh[64], lo = us[i][0], hi = us[i][0];
            int one = find_way(ways, nw, KIND_ONE, w->handover);
            int ser = find_way(ways, nw, KIND_SERIAL, w->handover);
            /* The same way with the other hand-over, for the bodies' rows. */
            int other = -1;
            for (int j = 0; j < nw; j++)
                if (w->handover == GAME_WHOLE_BODIES && ways[j].handover == GAME_HEIGHTS &&
                    ways[j].kind == w->kind && ways[j].depth == w->depth)
                    other = j;
            double rlo = 1e30, rhi = 0, hlo = 1e30, hhi = 0;
            for (int r = 0; r < n; r++) {
                lo = us[i][r] < lo ? us[i][r] : lo;
                hi = us[i][r] > hi ? us[i][r] : hi;
                r1[r] = us[i][r] / us[one][r];
                rlo = r1[r] < rlo ? r1[r] : rlo;
                rhi = r1[r] > rhi ? r1[r] : rhi;
                if (other >= 0) {
                    rh[r] = us[i][r] / us[other][r];
                    hlo = rh[r] < hlo ? rh[r] : hlo;
                    hhi = rh[r] > hhi ? rh[r] : hhi;
                }
            }
            char a[40], b[40] = "", c[40] = "";
            snprintf(a, sizeof a, "%.1f (%.1f-%.1f)", median(us[i], n), lo, hi);
            if (w->kind != KIND_ONE)
                snprintf(b, sizeof b, "%.3f (%.3f-%.3f)", median(r1, n), rlo, rhi);
            if (other >= 0)
                snprintf(c, sizeof c, "%.3f (%.3f-%.3f)", median(rh, n), hlo, hhi);
            printf("%-26s %22s %22s %8.2f %22s\n", w->name, a, b,
                   median(us[i], n) / (median(us[ser], n) / threads), c);
        }
        for (int h = 0; h < 2; h++) {
            int one = find_way(ways, nw, KIND_ONE, h), ser = find_way(ways, nw, KIND_SERIAL, h);
            if (one < 0)
                continue;
            printf("%s: work bound W/T = %.1f us (serial %.1f us / %d threads); pipelining gains",
                   handover_name[h], median(us[ser], n) / threads, median(us[ser], n), threads);
            int any = 0;
            for (int i = 0; i < nw; i++) {
                if (ways[i].handover != h || ways[i].kind != KIND_PIPE)
                    continue;
                double r1[64];
                for (int r = 0; r < n; r++)
                    r1[r] = us[i][r] / us[one][r];
                printf("%s %+.1f%% at depth %u", any++ ? "," : "", (1 / median(r1, n) - 1) * 100,
                       ways[i].depth);
            }
            printf("%s over one at a time (medians of the rounds' ratios)\n", any ? "" : " nothing measured");
        }
        printf("checks: ok (the games of a hand-over equal in every round, every frame presented, "
               "prev inputs honoured, streamed bytes verified)\n");
    }
    game_assets_close(&assets, rt);
    dagrt_destroy(rt);
    return ok ? 0 : 1;
}
