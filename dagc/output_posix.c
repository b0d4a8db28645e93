/*
 * output_posix.c - the POSIX half of the output layer (output_os.h): file
 * identities, the signal handler that removes temporaries when dagc is
 * interrupted, memory streams and backups. (Following symlinks,
 * temporaries and renames are the file writer's: runtime/os/file.h.)
 */
#define _POSIX_C_SOURCE 200809L
#include "output_os.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* ------------------------------------------------------------- identity */

dg_os_id dg_os_file_id(const char *path)
{
    dg_os_id id = {0, 0, false};
    struct stat st;
    int rc = strcmp(path, "-") == 0 ? fstat(STDIN_FILENO, &st) : stat(path, &st);
    if (rc == 0) {
        id.dev = (unsigned long long)st.st_dev;
        id.ino = (unsigned long long)st.st_ino;
        id.valid = true;
    }
    return id;
}

int dg_os_errno(int err)
{
    return err;   /* the file writer's errors are errno values here */
}

/* -------------------------------------------------------------- signals */

/* The handler only reads the table of temporaries (output_tmp.c) and
 * calls unlink(), sigaction() and raise(), which are async-signal-safe. */
/* Every signal whose default action ends the process without it being a
 * crash (a crash's state cannot be trusted to walk the table): the usual
 * interrupts, SIGPIPE (standard output, --dot -, is written before the
 * renames, and a reader that went away must not leave the temporaries
 * behind), the limits of ulimit -t and -f, timers, the user signals and
 * the real-time ones. */
static const int fixed_signals[] = {
    SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2,
    SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF,
#ifdef SIGPOLL
    SIGPOLL,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
#ifdef SIGPWR
    SIGPWR,
#endif
};
static sigset_t saved_mask;
static int hold_depth;

/* The fixed list plus SIGRTMIN..SIGRTMAX, which are not constants. */
static void handled_set(sigset_t *set)
{
    sigemptyset(set);
    for (size_t k = 0; k < sizeof fixed_signals / sizeof *fixed_signals; k++)
        sigaddset(set, fixed_signals[k]);
#if defined(SIGRTMIN) && defined(SIGRTMAX)
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaddset(set, sig);
#endif
}

static void on_signal(int sig)
{
    for (int i = 0; i < DG_OS_TMP_SLOTS; i++) {
        const char *p = dg_os_tmp_slots[i];
        if (p) unlink(p);
    }
    /* Die of the same signal, so the caller sees how dagc ended: with the
     * default action restored, the raised signal is delivered as soon as
     * this handler returns. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
    raise(sig);
}

void dg_os_signals_install(void)
{
    sigset_t all;
    handled_set(&all);
    /* 1..64 covers every signal number Linux, the BSDs and macOS have. */
    for (int sig = 1; sig < 65; sig++) {
        if (sigismember(&all, sig) != 1) continue;
        struct sigaction old, sa;
        /* A signal the caller ignores (nohup, a background job) stays
         * ignored: exec keeps only that disposition. */
        if (sigaction(sig, NULL, &old) != 0 || old.sa_handler == SIG_IGN) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        /* Every handled signal is blocked while one is handled, so the
         * handler never runs twice over the table. */
        sa.sa_mask = all;
        sigaction(sig, &sa, NULL);
    }
}

void dg_os_hold_signals(void)
{
    if (hold_depth++ > 0) return;
    sigset_t set;
    handled_set(&set);
    sigprocmask(SIG_BLOCK, &set, &saved_mask);
}

void dg_os_release_signals(void)
{
    if (--hold_depth > 0) return;
    sigprocmask(SIG_SETMASK, &saved_mask, NULL);
}

/* ---------------------------------------------------------------- files */

int dg_os_memory_stream(char **buf, size_t *len, FILE **fp)
{
    FILE *f = open_memstream(buf, len);
    if (!f) return errno;
    *fp = f;
    return 0;
}

int dg_os_stream_close(FILE *fp)
{
    return fclose(fp);
}

int dg_os_keep(const char *target, const char *backup)
{
    if (link(target, backup) == 0) return 0;
    int e = errno;
    if (e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == EMLINK || e == ENOSYS) {
        /* No hard links here: move the old file aside instead (then the
         * target is missing until the rename over it). */
        if (rename(target, backup) == 0) return 0;
        e = errno;
    }
    return e;
}
