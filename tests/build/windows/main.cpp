// Runs engine.dag's frame a few times on libdagrt under Wine; exits
// non-zero when a frame did not do its work.
#include <cstdio>

#include "engine.h"

void frame_input(engine::World &w)
{
    w.bodies.assign(1000, 1);
    w.frames++;
}
std::size_t frame_physics_count(engine::World &w) { return w.bodies.size(); }
void frame_physics(engine::World &w, std::size_t begin, std::size_t end)
{
    long n = 0;
    for (std::size_t i = begin; i < end; i++)
        n += w.bodies[i];
    w.moved += n;
}
void frame_draw(engine::World &w) { w.drawn = w.moved.load(); }

int main()
{
    dagrt *rt = dagrt_create(nullptr);
    if (!rt)
        return 1;
    engine::World w;
    int rc = 0;
    for (int f = 0; f < 5 && rc == 0; f++)
        rc = frame_run(rt, w);
    dagrt_destroy(rt);
    std::printf("engine: rc %d, frames %ld, drawn %ld\n", rc, w.frames, w.drawn);
    return rc != 0 || w.frames != 5 || w.drawn != 5000;
}
