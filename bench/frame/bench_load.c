/*
 * bench_load.c - busy-looping processes for bench_frame --load. A process,
 * not a thread: the scheduler sees what it sees beside a game, another
 * program's thread that never blocks. Each child dies with its parent
 * (PR_SET_PDEATHSIG), so a killed benchmark leaves no spinning process.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include "bench_load.h"

#define MAX_LOAD 16

static pid_t kids[MAX_LOAD];
static int n_kids;

/* The child's whole life: only system calls that are safe after fork() in a
 * threaded program, then arithmetic on one word of its own stack. */
static void busy(pid_t parent)
{
#if defined(__linux__)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    if (getppid() != parent)
        _exit(0);
    volatile uint64_t x = 1;
    for (;;)
        x = x * UINT64_C(6364136223846793005) + 1;
}

int bench_load_start(int n)
{
    pid_t me = getpid();
    if (n > MAX_LOAD)
        n = MAX_LOAD;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0)
            busy(me);
        if (p < 0) {
            bench_load_stop();
            return -1;
        }
        kids[n_kids++] = p;
    }
    return 0;
}

void bench_load_stop(void)
{
    for (int i = 0; i < n_kids; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    n_kids = 0;
}
