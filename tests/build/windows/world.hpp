// The Windows consumer's engine state: a C++ class in a namespace, which
// only dagc's C++ back end can take as a graph's context.
#ifndef DAGC_TEST_WIN_WORLD_HPP
#define DAGC_TEST_WIN_WORLD_HPP
#include <atomic>
#include <vector>

namespace engine {
struct World {
    std::vector<long> bodies;
    std::atomic<long> moved{0};
    long frames = 0;
    long drawn = 0;
};
} // namespace engine
#endif
