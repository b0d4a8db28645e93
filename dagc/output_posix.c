/*
 * output_posix.c - the POSIX half of the output layer (output_os.h):
 * following symlinks, temporaries beside their targets, renames, and the
 * signal handler that removes temporaries when dagc is interrupted.
 */
#define _POSIX_C_SOURCE 200809L
#include "output_os.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

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

/* The contents of symlink PATH, malloc'd. */
static int read_link(const char *path, char **out)
{
    size_t cap = 256;
    for (;;) {
        char *buf = dg_xmalloc(cap);
        ssize_t n = readlink(path, buf, cap);
        if (n < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            *out = buf;
            return 0;
        }
        free(buf);
        cap *= 2;
    }
}

int dg_os_resolve(const char *path, char **target, dg_os_kind *kind)
{
    char *cur = dg_xmalloc(strlen(path) + 1);
    strcpy(cur, path);
    /* The limit the kernel applies to a path's symlinks (Linux: 40). */
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0) {
            int e = errno;
            if (e != ENOENT) {
                free(cur);
                return e;
            }
            /* Nothing there (a dangling symlink's target included): a new
             * file; a missing directory fails when the temporary is made. */
            *target = cur;
            *kind = DG_OS_NEW;
            return 0;
        }
        if (S_ISLNK(st.st_mode)) {
            char *dest = NULL;
            int e = read_link(cur, &dest);
            if (e) {
                free(cur);
                return e;
            }
            const char *slash = strrchr(cur, '/');
            if (dest[0] == '/' || !slash) {
                free(cur);
                cur = dest;
            } else {
                /* Relative to the directory holding the symlink. */
                size_t dl = (size_t)(slash - cur) + 1, ll = strlen(dest);
                char *next = dg_xmalloc(dl + ll + 1);
                memcpy(next, cur, dl);
                memcpy(next + dl, dest, ll + 1);
                free(cur);
                free(dest);
                cur = next;
            }
            continue;
        }
        *target = cur;
        if (S_ISREG(st.st_mode)) {
            *kind = DG_OS_REGULAR;
            return 0;
        }
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            *kind = DG_OS_DIRECT;
            return 0;
        }
        free(cur);
        *target = NULL;
        return S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    }
    free(cur);
    return ELOOP;
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

int dg_os_temp_create(const char *target, char **tmp, FILE **fp)
{
    size_t n = strlen(target);
    char *name = dg_xmalloc(n + sizeof ".tmp-XXXXXX");
    memcpy(name, target, n);
    memcpy(name + n, ".tmp-XXXXXX", sizeof ".tmp-XXXXXX");
    struct stat st;
    mode_t mode;
    if (stat(target, &st) == 0 && S_ISREG(st.st_mode)) {
        mode = st.st_mode & 0777;
    } else {
        mode_t m = umask(0);
        umask(m);
        mode = 0666 & ~m;
    }
    /* Created and registered with signals held: a signal in between would
     * otherwise leave the file behind. */
    dg_os_hold_signals();
    int fd = mkstemp(name);
    int e = fd < 0 ? errno : dg_os_remember(name);
    dg_os_release_signals();
    if (fd < 0) {
        free(name);
        return e;
    }
    if (e) {
        close(fd);
        unlink(name);
        free(name);
        return e;
    }
    /* mkstemp makes 0600. */
    (void)fchmod(fd, mode);
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        e = errno;
        close(fd);
        dg_os_forget(name);
        unlink(name);
        free(name);
        return e;
    }
    *tmp = name;
    *fp = f;
    return 0;
}

int dg_os_open_direct(const char *target, FILE **fp)
{
    int fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat st;
    /* What was opened is still a device or FIFO (not swapped meanwhile). */
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(fd);
        return EINVAL;
    }
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        int e = errno;
        close(fd);
        return e;
    }
    *fp = f;
    return 0;
}

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

int dg_os_rename(const char *from, const char *to)
{
    return rename(from, to) == 0 ? 0 : errno;
}

void dg_os_remove(const char *path)
{
    (void)unlink(path);
}
