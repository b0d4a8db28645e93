/*
 * os_posix.c - dagc's system seam (os.h) on POSIX systems.
 */
#define _XOPEN_SOURCE 700   /* realpath */
#include "os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#if defined(__GLIBC__)
#  include <malloc.h>
#endif
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *dg_path_base(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/') b = p + 1;
    return b;
}

int dg_path_is_abs(const char *path)
{
    return path[0] == '/';
}

char *dg_realpath(const char *path)
{
    return realpath(path, NULL);
}

int dg_os_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

int dg_os_open_read(const char *path, int regular_only, FILE **fp, dg_os_file_kind *kind)
{
    (void)regular_only;
    *kind = DG_OS_FILE_UNKNOWN;
    /* Opened non-blocking: a FIFO without a writer would otherwise hold
     * open() forever. What was opened is then checked by the caller (no
     * window for a swap between a stat and the open), and a FIFO that is
     * allowed (the main input, as in dagc <(gen)) reads blocking again;
     * one nobody writes reads as empty. */
    FILE *f = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "rb"))) {
        int e = errno;
        close(fd);
        return e;
    }
    *fp = f;
    return 0;
}

dg_os_file_kind dg_os_stream_kind(FILE *fp)
{
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) return DG_OS_FILE_UNKNOWN;
    return S_ISREG(st.st_mode) ? DG_OS_FILE_REGULAR
         : S_ISDIR(st.st_mode) ? DG_OS_FILE_DIR
         : DG_OS_FILE_OTHER;
}

void dg_os_binary_stdio(void)
{
    /* POSIX streams carry bytes as they are. */
}

int dg_os_is_terminal(FILE *fp)
{
    return isatty(fileno(fp));
}

long dg_os_read_some(FILE *fp, void *buf, size_t n)
{
    for (;;) {
        ssize_t r = read(fileno(fp), buf, n);
        if (r < 0 && errno == EINTR) continue;
        return (long)r;
    }
}

int dg_os_input_ready(FILE *fp)
{
    struct pollfd p = {fileno(fp), POLLIN, 0};
    int r = poll(&p, 1, 0);
    return r < 0 ? -1 : r > 0;
}

int dg_os_list_dir(const char *dir, void (*each)(void *user, const char *name, int is_dir),
                   void *user)
{
    DIR *d = opendir(dir);
    if (!d) return errno;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        char path[4096];
        struct stat st;
        int is_dir = snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path &&
                     stat(path, &st) == 0 && S_ISDIR(st.st_mode);
        each(user, e->d_name, is_dir);
    }
    closedir(d);
    return 0;
}

void dg_os_keep_freed_memory(void)
{
#if defined(__GLIBC__)
    /* glibc maps large blocks on their own and trims the heap's top as
     * soon as it is free: a 100,000-node file's compile then faulted its
     * 100 MB back in at each change (a quarter of its time in the kernel,
     * and its user time doubled by the cold pages). Blocks up to glibc's
     * largest threshold (32 MiB) come from the heap, which keeps 1 GiB
     * before it trims and grows 64 MiB at a time. */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
#endif
}
