/*
 * io_list.h - the one list of the scenarios of waiting on the world
 * (docs/testing.md, "Scenarios"): SCENARIO(io, name, Criterion timeout,
 * flags), each the function NAME of io_scenarios.c; SCN_TSAN: also a
 * plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(io, io_cancel_nesting, 60, SCN_TSAN)
SCENARIO(io, io_cancel_cross_thread, 60, SCN_TSAN)
SCENARIO(io, io_clock, 60, SCN_TSAN)
SCENARIO(io, io_sleep_min, 60, SCN_TSAN)
SCENARIO(io, io_sleep_earlier, 60, SCN_TSAN)
SCENARIO(io, io_timed_wait, 60, SCN_TSAN)
SCENARIO(io, io_cancel_wakes, 60, SCN_TSAN)
SCENARIO(io, io_cond_hammer, 60, SCN_TSAN)
SCENARIO(io, io_cond_signals, 60, SCN_TSAN)
SCENARIO(io, io_timed_handoff, 60, SCN_TSAN)
SCENARIO(io, io_destroy_parked, 60, SCN_TSAN)
/* The I/O calls (io_ops.c): each twice, on the default reactor and with
 * the fallback (epoll and the blocking lane) forced: NAME_fb. POSIX
 * sockets and files: not in the Windows build (SCN_POSIX); the Windows
 * build has its own below (io_ops_win32.c, SCN_WIN). */
#if !defined(_WIN32)
SCENARIO(io, io_error_names, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_file_basic, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_file_basic_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_file_many, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_file_many_fb, 120, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_udp, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_udp_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_tcp, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_tcp_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_close_parked, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_close_parked_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_destroy_reads, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_destroy_reads_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_callers, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_callers_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_scope_cancel, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_scope_cancel_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_deadline, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_deadline_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_cancel_race, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_cancel_race_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_hot, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_hot_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_trace, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_trace_fb, 60, SCN_TSAN|SCN_POSIX)
#else
/* Windows (io_ops_win32.c): the completion port, and the blocking lane
 * forced (NAME_fb). Not here: io_trace (its handles are POSIX descriptors;
 * the trace's I/O records are the portable io.c's). */
SCENARIO(io, io_error_names, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_file_basic, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_file_basic_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_file_many, 120, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_file_many_fb, 120, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_udp, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_udp_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_tcp, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_tcp_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_close_parked, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_close_parked_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_destroy_reads, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_destroy_reads_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_callers, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_callers_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_scope_cancel, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_scope_cancel_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_deadline, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_deadline_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_cancel_race, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_cancel_race_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_idle_parked, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_idle_parked_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_event, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_event_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_hot, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_hot_fb, 60, SCN_TSAN|SCN_WIN)
#endif
