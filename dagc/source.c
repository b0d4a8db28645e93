#define _POSIX_C_SOURCE 200809L
#include "source.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int dg_source_load(dg_source *s, const char *path, int regular_only, char *err, size_t errsz)
{
    memset(s, 0, sizeof *s);
    /* "-" is standard input, named so in diagnostics. */
    s->path = strcmp(path, "-") == 0 ? "<stdin>" : path;
    if (dg_read_file(path, DG_MAX_FILE_SIZE, regular_only, &s->text, &s->len, err, errsz) != 0) return -1;
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
