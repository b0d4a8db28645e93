/*
 * arena.c - memory: the allocators that abort on OOM, the arena that owns
 * one compilation's memory, and the strings made in it (util.h).
 */
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dg_arena_block {
    dg_arena_block *next;
    max_align_t align[]; /* payload */
};

void *dg_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fputs("dagc: fatal error: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *dg_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fputs("dagc: fatal error: out of memory\n", stderr);
        abort();
    }
    return p;
}

void *dg_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fputs("dagc: fatal error: out of memory\n", stderr);
        abort();
    }
    return p;
}

void dg_arena_init(dg_arena *a)
{
    a->head = NULL;
    a->used = a->cap = 0;
}

void dg_arena_free(dg_arena *a)
{
    dg_arena_block *b = a->head;
    while (b) {
        dg_arena_block *n = b->next;
        free(b);
        b = n;
    }
    dg_arena_init(a);
}

void dg_arena_reset(dg_arena *a)
{
    if (!a->head) return;
    dg_arena_block *b = a->head->next;
    while (b) {
        dg_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head->next = NULL;
    /* Handed-out memory must be zero (dg_alloc's promise). */
    memset(a->head->align, 0, a->used);
    a->used = 0;
}

void *dg_alloc(dg_arena *a, size_t n)
{
    const size_t al = sizeof(max_align_t);
    n = (n + al - 1) / al * al;
    if (!a->head || a->cap - a->used < n) {
        /* Blocks grow geometrically so a 100k-node graph costs few mallocs. */
        size_t cap = a->cap ? a->cap * 2 : 64 * 1024;
        if (cap > 16u << 20) cap = 16u << 20;
        if (cap < n) cap = n;
        /* calloc: large blocks come straight from mmap, already zero, so
         * handing out zeroed memory costs no memset. Arena memory is never
         * reused, so it stays zero until handed out. */
        dg_arena_block *b = dg_xcalloc(1, sizeof *b + cap);
        b->next = a->head;
        a->head = b;
        a->cap = cap;
        a->used = 0;
    }
    char *p = (char *)a->head->align + a->used;
    a->used += n;
    return p;
}

char *dg_strndup(dg_arena *a, const char *s, size_t n)
{
    char *p = dg_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *dg_strdup(dg_arena *a, const char *s)
{
    return dg_strndup(a, s, strlen(s));
}

char *dg_printf(dg_arena *a, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = dg_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
    if (n > 0) vsnprintf(p, (size_t)n + 1, fmt, aq);
    va_end(aq);
    return p;
}

void dg_fit(char *dst, size_t dstsz, const char *msg, size_t len)
{
    if (dstsz == 0) return;
    if (len < dstsz) {
        memcpy(dst, msg, len);
        dst[len] = 0;
        return;
    }
    char tail[48];
    /* The count's own length depends on the cut: 20 digits bound it. */
    size_t room = dstsz > sizeof tail ? dstsz - sizeof tail : 0;
    /* Back over continuation bytes (10xxxxxx) to a character's start. */
    while (room > 0 && ((unsigned char)msg[room] & 0xC0) == 0x80) room--;
    int n = snprintf(tail, sizeof tail, " [... %zu more bytes]", len - room);
    if (n < 0 || (size_t)n >= dstsz) {
        dst[0] = 0;
        return;
    }
    memcpy(dst, msg, room);
    memcpy(dst + room, tail, (size_t)n + 1);
}
