/*
 * template.c - see template.h. Two passes: split the template into tokens
 * (text runs and tags, standalone lines trimmed, sections matched), then
 * render the token array recursively against a chain of dictionaries.
 */
#include "template.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ data */

/* A tree holds one entry per node of a 1M-node graph and a dozen values
 * each, so everything in it (dictionaries, entries, strings) comes from one
 * arena owned by the root: building costs no malloc per value and freeing
 * is one call. Entries and list items are linked in insertion order. */
typedef struct tpl_entry {
    struct tpl_entry *next;
    const char *key;      /* the caller's (not copied) */
    const char *value;    /* a value, or NULL for a list */
    tpl_dict *first, *last; /* a list's items */
    tpl_fill_fn fill;     /* a lazy list: fill(fill_ctx, i, item), i < nlazy */
    void *fill_ctx;
    size_t nlazy;
    uint32_t klen;
} tpl_entry;

struct tpl_dict {
    tpl_entry *first, *last;
    uint64_t keys;        /* a bit per key_bit() of the keys set: lookups
                           * skip a dictionary that cannot hold the key */
    tpl_dict *next;       /* the next item of the list this one is in */
    dg_arena *arena;      /* the root's */
};

typedef struct tpl_root {
    tpl_dict d;           /* must be first: the root is handed out as it */
    dg_arena arena;
} tpl_root;

tpl_dict *tpl_dict_new(void)
{
    tpl_root *r = dg_xcalloc(1, sizeof *r);
    dg_arena_init(&r->arena);
    r->d.arena = &r->arena;
    return &r->d;
}

void tpl_dict_free(tpl_dict *root)
{
    if (!root)
        return;
    tpl_root *r = (tpl_root *)(void *)root;
    dg_arena_free(&r->arena);
    free(r);
}

static uint64_t key_bit(const char *key, size_t n)
{
    return (uint64_t)1 << ((n * 7 + (unsigned char)key[0] + (unsigned char)key[n ? n - 1 : 0]) & 63);
}

static tpl_entry *entry(tpl_dict *d, const char *key)
{
    size_t n = strlen(key);
    uint64_t bit = key_bit(key, n);
    if (d->keys & bit)
        for (tpl_entry *e = d->first; e; e = e->next)
            if (e->klen == n && e->key[0] == key[0] && memcmp(e->key, key, n) == 0)
                return e;
    d->keys |= bit;
    tpl_entry *e = dg_alloc(d->arena, sizeof *e);
    e->key = key;
    e->klen = (uint32_t)n;
    if (d->last)
        d->last->next = e;
    else
        d->first = e;
    d->last = e;
    return e;
}

void tpl_set(tpl_dict *d, const char *key, const char *value)
{
    entry(d, key)->value = dg_strdup(d->arena, value);
}

void tpl_set_ref(tpl_dict *d, const char *key, const char *value)
{
    entry(d, key)->value = value;
}

void tpl_setf(tpl_dict *d, const char *key, const char *fmt, ...)
{
    char small[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof small) {
        tpl_entry *e = entry(d, key);
        e->value = dg_strndup(d->arena, small, (size_t)n);
        return;
    }
    dg_buf b = {0};
    va_start(ap, fmt);
    dg_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    tpl_set(d, key, b.p ? b.p : "");
    dg_buf_free(&b);
}

void tpl_set_int(tpl_dict *d, const char *key, long long v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
    tmp[--i] = '\0';
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    entry(d, key)->value = dg_strndup(d->arena, tmp + i, sizeof tmp - 1 - i);
}

tpl_dict *tpl_add(tpl_dict *d, const char *key)
{
    tpl_entry *e = entry(d, key);
    tpl_dict *item = dg_alloc(d->arena, sizeof *item);
    item->arena = d->arena;
    if (e->last)
        e->last->next = item;
    else
        e->first = item;
    e->last = item;
    return item;
}

void tpl_add_lazy(tpl_dict *d, const char *key, size_t n, tpl_fill_fn fill, void *ctx)
{
    tpl_entry *e = entry(d, key);
    e->fill = fill;
    e->fill_ctx = ctx;
    e->nlazy = n;
}

/* ---------------------------------------------------------------- tokens */

enum tok_kind { T_TEXT, T_VAR, T_SECTION, T_INVERTED, T_END };

typedef struct tok {
    enum tok_kind kind;
    const char *s;      /* text, or the tag's name */
    size_t n;
    unsigned line;
    size_t match;       /* sections: index of the matching T_END */
} tok;

typedef struct toks {
    tok *t;
    size_t n, cap;
} toks;

static void push(toks *ts, tok t)
{
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? ts->cap * 2 : 64;
        ts->t = dg_xrealloc(ts->t, ts->cap * sizeof *ts->t);
    }
    ts->t[ts->n++] = t;
}

static unsigned line_at(const char *text, const char *p)
{
    unsigned line = 1;
    for (; text < p; text++)
        line += *text == '\n';
    return line;
}

static bool is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

static bool tokenize(const char *name, const char *text, toks *ts, char *err, size_t errlen)
{
    const char *p = text;
    size_t stack[64];
    size_t depth = 0;
    while (*p) {
        const char *open = strstr(p, "{{");
        if (!open) {
            push(ts, (tok){T_TEXT, p, strlen(p), 0, 0});
            break;
        }
        const char *close = strstr(open + 2, "}}");
        if (!close) {
            snprintf(err, errlen, "%s:%u: unterminated tag", name, line_at(text, open));
            return false;
        }
        char sigil = open[2];
        enum tok_kind kind = T_VAR;
        const char *ns = open + 2;
        if (sigil == '#') kind = T_SECTION, ns++;
        else if (sigil == '^') kind = T_INVERTED, ns++;
        else if (sigil == '/') kind = T_END, ns++;
        bool comment = sigil == '!';
        const char *ne = close;
        while (ns < ne && *ns == ' ') ns++;
        while (ne > ns && ne[-1] == ' ') ne--;
        unsigned line = line_at(text, open);
        if (!comment) {
            if (ns == ne) {
                snprintf(err, errlen, "%s:%u: empty tag", name, line);
                return false;
            }
            for (const char *c = ns; c < ne; c++)
                if (!is_name_char(*c)) {
                    snprintf(err, errlen, "%s:%u: bad character '%c' in tag name", name, line, *c);
                    return false;
                }
        }
        /* A block tag alone on its line swallows the line. */
        const char *text_end = open, *next = close + 2;
        if (kind != T_VAR || comment) {
            const char *ls = open;
            while (ls > p && (ls[-1] == ' ' || ls[-1] == '\t')) ls--;
            bool at_line_start = ls == text || ls[-1] == '\n';
            const char *le = close + 2;
            while (*le == ' ' || *le == '\t') le++;
            if (at_line_start && (*le == '\n' || *le == '\0')) {
                text_end = ls;
                next = *le == '\n' ? le + 1 : le;
            }
        }
        if (text_end > p)
            push(ts, (tok){T_TEXT, p, (size_t)(text_end - p), 0, 0});
        p = next;
        if (comment)
            continue;
        push(ts, (tok){kind, ns, (size_t)(ne - ns), line, 0});
        if (kind == T_SECTION || kind == T_INVERTED) {
            if (depth == sizeof stack / sizeof stack[0]) {
                snprintf(err, errlen, "%s:%u: sections nested too deeply", name, line);
                return false;
            }
            stack[depth++] = ts->n - 1;
        } else if (kind == T_END) {
            if (depth == 0) {
                snprintf(err, errlen, "%s:%u: {{/%.*s}} closes no section", name, line,
                         (int)(ne - ns), ns);
                return false;
            }
            tok *o = &ts->t[stack[--depth]];
            if (o->n != (size_t)(ne - ns) || memcmp(o->s, ns, o->n) != 0) {
                snprintf(err, errlen, "%s:%u: {{/%.*s}} closes section '%.*s' opened at line %u",
                         name, line, (int)(ne - ns), ns, (int)o->n, o->s, o->line);
                return false;
            }
            o->match = ts->n - 1;
        }
    }
    if (depth) {
        tok *o = &ts->t[stack[depth - 1]];
        snprintf(err, errlen, "%s:%u: section '%.*s' is never closed", name, o->line,
                 (int)o->n, o->s);
        return false;
    }
    return true;
}

/* ---------------------------------------------------------------- render */

typedef struct scope {
    const tpl_dict *d;
    const struct scope *up;
} scope;

static const tpl_entry *lookup(const scope *sc, const char *key, size_t n)
{
    uint64_t bit = key_bit(key, n);
    for (; sc; sc = sc->up) {
        if (!(sc->d->keys & bit))
            continue;
        for (const tpl_entry *e = sc->d->first; e; e = e->next)
            if (e->klen == n && e->key[0] == key[0] && memcmp(e->key, key, n) == 0)
                return e;
    }
    return NULL;
}

static bool render(const char *name, const toks *ts, size_t from, size_t to, const scope *sc,
                   dg_buf *out, char *err, size_t errlen);

/* Section token at for lazy list e: each item is filled into a scratch
 * arena that the next item reuses. */
static bool render_lazy(const char *name, const toks *ts, size_t at, const tpl_entry *e,
                        const scope *sc, dg_buf *out, char *err, size_t errlen)
{
    dg_arena scratch;
    dg_arena_init(&scratch);
    bool ok = true;
    for (size_t k = 0; k < e->nlazy && ok; k++) {
        dg_arena_reset(&scratch);
        tpl_dict *item = dg_alloc(&scratch, sizeof *item);
        item->arena = &scratch;
        e->fill(e->fill_ctx, k, item);
        scope inner = {item, sc};
        ok = render(name, ts, at + 1, ts->t[at].match, &inner, out, err, errlen);
    }
    dg_arena_free(&scratch);
    return ok;
}

static bool render(const char *name, const toks *ts, size_t from, size_t to, const scope *sc,
                   dg_buf *out, char *err, size_t errlen)
{
    for (size_t i = from; i < to; i++) {
        const tok *t = &ts->t[i];
        if (t->kind == T_TEXT) {
            dg_buf_put(out, t->s, t->n);
            continue;
        }
        const tpl_entry *e = lookup(sc, t->s, t->n);
        if (t->kind == T_VAR) {
            if (!e || !e->value) {
                snprintf(err, errlen, "%s:%u: '%.*s' is %s", name, t->line, (int)t->n, t->s,
                         e ? "a list, not a value" : "not defined");
                return false;
            }
            dg_buf_puts(out, e->value);
            continue;
        }
        /* A section: values are true when non-empty, lists when non-empty. */
        bool truthy = e && (e->value ? e->value[0] != '\0' : e->first != NULL || e->nlazy > 0);
        if (t->kind == T_INVERTED) {
            if (!truthy && !render(name, ts, i + 1, t->match, sc, out, err, errlen))
                return false;
        } else if (truthy && e->value) {
            if (!render(name, ts, i + 1, t->match, sc, out, err, errlen))
                return false;
        } else if (truthy && e->fill) {
            if (!render_lazy(name, ts, i, e, sc, out, err, errlen))
                return false;
        } else if (truthy) {
            for (const tpl_dict *item = e->first; item; item = item->next) {
                scope inner = {item, sc};
                if (!render(name, ts, i + 1, t->match, &inner, out, err, errlen))
                    return false;
            }
        }
        i = t->match;
    }
    return true;
}

bool tpl_render(const char *name, const char *text, const tpl_dict *d, dg_buf *out,
                char *err, size_t errlen)
{
    toks ts = {0};
    bool ok = tokenize(name, text, &ts, err, errlen);
    if (ok) {
        scope sc = {d, NULL};
        ok = render(name, &ts, 0, ts.n, &sc, out, err, errlen);
    }
    free(ts.t);
    return ok;
}
