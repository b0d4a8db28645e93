#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

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

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    /* FNV's low bits (the ones a power-of-two table uses) mix poorly for
     * names that differ only in their last digits: fold the high bits in. */
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9u;
    return h ^ (h >> 32);
}

void dg_map_free(dg_map *m)
{
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    m->keys = NULL;
    m->vals = NULL;
    m->hashes = NULL;
    m->cap = m->len = 0;
}

int dg_map_get(const dg_map *m, const char *key)
{
    if (!m->cap) return -1;
    size_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i]) return -1;
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) return m->vals[i];
    }
}

static void map_grow(dg_map *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const char **ok = m->keys;
    int *ov = m->vals;
    uint64_t *oh = m->hashes;
    size_t ocap = m->cap;
    m->keys = dg_xcalloc(ncap, sizeof *m->keys);
    m->vals = dg_xcalloc(ncap, sizeof *m->vals);
    m->hashes = dg_xcalloc(ncap, sizeof *m->hashes);
    m->cap = ncap;
    m->len = ocap ? m->len : 0;
    size_t mask = ncap - 1;
    for (size_t i = 0; i < ocap; i++) {
        if (!ok[i]) continue;
        size_t j = oh[i] & mask;
        while (m->keys[j]) j = (j + 1) & mask;
        m->keys[j] = ok[i];
        m->vals[j] = ov[i];
        m->hashes[j] = oh[i];
    }
    free(ok);
    free(ov);
    free(oh);
}

void dg_map_reserve(dg_map *m, size_t n)
{
    while ((n + 1) * 2 > m->cap) map_grow(m);
}

void dg_map_put(dg_map *m, const char *key, int val)
{
    if ((m->len + 1) * 2 > m->cap) map_grow(m);
    size_t mask = m->cap - 1;
    uint64_t h = hash_str(key);
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        if (!m->keys[i]) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->hashes[i] = h;
            m->len++;
            return;
        }
        if (m->hashes[i] == h && strcmp(m->keys[i], key) == 0) {
            m->vals[i] = val;
            return;
        }
    }
}

unsigned dg_edit_distance(const char *a, const char *b, unsigned cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return cap + 1; /* long names: no suggestion */
    if ((la > lb ? la - lb : lb - la) > cap) return cap + 1;
    unsigned row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0], best;
        row[0] = (unsigned)i;
        best = row[0];
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned v = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            if (up + 1 < v) v = up + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > cap) return cap + 1;
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

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
