/*
 * wait_list.h - the one list of the scenarios of waiting on the world
 * (runtime/wait/; docs/testing.md, "Scenarios"): SCENARIO(group, name,
 * Criterion timeout, flags). Group wait: the waits themselves
 * (wait_scenarios.c), each named after what it waits on: timer_* (the
 * clock, sleeps), cancel_* (cancel scopes), sync_* (the sync objects'
 * timed waits), wait_* (every kind at once). Group io: the I/O calls
 * (io_*: io_ops.c, io_trace.c and their system sides). SCN_TSAN: also a
 * plain-driver test in suite tsan. One entry a line:
 * tests/scenario/meson.build reads this file too.
 */
SCENARIO(wait, cancel_nesting, 60, SCN_TSAN)
SCENARIO(wait, cancel_cross_thread, 60, SCN_TSAN)
SCENARIO(wait, timer_clock, 60, SCN_TSAN)
SCENARIO(wait, timer_sleep_min, 60, SCN_TSAN)
SCENARIO(wait, timer_sleep_earlier, 60, SCN_TSAN)
SCENARIO(wait, timer_sleep_busy_adder, 60, SCN_TSAN)
SCENARIO(wait, sync_timed_wait, 60, SCN_TSAN)
SCENARIO(wait, cancel_wakes, 60, SCN_TSAN)
SCENARIO(wait, sync_cond_hammer, 60, SCN_TSAN)
SCENARIO(wait, sync_cond_signals, 60, SCN_TSAN)
SCENARIO(wait, sync_timed_handoff, 60, SCN_TSAN)
SCENARIO(wait, sync_event_free, 60, SCN_TSAN)
SCENARIO(wait, wait_destroy_parked, 60, SCN_TSAN)
/* The I/O calls, each written once over the shim (io_ops.c, io_deadline.c,
 * io_trace.c; io_ops.h): each twice, on the default reactor and with the
 * fallback forced (NAME_fb: epoll and the blocking lane on Linux, the
 * blocking lane on Windows). */
SCENARIO(io, io_error_names, 60, SCN_TSAN)
SCENARIO(io, io_file_basic, 60, SCN_TSAN)
SCENARIO(io, io_file_basic_fb, 60, SCN_TSAN)
SCENARIO(io, io_file_many, 120, SCN_TSAN)
SCENARIO(io, io_file_many_fb, 120, SCN_TSAN)
SCENARIO(io, io_udp, 60, SCN_TSAN)
SCENARIO(io, io_udp_fb, 60, SCN_TSAN)
SCENARIO(io, io_tcp, 60, SCN_TSAN)
SCENARIO(io, io_tcp_fb, 60, SCN_TSAN)
SCENARIO(io, io_close_parked, 60, SCN_TSAN)
SCENARIO(io, io_close_parked_fb, 60, SCN_TSAN)
SCENARIO(io, io_destroy_reads, 60, SCN_TSAN)
SCENARIO(io, io_destroy_reads_fb, 60, SCN_TSAN)
SCENARIO(io, io_poll_callers, 60, SCN_TSAN)
SCENARIO(io, io_poll_callers_fb, 60, SCN_TSAN)
SCENARIO(io, io_poll_past, 60, SCN_TSAN)
SCENARIO(io, io_poll_past_fb, 60, SCN_TSAN)
SCENARIO(io, io_scope_cancel, 60, SCN_TSAN)
SCENARIO(io, io_scope_cancel_fb, 60, SCN_TSAN)
SCENARIO(io, io_poll_deadline, 60, SCN_TSAN)
SCENARIO(io, io_poll_deadline_fb, 60, SCN_TSAN)
SCENARIO(io, io_cancel_race, 60, SCN_TSAN)
SCENARIO(io, io_cancel_race_fb, 60, SCN_TSAN)
SCENARIO(io, io_hot, 60, SCN_TSAN)
SCENARIO(io, io_hot_fb, 60, SCN_TSAN)
SCENARIO(io, io_trace, 60, SCN_TSAN)
SCENARIO(io, io_trace_fb, 60, SCN_TSAN)
SCENARIO(io, io_scope_deadline, 60, SCN_TSAN)
SCENARIO(io, io_scope_deadline_fb, 60, SCN_TSAN)
SCENARIO(io, io_error_codes, 60, SCN_TSAN)
/* What only POSIX systems have (io_ops_posix.c: the observer of an I/O
 * wait, io_uring's fast path and batches, an idle runtime's context
 * switches, a group wait from outside; io_edges_posix.c: the calls at their
 * edges; io_ready_posix.c: the fallback without RWF_NOWAIT). */
#if !defined(_WIN32)
SCENARIO(io, io_observe, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_observe_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_fast_path, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_fast_path_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_batch_reads, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_batch_reads_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_idle, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_idle_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_sigpipe, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_sigpipe_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_handle_range, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_handle_range_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_accept_refused, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_accept_refused_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_err_only, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_poll_err_only_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_start_emfile, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_start_emfile_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_last_os_error, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_last_os_error_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(io, io_ready_path_fb, 60, SCN_TSAN|SCN_POSIX)
SCENARIO(wait, wait_group_foreign, 60, SCN_TSAN|SCN_POSIX)
#else
/* What only Windows has (io_ops_win32.c): an idle runtime with calls
 * parked on the port and on the lane, readiness of an event. */
SCENARIO(io, io_idle_parked, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_idle_parked_fb, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_event, 60, SCN_TSAN|SCN_WIN)
SCENARIO(io, io_poll_event_fb, 60, SCN_TSAN|SCN_WIN)
#endif
