/*
 * coro_list.h - the scenarios of the coroutine header (dagrt_coro.hpp,
 * C++20; runtime/include/, docs/testing.md "Scenarios"): SCENARIO(group,
 * name, Criterion timeout, flags), each int coro_NAME(void) of
 * coro_scenarios.cpp. The I/O ones run on the default reactor and again
 * with the fallback forced (dagrt_config.io_fallback). One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(coro, coro_tasks, 120, SCN_TSAN)
SCENARIO(coro, coro_sync_waits, 120, SCN_TSAN)
SCENARIO(coro, coro_cancel_scopes, 120, SCN_TSAN)
SCENARIO(coro, coro_on_main, 120, SCN_TSAN)
SCENARIO(coro, coro_with_fiber, 120, SCN_TSAN)
SCENARIO(coro, coro_fifo, 120, SCN_TSAN)
SCENARIO(coro, coro_fifo_mixed, 120, SCN_TSAN)
SCENARIO(coro, coro_misuse, 60, SCN_TSAN)
SCENARIO(coro, coro_destroy_suspended, 120, SCN_TSAN)
SCENARIO(coro, coro_graph_wait, 120, SCN_TSAN)
SCENARIO(coro, coro_graph_node, 120, SCN_TSAN)
#if !defined(_WIN32)
SCENARIO(coro, coro_io, 120, SCN_TSAN | SCN_POSIX)
SCENARIO(coro, coro_io_fallback, 120, SCN_TSAN | SCN_POSIX)
SCENARIO(coro, coro_park_10k, 300, SCN_TSAN | SCN_POSIX)
SCENARIO(coro, coro_park_10k_fallback, 300, SCN_TSAN | SCN_POSIX)
#endif
