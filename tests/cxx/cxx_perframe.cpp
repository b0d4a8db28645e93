// cxx_perframe.cpp - (language 2.2) the per-frame copies that dagc's C++
// back end lays out (pcopy_cxx.dag): the accessors give each frame's task
// its frame's copy and the previous frame's, in pipelines of depth 1-4, an
// instance's runs and pcx_run's; outside a frame, none.
#include <atomic>
#include <cstdio>

#include "pcopy_cxx.h"

namespace {

std::atomic<int> failures;
std::atomic<long> whole;      // copies found whole and of the right frame
std::atomic<long> unwritten;  // previous copies no frame wrote yet

unsigned long long number_of()
{
    dagrt_frame_info fi;
    if (dagrt_get_frame(&fi) != 0) {
        failures++;
        return 0;
    }
    return fi.number;
}

void check(const pcx_state *s, unsigned long long n, bool may_be_unwritten)
{
    if (!s) {
        failures++;
        return;
    }
    if (s->check == 0 && may_be_unwritten) {
        unwritten++;
        return;
    }
    bool ok = s->number == n && s->check == n * 3 + 1;
    for (unsigned k = 0; ok && k < 64; k++)
        ok = s->words[k] == n + k;
    if (ok)
        whole++;
    else if (failures++ < 5)
        std::fprintf(stderr, "cxx_perframe: frame %llu's copy torn or stale\n", n);
}

int expect(bool cond, const char *what, unsigned depth)
{
    if (cond)
        return 0;
    std::fprintf(stderr, "cxx_perframe: %s (depth %u): %d failures, %ld whole, %ld unwritten\n",
                 what, depth, failures.load(), whole.load(), unwritten.load());
    return 1;
}

void reset()
{
    failures = 0;
    whole = 0;
    unwritten = 0;
}

} // namespace

void pcx_w(struct pcx_ctx *)
{
    unsigned long long n = number_of();
    pcx_state *s = pcx_state_copy();
    if (!s) {
        failures++;
        return;
    }
    s->number = n;
    for (unsigned k = 0; k < 64; k++)
        s->words[k] = n + k;
    s->check = n * 3 + 1;
}

void pcx_r(struct pcx_ctx *)
{
    unsigned long long n = number_of();
    check(pcx_state_copy(), n, false);
    check(pcx_state_prev_copy(), n - 1, n == 0);
}

extern "C" int cxx_dagc_perframe(void)
{
    int bad = expect(pcx_state_copy() == nullptr && pcx_state_prev_copy() == nullptr,
                     "accessors outside a frame", 0);
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    dagrt *rt = dagrt_create(&cfg);
    if (!rt)
        return bad + 1;
    static pcx_ctx ctx;
    const int frames = 500;
    for (unsigned depth = 1; depth <= DAGRT_MAX_IN_FLIGHT; depth++) {
        static pcx_pipeline_t p;
        reset();
        bad += expect(pcx_pipeline_init(&p, depth) == 0, "init", depth);
        for (int f = 0; f < frames; f++)
            bad += expect(pcx_pipeline_submit(rt, &p, &ctx) == 0, "submit", depth);
        bad += expect(pcx_pipeline_drain(rt, &p) == 0, "drain", depth);
        // r reads 2 copies a frame; the first frame's previous copy is unwritten.
        bad += expect(failures == 0 && whole == 2 * frames - 1 && unwritten == 1, "pipeline", depth);
    }
    static pcx_instance_t inst;
    reset();
    bad += expect(pcx_instance_init(&inst) == 0, "instance init", 0);
    for (int f = 0; f < 50; f++)
        bad += expect(pcx_instance_run(rt, &inst, &ctx) == 0, "instance run", 0);
    bad += expect(failures == 0 && whole == 2 * 50 - 1 && unwritten == 1, "instance", 0);
    reset();
    for (int f = 0; f < 50; f++)
        bad += expect(pcx_run(rt, &ctx) == 0, "pcx_run", 0);
    // pcx_run's copies are static: unwritten only if no run came before.
    bad += expect(failures == 0 && whole + unwritten == 2 * 50 && unwritten <= 1, "pcx_run", 0);
    dagrt_destroy(rt);
    return bad;
}
