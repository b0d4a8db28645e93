/*
 * util.h - what every stage shares, one section per room: arena.c (an arena
 * that owns all of one compilation's memory, so a failed run frees
 * everything at once and no stage needs a destructor, and the strings made
 * in it), buf.c (a growable byte buffer), map.c (a string map), suggest.c
 * (spelling suggestions), file.c (the one reader of input files). What the
 * system provides is os.h.
 */
#ifndef DAGC_UTIL_H
#define DAGC_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The printf archetype of format attributes: MinGW-w64's C99 printf
 * (__USE_MINGW_ANSI_STDIO, meson.build) is gnu_printf, not msvcrt's. */
#if defined(__MINGW32__)
#  define DG_PRINTF_FMT __MINGW_PRINTF_FORMAT
#else
#  define DG_PRINTF_FMT printf
#endif

/* ------------------------------------------ arena.c: arena and strings */

typedef struct dg_arena_block dg_arena_block;
typedef struct dg_arena {
    dg_arena_block *head;
    size_t used, cap;    /* in the head block */
} dg_arena;

void dg_arena_init(dg_arena *a);
void dg_arena_free(dg_arena *a);
/* Zeroed memory; aborts on OOM (a compiler has nothing sensible to do then). */
void *dg_alloc(dg_arena *a, size_t n);
/* Makes all of the arena's memory free again, keeping its newest block
 * (for scratch arenas reused in a loop). */
void dg_arena_reset(dg_arena *a);
char *dg_strndup(dg_arena *a, const char *s, size_t n);
char *dg_strdup(dg_arena *a, const char *s);
char *dg_printf(dg_arena *a, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 2, 3)));

/* ----------------------------------------------------- buf.c: buffer */

/* Heap-backed growable array of bytes. */
typedef struct dg_buf {
    char *p;
    size_t len, cap;
} dg_buf;
void dg_buf_put(dg_buf *b, const void *p, size_t n);
void dg_buf_putc(dg_buf *b, char c);
void dg_buf_puts(dg_buf *b, const char *s);
void dg_buf_printf(dg_buf *b, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 2, 3)));
void dg_buf_vprintf(dg_buf *b, const char *fmt, va_list ap);
/* Decimal, without printf (the C back end writes millions of them). */
void dg_buf_put_int(dg_buf *b, long long v);
void dg_buf_free(dg_buf *b);

/* -------------------------------------------------------- map.c: map */

/* Open-addressing map from NUL-terminated string to an int (>= 0).
 * Keys are not copied: they must outlive the map (arena strings do). */
typedef struct dg_map {
    const char **keys;
    int *vals;
    uint64_t *hashes;
    size_t cap, len;
} dg_map;
void dg_map_free(dg_map *m);
/* Returns the stored value, or -1. */
int dg_map_get(const dg_map *m, const char *key);
/* Inserts or replaces. */
void dg_map_put(dg_map *m, const char *key, int val);
/* Makes room for n keys without rehashing. */
void dg_map_reserve(dg_map *m, size_t n);

/* ------------------------------------ arena.c: allocators, message fit */

/* malloc and friends that abort on OOM. */
void *dg_xmalloc(size_t n);
void *dg_xrealloc(void *p, size_t n);
void *dg_xcalloc(size_t n, size_t sz);

/* Copies LEN bytes of MSG into DST (size DSTSZ, NUL-terminated). A message
 * that does not fit is cut at a UTF-8 character boundary and ends with a
 * count of what was left out ("... [123 more bytes]"). */
void dg_fit(char *dst, size_t dstsz, const char *msg, size_t len);

/* ---------------------------------------------- file.c: reading inputs */

/* Reads a whole file into a malloc'd, NUL-terminated buffer (*len bytes
 * before the NUL). PATH "-" reads standard input. Refuses a file over
 * LIMIT bytes (reading at most LIMIT + 1, whatever its size claims) and,
 * when regular_only, anything but a regular file (symlinks followed).
 * Returns 0, or -1 with a message naming PATH and the reason in err. */
int dg_read_file(const char *path, size_t limit, int regular_only, char **out, size_t *len,
                 char *err, size_t errsz);

/* The base name of PATH without a ".dag" suffix: *base points into PATH
 * and the stem's length is returned. Standard input ("-" or "<stdin>") has
 * the stem "stdin". */
size_t dg_path_stem(const char *path, const char **base);

/* --------------------------------------- suggest.c: spelling suggestions */

/* Edit distance, capped: returns cap+1 when the distance exceeds cap.
 * Names longer than 64 bytes are never close (cap+1). */
unsigned dg_edit_distance(const char *a, const char *b, unsigned cap);
/* The closest of n candidate names (NULL entries skipped), for "did you
 * mean", or NULL when none is close enough. Its cost is bounded: about
 * DG_SUGGEST_BUDGET table cells, past which it keeps the best found. */
const char *dg_suggest(const char *name, const char *const *cands, size_t n);
#define DG_SUGGEST_BUDGET ((uint64_t)1 << 23)
/* The same, adding the table cells it computed to *cells (for the tests
 * that bound its work). */
const char *dg_suggest_counted(const char *name, const char *const *cands, size_t n,
                               uint64_t *cells);

#endif
