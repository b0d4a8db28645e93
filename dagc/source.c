#define _POSIX_C_SOURCE 200809L
#include "source.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void index_lines(dg_source *s)
{
    size_t cap = 64, n = 0;
    uint32_t *l = dg_xmalloc(cap * sizeof *l);
    if (s->len >= 3 && memcmp(s->text, "\xEF\xBB\xBF", 3) == 0) s->start = 3;
    l[n++] = (uint32_t)s->start;
    for (size_t i = s->start; i < s->len; i++) {
        if (s->text[i] != '\n') continue;
        if (n == cap) l = dg_xrealloc(l, (cap *= 2) * sizeof *l);
        l[n++] = (uint32_t)(i + 1);
    }
    s->lines = l;
    s->nlines = (uint32_t)n;
}

void dg_source_from_memory(dg_source *s, const char *path, const char *p, size_t n)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->text = dg_xmalloc(n + 1);
    if (n) memcpy(s->text, p, n);
    s->text[n] = 0;
    s->len = n;
    index_lines(s);
}

int dg_source_load(dg_source *s, const char *path, char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsz, "cannot open '%s': %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errsz, "cannot read '%s': %s", path, strerror(EISDIR));
        fclose(f);
        return -1;
    }
    /* Read in chunks rather than trusting st_size: pipes and /proc files
     * report 0, and the size limit must hold whatever the file claims. */
    size_t cap = 64 * 1024, n = 0;
    char *p = dg_xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > DG_MAX_FILE_SIZE) break;
            cap *= 2;
            p = dg_xrealloc(p, cap + 1);
        }
        size_t got = fread(p + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        snprintf(err, errsz, "cannot read '%s': %s", path, strerror(errno ? errno : EIO));
        free(p);
        fclose(f);
        return -1;
    }
    fclose(f);
    if (n > DG_MAX_FILE_SIZE) {
        snprintf(err, errsz, "cannot read '%s': file is larger than the %zu MiB limit",
                 path, DG_MAX_FILE_SIZE >> 20);
        free(p);
        return -1;
    }
    p[n] = 0;
    s->text = p;
    s->len = n;
    index_lines(s);
    return 0;
}

void dg_source_free(dg_source *s)
{
    free(s->text);
    free(s->lines);
    memset(s, 0, sizeof *s);
}

const char *dg_source_line(const dg_source *s, uint32_t line, size_t *len)
{
    if (line == 0 || line > s->nlines) {
        *len = 0;
        return "";
    }
    size_t b = s->lines[line - 1];
    size_t e = line < s->nlines ? s->lines[line] - 1 : s->len;
    if (e > b && s->text[e - 1] == '\r') e--;
    *len = e - b;
    return s->text + b;
}
