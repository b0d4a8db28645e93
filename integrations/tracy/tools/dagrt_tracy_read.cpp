// dagrt-tracy-read FILE.tracy: what a capture holds that tracy-csvexport
// does not print, read through Tracy's own server library (the one
// tracy-capture and tracy-csvexport use), one fact a line, for
// tests/integrations/tracy_e2e.py:
//   frames NAME continuous|discontinuous COUNT OPEN   (OPEN: not ended)
//   fiber NAME ENTERS ZONES                           (a fiber track)
//   thread NAME ZONES
//   zones TOTAL OPEN                                  (OPEN: never ended)
//   plot NAME POINTS
//   message TEXT
#include <stdio.h>
#include <stdint.h>

#include <memory>

#include "TracyFileRead.hpp"
#include "TracyWorker.hpp"

namespace {

struct Count {
    uint64_t zones = 0, open = 0;
};

void walk(const tracy::Worker& w, const tracy::ZoneEvent& z, Count& c)
{
    c.zones++;
    if (!z.IsEndValid() || z.End() < z.Start())
        c.open++;
    if (!z.HasChildren())
        return;
    auto& ch = w.GetZoneChildren(z.Child());
    if (ch.is_magic()) {
        auto& vec = *(tracy::Vector<tracy::ZoneEvent>*)&ch;
        for (auto& v : vec)
            walk(w, v, c);
    } else {
        for (auto& v : ch)
            walk(w, *v, c);
    }
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dagrt-tracy-read FILE.tracy\n");
        return 2;
    }
    std::unique_ptr<tracy::FileRead> f(tracy::FileRead::Open(argv[1]));
    if (!f) {
        fprintf(stderr, "dagrt-tracy-read: cannot open %s\n", argv[1]);
        return 1;
    }
    tracy::Worker w(*f);
    for (auto fd : w.GetFrames()) {
        uint64_t open = 0;
        for (auto& e : fd->frames)
            open += !fd->continuous && e.end < 0;
        printf("frames %s %s %zu %llu\n", fd->name == 0 ? "(default)" : w.GetString(fd->name),
               fd->continuous ? "continuous" : "discontinuous", w.GetFrameCount(*fd),
               (unsigned long long)open);
    }
    Count all;
    for (auto td : w.GetThreadData()) {
        Count c;
        if (td->timeline.is_magic()) {
            auto& vec = *(tracy::Vector<tracy::ZoneEvent>*)&td->timeline;
            for (auto& v : vec)
                walk(w, v, c);
        } else {
            for (auto& v : td->timeline)
                walk(w, *v, c);
        }
        all.zones += c.zones;
        all.open += c.open;
        if (td->isFiber) {
            auto cs = w.GetContextSwitchData(td->id);
            printf("fiber %s %zu %llu\n", w.GetThreadName(td->id), cs ? cs->v.size() : (size_t)0,
                   (unsigned long long)c.zones);
        } else {
            printf("thread %s %llu\n", w.GetThreadName(td->id), (unsigned long long)c.zones);
        }
    }
    printf("zones %llu %llu\n", (unsigned long long)all.zones, (unsigned long long)all.open);
    for (auto p : w.GetPlots())
        if (p->type == tracy::PlotType::User)
            printf("plot %s %zu\n", w.GetString(p->name), p->data.size());
    for (auto& m : w.GetMessages())
        printf("message %s\n", w.GetString(m->ref));
    return 0;
}
