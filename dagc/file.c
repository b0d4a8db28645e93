/*
 * file.c - the one reader of every input file (.dag sources, imports,
 * --profile traces), through the system seam (os.h), and the stem of a
 * path (util.h).
 */
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

static void limit_err(char *err, size_t errsz, const char *name, size_t limit)
{
    if (limit >= (1u << 20))
        snprintf(err, errsz, "cannot read '%s': file is larger than the %zu MiB limit", name,
                 limit >> 20);
    else
        snprintf(err, errsz, "cannot read '%s': file is larger than the %zu KiB limit", name,
                 limit >> 10);
}

int dg_read_file(const char *path, size_t limit, int regular_only, char **out, size_t *len,
                 char *err, size_t errsz)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *f = stdin;
    dg_os_file_kind kind = DG_OS_FILE_UNKNOWN;
    if (!is_stdin) {
        f = NULL;
        int e = dg_os_open_read(path, regular_only, &f, &kind);
        if (e) {
            snprintf(err, errsz, "cannot open '%s': %s", name, strerror(e));
            return -1;
        }
    }
    /* What was opened is checked (no window for a swap between a stat and
     * the open); a system that asked before opening left f NULL. */
    if (f) kind = dg_os_stream_kind(f);
    if (kind == DG_OS_FILE_DIR || (regular_only && kind == DG_OS_FILE_OTHER)) {
        snprintf(err, errsz, "cannot read '%s': %s", name,
                 kind == DG_OS_FILE_DIR ? strerror(EISDIR) : "not a regular file");
        if (f && !is_stdin) fclose(f);
        return -1;
    }
    /* Read in chunks rather than trusting st_size: pipes and /proc files
     * report 0, and the limit must hold whatever the file claims. */
    size_t cap = 64 * 1024, n = 0;
    char *p = dg_xmalloc(cap + 1);
    while (n <= limit) {
        if (n == cap) {
            cap *= 2;
            p = dg_xrealloc(p, cap + 1);
        }
        size_t want = cap - n;
        if (want > limit + 1 - n) want = limit + 1 - n;
        size_t got = fread(p + n, 1, want, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f), e = errno;
    if (!is_stdin) fclose(f);
    if (bad) {
        snprintf(err, errsz, "cannot read '%s': %s", name, strerror(e ? e : EIO));
        free(p);
        return -1;
    }
    if (n > limit) {
        limit_err(err, errsz, name, limit);
        free(p);
        return -1;
    }
    p[n] = 0;
    *out = p;
    *len = n;
    return 0;
}

size_t dg_path_stem(const char *path, const char **base)
{
    if (strcmp(path, "-") == 0 || strcmp(path, "<stdin>") == 0) {
        *base = "stdin";
        return 5;
    }
    const char *b = dg_path_base(path);
    size_t n = strlen(b);
    if (n > 4 && strcmp(b + n - 4, ".dag") == 0) n -= 4;
    *base = b;
    return n;
}
