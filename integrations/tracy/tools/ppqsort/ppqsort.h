// The one call of PPQSort (GabTux/PPQSort, a parallel quicksort) that
// Tracy's server makes, ppqsort::sort with the parallel policy, done here
// serially by std::sort: PPQSort is neither in the package cache nor in
// Debian (../CMakeLists.txt). Same order; only the tools' load time differs.
#ifndef DAGRT_TRACY_PPQSORT_H
#define DAGRT_TRACY_PPQSORT_H
#include <algorithm>
namespace ppqsort {
namespace execution {
struct parallel_policy {};
inline constexpr parallel_policy par{};
}  // namespace execution
template <class It>
void sort(execution::parallel_policy, It first, It last) { std::sort(first, last); }
template <class It, class Cmp>
void sort(execution::parallel_policy, It first, It last, Cmp cmp) { std::sort(first, last, cmp); }
}  // namespace ppqsort
#endif
