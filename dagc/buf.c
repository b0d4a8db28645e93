/*
 * buf.c - the heap-backed growable byte buffer (util.h).
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dg_buf_put(dg_buf *b, const void *p, size_t n)
{
    if (b->cap - b->len < n + 1) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n + 1) cap *= 2;
        b->p = dg_xrealloc(b->p, cap);
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = 0;
}

void dg_buf_putc(dg_buf *b, char c) { dg_buf_put(b, &c, 1); }
void dg_buf_puts(dg_buf *b, const char *s) { dg_buf_put(b, s, strlen(s)); }

void dg_buf_vprintf(dg_buf *b, const char *fmt, va_list ap)
{
    char tmp[256];
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    if (n < 0) {
        va_end(aq);
        return;
    }
    if ((size_t)n < sizeof tmp) {
        dg_buf_put(b, tmp, (size_t)n);
    } else {
        char *p = dg_xmalloc((size_t)n + 1);
        vsnprintf(p, (size_t)n + 1, fmt, aq);
        dg_buf_put(b, p, (size_t)n);
        free(p);
    }
    va_end(aq);
}

void dg_buf_printf(dg_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    dg_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void dg_buf_put_int(dg_buf *b, long long v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    dg_buf_put(b, tmp + i, sizeof tmp - i);
}

void dg_buf_free(dg_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}
