/*
 * json.h - a small strict JSON reader (RFC 8259) for the traces that
 * `--profile` reads: no comments, no trailing commas, no leading zeros,
 * control characters in strings rejected, nesting bounded. Errors name
 * FILE:LINE:COL. Values live in an arena; one top-level array can be
 * streamed element by element (a trace's "traceEvents") so that a large
 * trace is never held as a tree.
 */
#ifndef DAGC_JSON_H
#define DAGC_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define DG_JSON_MAX_DEPTH 64

typedef enum dg_json_kind {
    DG_JSON_NULL, DG_JSON_BOOL, DG_JSON_NUM, DG_JSON_STR, DG_JSON_ARR, DG_JSON_OBJ,
} dg_json_kind;

typedef struct dg_json dg_json;
typedef struct dg_json_member { const char *key; dg_json *val; } dg_json_member;

struct dg_json {
    dg_json_kind kind;
    uint32_t line, col;          /* where the value starts */
    int b;                       /* BOOL */
    double num;                  /* NUM */
    const char *str;             /* STR: UTF-8, NUL-terminated (no NULs inside) */
    size_t n;                    /* ARR/OBJ: count */
    dg_json **items;             /* ARR */
    dg_json_member *members;     /* OBJ, in file order */
};

/* Called for each element of the root object's array member named
 * `key`; the element (and its arena) is freed after the call. Return 0 to
 * go on, or non-zero after writing a message into err to stop. */
typedef struct dg_json_stream {
    const char *key;
    int (*each)(void *user, const dg_json *elem, char *err, size_t errsz);
    void *user;
} dg_json_stream;

/* Parses buf[0, len) (name for messages). Returns the root (in *arena) or
 * NULL with "NAME:LINE:COL: message" in err. A streamed member appears in
 * the root as an empty array. */
dg_json *dg_json_parse(dg_arena *arena, const char *name, const char *buf, size_t len,
                       const dg_json_stream *stream, char *err, size_t errsz);

/* The member `key` of an object, or NULL. */
const dg_json *dg_json_get(const dg_json *obj, const char *key);

/* Writes s as a JSON string into b (diag_json.c): quotes and backslashes
 * escaped, control bytes as escapes, bytes that are not UTF-8 as U+FFFD. */
struct dg_buf;
void dg_json_write_str(struct dg_buf *b, const char *s);

#endif
