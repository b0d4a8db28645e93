// The context types of frame.dag: C++ types a C header could not declare.
#ifndef DAGC_TEST_WORLD_HPP
#define DAGC_TEST_WORLD_HPP
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace engine {
struct World {
    std::vector<long> values;
    std::atomic<long> total{0};
    long reported = 0;
    bool want_check = true;
    int checked = 0;
};

template <typename T, int N> struct Pool {
    T items[N] = {};
    int filled = 0;
    T sum = 0;
};

// A pipeline's frames each hold a copy of a shared_ptr: the copies must
// all be destroyed once the frames have been waited for.
struct Counter {
    std::atomic<int> runs{0};
    std::atomic<int> overlap{0};
    std::atomic<int> active{0};
};
// A large world passed by reference: a started run keeps a pointer to it,
// so instances and pipelines must not grow with it (main.cpp checks).
struct Big {
    long cells[512] = {};
    std::atomic<int> ticks{0};
};
} // namespace engine
#endif
