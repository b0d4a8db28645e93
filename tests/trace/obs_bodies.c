/* obs_bodies.c - the task bodies of obs.dag: a little work each, the fiber
 * task yields so that it suspends (and may resume on another thread). */
#include "obs.h"

static void work(struct obs_ctx *c, unsigned n)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005u + i;
    /* relaxed: a sink the optimiser cannot drop, nothing is ordered by it */
    atomic_fetch_add_explicit(&c->sink, x, memory_order_relaxed);
}

void obs_input(struct obs_ctx *c) { work(c, 200); }
void obs_physics(struct obs_ctx *c) { work(c, 2000); }
void obs_ai(struct obs_ctx *c) { work(c, 1000); }
void obs_loader(struct obs_ctx *c)
{
    for (int i = 0; i < OBS_LOADER_YIELDS; i++) {
        work(c, 300);
        dagrt_fiber_yield(c->rt);
    }
    work(c, 300);
}
size_t obs_particles_count(struct obs_ctx *c) { (void)c; return OBS_PARTICLES; }
void obs_particles(struct obs_ctx *c, size_t begin, size_t end)
{
    work(c, (unsigned)(end - begin) * 4);
    /* relaxed: a count read after the frame (the run's end orders it) */
    atomic_fetch_add_explicit(&c->items, end - begin, memory_order_relaxed);
}
bool shadows_on(struct obs_ctx *c) { return c->frame % 2 == 1; }
void obs_shadows(struct obs_ctx *c) { work(c, 500); }
void obs_render(struct obs_ctx *c) { work(c, 500); }
