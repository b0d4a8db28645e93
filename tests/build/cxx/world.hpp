// The context types of frame.dag: C++ types a C header could not declare.
#ifndef DAGC_TEST_WORLD_HPP
#define DAGC_TEST_WORLD_HPP
#include <atomic>
#include <cstddef>
#include <functional>
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
} // namespace engine
#endif
