// dagrt.h from C++ (C++11 and later): compiled by cxx_check.sh with g++
// and clang++ under -Wall -Wextra -Wpedantic -Werror, then run: the
// inline fork/join, a spawn, a parallel-for and a hand-written graph table
// in the form dagc's C++ back end writes.
#include "dagrt.h"

#include <atomic>
#include <cstdio>

namespace {
struct fib_arg {
    dagrt *rt;
    int n;
    long r;
};

long fib(dagrt *rt, dagrt_worker *w, int n);

extern "C" void fib_task(void *p)
{
    fib_arg *a = static_cast<fib_arg *>(p);
    a->r = fib(a->rt, dagrt_worker_get(a->rt), a->n);
}

long fib(dagrt *rt, dagrt_worker *w, int n)
{
    if (n < 2)
        return n;
    fib_arg a = {rt, n - 1, 0};
    dagrt_forked f;
    dagrt_fork(w, &f, fib_task, &a);
    long y = fib(rt, w, n - 2);
    if (dagrt_join_take(w, &f))
        a.r = fib(rt, w, a.n);
    return a.r + y;
}

std::atomic<long> counted(0);

extern "C" void count_one(void *) { counted++; }
extern "C" void add_range(void *, size_t b, size_t e) { counted += static_cast<long>(e - b); }

extern "C" void node_a(void *) { counted += 100; }

const uint32_t succ[] = {1, UINT32_MAX};
const dagrt_node nodes[] = {
    {"a", DAGRT_NODE_TASK, DAGRT_JOIN_AND, 0, 0, 0, 1, 0, node_a, nullptr, nullptr, nullptr, 0, 0, 0},
    {"b", DAGRT_NODE_TASK, DAGRT_JOIN_AND, DAGRT_NODE_MAIN, 1, 1, 0, 0, node_a, nullptr, nullptr, nullptr, 0, 0, 0},
};
const dagrt_graph graph = {DAGRT_GRAPH_VERSION, 2, 1, 0, "g", nodes, succ, 0, nullptr, nullptr};
dagrt_node_state node_state[2];
dagrt_graph_state state = DAGRT_GRAPH_STATE_INIT(node_state);
} // namespace

int main()
{
    dagrt_config cfg;
    dagrt_config_init(&cfg);
    cfg.workers = 2;
    int err = 0;
    dagrt *rt = dagrt_create_ex(&cfg, &err);
    if (!rt) {
        std::printf("dagrt_create_ex: %s\n", dagrt_strerror(err));
        return 1;
    }
    fib_arg top = {rt, 20, 0};
    dagrt_group g;
    dagrt_group_init(&g);
    int rc = dagrt_spawn(rt, &g, fib_task, &top);
    rc |= dagrt_spawn(rt, &g, count_one, nullptr);
    rc |= dagrt_group_wait(rt, &g);
    rc |= dagrt_parallel_for(rt, 0, 1000, 0, add_range, nullptr);
    rc |= dagrt_graph_run(rt, &graph, &state, nullptr);
    dagrt_graph_stats st;
    rc |= dagrt_graph_get_stats(&state, &st);
    dagrt_destroy(rt);
    bool ok = rc == 0 && top.r == 6765 && counted == 1201 && st.last_ran == 2;
    std::printf("header: fib %ld, counted %ld, graph ran %u: %s\n", top.r, counted.load(),
                static_cast<unsigned>(st.last_ran), ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}
