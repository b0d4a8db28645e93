/*
 * tracy_main.c - the program (tracy_frame) tracy_e2e.py records with tracy-capture:
 * tracy_frame.dag on libdagrt with the Tracy adapter (integrations/tracy)
 * installed at dagrt_create, SYNC frames one at a time (dagrt_graph_run),
 * then PIPED frames two in flight (a pipeline), with a pause now and then
 * so that workers park (the load plots). Prints "frames SYNC PIPED" and
 * exits 0 when every frame ran.
 *   usage: tracy_frame [SYNC PIPED]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dagrt_tracy.h"
#include "tracy_frame.h"

static void spin(struct tracy_ctx *c, unsigned n)
{
    uint64_t x = c->sink;
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    c->sink = x;
}

void tracy_frame_input(struct tracy_ctx *c)
{
    spin(c, 20000);
    char b = 1;
    if (dagrt_write(c->rt, c->wr, &b, 1, -1, NULL) != 1)
        c->errors++;
}

/* A fiber task: a timer wait, then an I/O wait on the pipe. */
void tracy_frame_net(struct tracy_ctx *c)
{
    if (dagrt_sleep(c->rt, 500000, NULL) != 0)
        c->errors++;
    char b;
    if (dagrt_read(c->rt, c->rd, &b, 1, -1, NULL) != 1)
        c->errors++;
    spin(c, 10000);
}

void tracy_frame_ai(struct tracy_ctx *c) { spin(c, 40000); }
void tracy_frame_physics(struct tracy_ctx *c) { spin(c, 60000); }

void tracy_frame_particles(struct tracy_ctx *c, size_t begin, size_t end)
{
    for (size_t i = begin; i < end; i++)
        for (int k = 0; k < 50; k++)
            c->pos[i] = c->pos[i] * 0.999f + 0.001f * (float)k;
}

size_t tracy_frame_particles_count(struct tracy_ctx *c)
{
    (void)c;
    return TRACY_PARTICLES;
}

void tracy_frame_render(struct tracy_ctx *c) { spin(c, 20000); }

int main(int argc, char **argv)
{
    unsigned sync = argc > 2 ? (unsigned)atoi(argv[1]) : 20, piped = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
    int fds[2];
    if (pipe(fds) != 0) {
        perror("tracy_frame: pipe");
        return 1;
    }
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 3;
    cfg.observer = dagrt_tracy_observer();
    dagrt *rt = dagrt_create(&cfg);
    if (!rt) {
        fprintf(stderr, "tracy_frame: dagrt_create failed\n");
        return 1;
    }
    static struct tracy_ctx c;
    c.rt = rt;
    c.rd = fds[0];
    c.wr = fds[1];
    int rc = 0;
    for (unsigned f = 0; f < sync && rc == 0; f++) {
        rc = tracy_frame_run(rt, &c);
        if (f % 5 == 4)
            nanosleep(&(struct timespec){0, 2000000}, NULL);   /* the workers park: the load plots get samples */
    }
    static tracy_frame_pipeline_t p;
    if (rc == 0)
        rc = tracy_frame_pipeline_init(&p, 2);
    for (unsigned f = 0; f < piped && rc == 0; f++)
        rc = tracy_frame_pipeline_submit(rt, &p, &c);
    if (rc == 0)
        rc = tracy_frame_pipeline_drain(rt, &p);
    dagrt_destroy(rt);
    close(fds[0]);
    close(fds[1]);
    if (rc != 0 || c.errors) {
        fprintf(stderr, "tracy_frame: %s, %d errors\n", rc ? dagrt_strerror(rc) : "ran", c.errors);
        return 1;
    }
    printf("frames %u %u\n", sync, piped);
    return 0;
}
