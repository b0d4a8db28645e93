/*
 * fiber_scenarios.h - the fiber test scenarios, listed in fiber_list.h and
 * hosted by tests/scenario/ (Criterion, and the plain driver for the `tsan`
 * suite and the cross runs; docs/testing.md, "Scenarios"). Each returns the
 * number of violations it saw; 0 is a pass.
 */
#ifndef FIBER_SCENARIOS_H
#define FIBER_SCENARIOS_H

/* DAGC_TEST_SCALE (default 1.0) times n, at least 1. */
long fs_scaled(long n);

int fs_regs_preserved(void);      /* every callee-saved register + FP control */
int fs_pingpong(long rounds);     /* two fibers alternate, order checked */
int fs_guard_overflow(void);      /* overflow faults inside the guard page */
int fs_pool_bounded(void);        /* pool: bounded, reuse, one warning */
int fs_fp_state_isolated(void);   /* each fiber keeps its own FP control state */

#if defined(_WIN32)
/* win64_scenarios.c */
int fs_win64_tib(void);           /* TIB stack bounds follow the fiber; probes grow it */
int fs_win64_unwind(void);        /* a stack walk in a fiber ends at its entry */
int fs_guard_child(void);         /* the child process of fs_guard_overflow */
int fs_win64_overflow_report(void); /* the runtime names a fiber overflow */
int fs_overflow_child(int mode);  /* its child process */
#endif


#endif
