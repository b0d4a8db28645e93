/*
 * os/file_linux.c - the file writer's system calls (os/file.h) on Linux and
 * other POSIX systems: following symlinks, temporaries beside their
 * targets, streams written in place, renames. Compiled into libdagrt (the
 * trace writer) and into dagc (its output files).
 */
#define _POSIX_C_SOURCE 200809L
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A symlink's contents, malloc'd; 0 or errno. */
static int read_link(const char *path, char **out)
{
    for (size_t cap = 256;; cap *= 2) {
        char *buf = malloc(cap);
        if (!buf)
            return ENOMEM;
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
    }
}

static int kind_of(mode_t m, rt_os_file_kind *kind)
{
    if (S_ISDIR(m))
        return EISDIR;
    *kind = S_ISREG(m) ? RT_OS_FILE_REGULAR
          : S_ISCHR(m) || S_ISFIFO(m) ? RT_OS_FILE_STREAM : RT_OS_FILE_OTHER;
    return 0;
}

int rt_os_file_resolve(const char *path, char **target, rt_os_file_kind *kind)
{
    struct stat st;
    /* A stream first, through every link: /dev/stdout leads through
     * /proc/self/fd/1 to a name like "pipe:[1234]" that no walk can
     * follow, yet opening it opens the pipe. */
    if (stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        *kind = RT_OS_FILE_STREAM;
        *target = strdup(path);
        return *target ? 0 : ENOMEM;
    }
    char *cur = strdup(path);
    if (!cur)
        return ENOMEM;
    /* The limit the kernel applies to a path's symlinks (Linux: 40). */
    for (int hops = 0; hops < 40; hops++) {
        if (lstat(cur, &st) != 0) {
            int e = errno;
            if (e != ENOENT) {
                free(cur);
                return e;
            }
            /* Nothing there (a dangling link's target too): a new file; a
             * missing directory fails when the temporary is made. */
            *target = cur;
            *kind = RT_OS_FILE_NEW;
            return 0;
        }
        if (!S_ISLNK(st.st_mode)) {
            int e = kind_of(st.st_mode, kind);
            if (e) {
                free(cur);
                return e;
            }
            *target = cur;
            return 0;
        }
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
            continue;
        }
        /* Relative to the directory holding the link. */
        size_t dl = (size_t)(slash - cur) + 1, ll = strlen(dest);
        char *next = malloc(dl + ll + 1);
        if (!next) {
            free(cur);
            free(dest);
            return ENOMEM;
        }
        memcpy(next, cur, dl);
        memcpy(next + dl, dest, ll + 1);
        free(cur);
        free(dest);
        cur = next;
    }
    free(cur);
    return ELOOP;
}

/* Temporaries made so far by this process: with the process id, a name
 * no other write uses, whichever thread (or runtime) writes. */
static _Atomic unsigned long temp_count;

/* Creates path, which must not exist yet, for writing: mode 0666 less the
 * umask, or the mode of `replaces` when that is a regular file. */
static int create(const char *path, const char *replaces, FILE **f)
{
    struct stat st;
    bool keep = replaces && stat(replaces, &st) == 0 && S_ISREG(st.st_mode);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0)
        return errno;
    /* The replaced file's mode, exactly (the umask shaped it once already). */
    if (keep)
        (void)fchmod(fd, st.st_mode & 07777);
    *f = fdopen(fd, "wb");
    if (!*f) {
        int e = errno;
        close(fd);
        unlink(path);
        return e;
    }
    return 0;
}

int rt_os_file_temp(const char *target, char *name, size_t n, FILE **f)
{
    int e = EEXIST;
    /* A name left by an earlier process of the same id is skipped. */
    for (int tries = 0; tries < 16 && e == EEXIST; tries++) {
        /* relaxed: only the count's uniqueness matters, no data hangs on it. */
        unsigned long k = atomic_fetch_add_explicit(&temp_count, 1, memory_order_relaxed) + 1;
        snprintf(name, n, "%s.tmp-%ld.%lu", target, (long)getpid(), k);
        e = create(name, target, f);
    }
    return e;
}

int rt_os_file_open_stream(const char *path, bool wait_reader, FILE **f)
{
    /* Without wait_reader, O_NONBLOCK: a FIFO nobody reads fails at once
     * (ENXIO) instead of holding the program until a reader comes. */
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (wait_reader ? 0 : O_NONBLOCK));
    if (fd < 0)
        return errno;
    struct stat st;
    int fl;
    if (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        close(fd);
        return EINVAL;   /* swapped for something else since resolved */
    }
    /* Then blocking writes: a slow reader is waited for, not lost. */
    if (!wait_reader &&
        ((fl = fcntl(fd, F_GETFL)) == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1)) {
        int e = errno;
        close(fd);
        return e;
    }
    *f = fdopen(fd, "wb");
    if (!*f) {
        int e = errno;
        close(fd);
        return e;
    }
    return 0;
}

int rt_os_file_replace(const char *tmp, const char *path)
{
    return rename(tmp, path) == 0 ? 0 : errno;
}

int rt_os_file_remove(const char *path)
{
    return unlink(path) == 0 ? 0 : errno;
}

int rt_os_last_error(void)
{
    return errno;
}
