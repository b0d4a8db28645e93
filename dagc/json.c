/* json.c - the strict JSON reader (json.h). Recursive descent, depth
 * bounded by DG_JSON_MAX_DEPTH, positions tracked for every value. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct jp {
    const char *name;
    const char *p, *end;
    uint32_t line, col;
    int depth;
    const dg_json_stream *stream;
    char *err;
    size_t errsz;
    int failed;
} jp;

static void fail_at(jp *j, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 4, 5)));

static void fail_at(jp *j, uint32_t line, uint32_t col, const char *fmt, ...)
{
    if (j->failed)
        return;
    j->failed = 1;
    dg_buf b = {0};
    dg_buf_printf(&b, "%s:%u:%u: ", j->name, line, col);
    va_list ap;
    va_start(ap, fmt);
    dg_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    dg_fit(j->err, j->errsz, b.p, b.len);
    dg_buf_free(&b);
}

#define FAIL(j, ...) fail_at((j), (j)->line, (j)->col, __VA_ARGS__)

static void adv(jp *j)
{
    if (*j->p == '\n') {
        j->line++;
        j->col = 1;
    } else if (((unsigned char)*j->p & 0xC0) != 0x80) {
        j->col++;  /* columns count characters, not UTF-8 continuation bytes */
    }
    j->p++;
}

static void skip_ws(jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        adv(j);
}

static const char *describe(jp *j)
{
    static char buf[32];
    if (j->p >= j->end)
        return "the end of the file";
    unsigned char c = (unsigned char)*j->p;
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, sizeof buf, "'%c'", c);
    else
        snprintf(buf, sizeof buf, "byte 0x%02x", c);
    return buf;
}

static dg_json *value(jp *j, dg_arena *a, int root);

static void put_utf8(dg_buf *b, uint32_t cp)
{
    if (cp < 0x80) {
        dg_buf_putc(b, (char)cp);
    } else if (cp < 0x800) {
        dg_buf_putc(b, (char)(0xC0 | (cp >> 6)));
        dg_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        dg_buf_putc(b, (char)(0xE0 | (cp >> 12)));
        dg_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        dg_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    } else {
        dg_buf_putc(b, (char)(0xF0 | (cp >> 18)));
        dg_buf_putc(b, (char)(0x80 | ((cp >> 12) & 0x3F)));
        dg_buf_putc(b, (char)(0x80 | ((cp >> 6) & 0x3F)));
        dg_buf_putc(b, (char)(0x80 | (cp & 0x3F)));
    }
}

static int hex4(jp *j, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        if (j->p >= j->end) {
            FAIL(j, "unfinished \\u escape");
            return -1;
        }
        char c = *j->p;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) {
            FAIL(j, "expected a hex digit in \\u escape, found %s", describe(j));
            return -1;
        }
        v = v * 16 + (uint32_t)d;
        adv(j);
    }
    *out = v;
    return 0;
}

/* At the opening quote. */
static const char *string(jp *j, dg_arena *a)
{
    uint32_t line = j->line, col = j->col;
    adv(j);
    dg_buf b = {0};
    for (;;) {
        if (j->p >= j->end) {
            fail_at(j, line, col, "unterminated string");
            goto bad;
        }
        unsigned char c = (unsigned char)*j->p;
        if (c == '"') {
            adv(j);
            break;
        }
        if (c < 0x20) {
            FAIL(j, "control character (byte 0x%02x) in a string: write it as an escape", c);
            goto bad;
        }
        if (c != '\\') {
            dg_buf_putc(&b, (char)c);
            adv(j);
            continue;
        }
        adv(j);
        if (j->p >= j->end) {
            fail_at(j, line, col, "unterminated string");
            goto bad;
        }
        char e = *j->p;
        const char *map = strchr("\"\\/bfnrt", e);
        if (e && map) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            dg_buf_putc(&b, out[map - "\"\\/bfnrt"]);
            adv(j);
            continue;
        }
        if (e != 'u') {
            FAIL(j, "invalid escape '\\%c' in a string", e);
            goto bad;
        }
        adv(j);
        uint32_t cp;
        if (hex4(j, &cp) != 0)
            goto bad;
        if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo;
            if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u') {
                FAIL(j, "a high surrogate \\u%04X must be followed by a low one", cp);
                goto bad;
            }
            adv(j);
            adv(j);
            if (hex4(j, &lo) != 0)
                goto bad;
            if (lo < 0xDC00 || lo > 0xDFFF) {
                FAIL(j, "\\u%04X is not a low surrogate", lo);
                goto bad;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            FAIL(j, "lone low surrogate \\u%04X", cp);
            goto bad;
        }
        if (cp == 0) {
            FAIL(j, "\\u0000 in a string is not supported");
            goto bad;
        }
        put_utf8(&b, cp);
    }
    char *s = dg_strndup(a, b.p ? b.p : "", b.len);
    dg_buf_free(&b);
    return s;
bad:
    dg_buf_free(&b);
    return NULL;
}

static int number(jp *j, double *out)
{
    const char *s = j->p;
    const char *p = s;
    if (p < j->end && *p == '-')
        p++;
    if (p >= j->end || *p < '0' || *p > '9') {
        FAIL(j, "expected a value, found %s", describe(j));
        return -1;
    }
    if (*p == '0' && p + 1 < j->end && p[1] >= '0' && p[1] <= '9') {
        FAIL(j, "numbers may not have leading zeros");
        return -1;
    }
    while (p < j->end && *p >= '0' && *p <= '9')
        p++;
    if (p < j->end && *p == '.') {
        p++;
        if (p >= j->end || *p < '0' || *p > '9') {
            FAIL(j, "expected a digit after the decimal point");
            return -1;
        }
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    if (p < j->end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < j->end && (*p == '+' || *p == '-'))
            p++;
        if (p >= j->end || *p < '0' || *p > '9') {
            FAIL(j, "expected a digit in the exponent");
            return -1;
        }
        while (p < j->end && *p >= '0' && *p <= '9')
            p++;
    }
    char tmp[64];
    size_t n = (size_t)(p - s);
    if (n >= sizeof tmp) {
        FAIL(j, "number too long (%zu characters)", n);
        return -1;
    }
    memcpy(tmp, s, n);
    tmp[n] = 0;
    *out = strtod(tmp, NULL);
    if (!isfinite(*out)) {
        FAIL(j, "number out of range");
        return -1;
    }
    while (j->p < p)
        adv(j);
    return 0;
}

static int literal(jp *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0) {
        FAIL(j, "expected a value, found %s", describe(j));
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        adv(j);
    return 0;
}

/* Elements of an array: kept, or streamed one by one. */
static int array(jp *j, dg_arena *a, dg_json *v, int streamed)
{
    adv(j);
    dg_json **items = NULL;
    size_t cap = 0, seen = 0;
    skip_ws(j);
    if (j->p < j->end && *j->p == ']') {
        adv(j);
        return 0;
    }
    for (;;) {
        skip_ws(j);
        if (seen && j->p < j->end && *j->p == ']') {
            FAIL(j, "trailing comma before ']'");
            free(items);
            return -1;
        }
        dg_json *x;
        if (streamed) {
            dg_arena ea;
            dg_arena_init(&ea);
            x = value(j, &ea, 0);
            if (x && j->stream->each(j->stream->user, x, j->err, j->errsz) != 0) {
                /* Prefix the element's position to the callback's message. */
                dg_buf b = {0};
                dg_buf_printf(&b, "%s:%u:%u: %s", j->name, x->line, x->col, j->err);
                dg_fit(j->err, j->errsz, b.p, b.len);
                dg_buf_free(&b);
                j->failed = 1;
                x = NULL;
            }
            dg_arena_free(&ea);
            if (!x)
                return -1;
        } else {
            x = value(j, a, 0);
            if (!x) {
                free(items);
                return -1;
            }
            if (v->n == cap)
                items = dg_xrealloc(items, (cap = cap ? cap * 2 : 8) * sizeof *items);
            items[v->n++] = x;
        }
        seen++;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            adv(j);
            continue;
        }
        if (j->p < j->end && *j->p == ']') {
            adv(j);
            break;
        }
        FAIL(j, "expected ',' or ']' in an array, found %s", describe(j));
        free(items);
        return -1;
    }
    if (v->n) {
        v->items = dg_alloc(a, v->n * sizeof *v->items);
        memcpy(v->items, items, v->n * sizeof *v->items);
    }
    free(items);
    return 0;
}

static int object(jp *j, dg_arena *a, dg_json *v, int root)
{
    adv(j);
    dg_json_member *m = NULL;
    size_t cap = 0;
    skip_ws(j);
    if (j->p < j->end && *j->p == '}') {
        adv(j);
        return 0;
    }
    for (;;) {
        skip_ws(j);
        if (v->n && j->p < j->end && *j->p == '}') {
            FAIL(j, "trailing comma before '}'");
            goto bad;
        }
        if (j->p >= j->end || *j->p != '"') {
            FAIL(j, "expected a member name (a string), found %s", describe(j));
            goto bad;
        }
        const char *key = string(j, a);
        if (!key)
            goto bad;
        skip_ws(j);
        if (j->p >= j->end || *j->p != ':') {
            FAIL(j, "expected ':' after a member name, found %s", describe(j));
            goto bad;
        }
        adv(j);
        skip_ws(j);
        dg_json *x;
        if (root && j->stream && strcmp(key, j->stream->key) == 0 && j->p < j->end && *j->p == '[') {
            x = dg_alloc(a, sizeof *x);
            x->kind = DG_JSON_ARR;
            x->line = j->line;
            x->col = j->col;
            if (j->depth + 1 > DG_JSON_MAX_DEPTH) {
                FAIL(j, "nesting deeper than %d", DG_JSON_MAX_DEPTH);
                goto bad;
            }
            j->depth++;
            if (array(j, a, x, 1) != 0)
                goto bad;
            j->depth--;
        } else {
            x = value(j, a, 0);
            if (!x)
                goto bad;
        }
        if (v->n == cap)
            m = dg_xrealloc(m, (cap = cap ? cap * 2 : 8) * sizeof *m);
        m[v->n].key = key;
        m[v->n].val = x;
        v->n++;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            adv(j);
            continue;
        }
        if (j->p < j->end && *j->p == '}') {
            adv(j);
            break;
        }
        FAIL(j, "expected ',' or '}' in an object, found %s", describe(j));
        goto bad;
    }
    v->members = dg_alloc(a, v->n * sizeof *v->members);
    memcpy(v->members, m, v->n * sizeof *v->members);
    free(m);
    return 0;
bad:
    free(m);
    return -1;
}

static dg_json *value(jp *j, dg_arena *a, int root)
{
    skip_ws(j);
    dg_json *v = dg_alloc(a, sizeof *v);
    v->line = j->line;
    v->col = j->col;
    if (j->p >= j->end) {
        FAIL(j, "expected a value, found the end of the file");
        return NULL;
    }
    int rc = 0;
    switch (*j->p) {
    case '{':
    case '[':
        if (++j->depth > DG_JSON_MAX_DEPTH) {
            FAIL(j, "nesting deeper than %d", DG_JSON_MAX_DEPTH);
            return NULL;
        }
        if (*j->p == '{') {
            v->kind = DG_JSON_OBJ;
            rc = object(j, a, v, root);
        } else {
            v->kind = DG_JSON_ARR;
            rc = array(j, a, v, 0);
        }
        j->depth--;
        break;
    case '"':
        v->kind = DG_JSON_STR;
        v->str = string(j, a);
        rc = v->str ? 0 : -1;
        break;
    case 't':
        v->kind = DG_JSON_BOOL;
        v->b = 1;
        rc = literal(j, "true");
        break;
    case 'f':
        v->kind = DG_JSON_BOOL;
        rc = literal(j, "false");
        break;
    case 'n':
        v->kind = DG_JSON_NULL;
        rc = literal(j, "null");
        break;
    default:
        v->kind = DG_JSON_NUM;
        rc = number(j, &v->num);
        break;
    }
    return rc == 0 ? v : NULL;
}

dg_json *dg_json_parse(dg_arena *arena, const char *name, const char *buf, size_t len,
                       const dg_json_stream *stream, char *err, size_t errsz)
{
    jp j = {name, buf, buf + len, 1, 1, 0, stream, err, errsz, 0};
    if (len >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0)
        j.p += 3;
    dg_json *v = value(&j, arena, 1);
    if (!v)
        return NULL;
    skip_ws(&j);
    if (j.p < j.end) {
        FAIL(&j, "unexpected %s after the JSON value", describe(&j));
        return NULL;
    }
    return v;
}

const dg_json *dg_json_get(const dg_json *obj, const char *key)
{
    if (!obj || obj->kind != DG_JSON_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->members[i].key, key) == 0)
            return obj->members[i].val;
    return NULL;
}
