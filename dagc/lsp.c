/* lsp.c - `dagc --lsp`: the Language Server Protocol over a pair of
 * streams (lsp.h). One thread, one request at a time: a document is
 * compiled by the front end when it opens or changes, and its diagnostics
 * are published at once (the same JSON dagc --diagnostics-format=json
 * writes, turned into the protocol's shape); the index of its names is
 * built when a request first needs it. Every request gets an answer or a
 * protocol error, whatever the message or the file holds. */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "os.h"
#include "parse.h"
#include "parser.h"
#include "profile.h"
#include "stats.h"

/* JSON-RPC and LSP error codes. */
enum {
    E_PARSE = -32700, E_INVALID_REQUEST = -32600, E_METHOD = -32601, E_PARAMS = -32602,
    E_NOT_INIT = -32002, E_FAILED = -32803,
};

/* A message larger than this is refused (a file is at most 64 MiB, and
 * JSON's escapes can double it). */
#define MAX_MESSAGE ((size_t)160 << 20)

typedef struct doc {
    char *uri, *path;
    char *text;
    size_t len;
    dagc_unit *unit;         /* the last analysis, kept for the index */
    int indexed;
    lsp_index index;
    dg_arena diag_arena;     /* the parsed diagnostics document */
    const dg_json *diags;    /* its "diagnostics" array, for code actions */
    int dirty;               /* changed since its last compile */
    dg_profile prof;         /* the profile, read against the unit's program */
    int prof_state;          /* 0 not read, 1 read, -1 failed */
    struct doc *next;
} doc;

typedef struct server {
    FILE *in, *out;
    doc *docs;
    int initialized, shutdown;
    int utf8;                /* positions in UTF-8 bytes (negotiated), else UTF-16 */
    char *root;              /* the workspace's folder, or NULL */
    char *profile;           /* settings: a trace for hover's measured times */
    char **idirs;            /* settings: -I directories */
    size_t nidirs;
    int max_errors;
    char *ib;                /* the input buffer: ib[ipos, ilen) unread */
    size_t ipos, ilen, icap;
} server;

static char *xstrdup(const char *s)
{
    size_t n = strlen(s);
    char *p = dg_xmalloc(n + 1);
    memcpy(p, s, n + 1);
    return p;
}

/* --------------------------------------------------------- JSON output */

static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c < 0xF0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    if (n == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
    if (n == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))) return 0;
    return n;
}

/* A JSON string (json.h); NULL writes "". */
static void jstr(dg_buf *b, const char *s)
{
    dg_json_write_str(b, s ? s : "");
}

/* A request's id as it came (a number or a string), or null. */
static void put_id(dg_buf *b, const dg_json *id)
{
    if (id && id->kind == DG_JSON_STR) jstr(b, id->str);
    else if (id && id->kind == DG_JSON_NUM && id->num >= -9e15 && id->num <= 9e15 &&
             id->num == (double)(long long)id->num)
        dg_buf_printf(b, "%lld", (long long)id->num);
    else if (id && id->kind == DG_JSON_NUM) dg_buf_printf(b, "%.17g", id->num);
    else dg_buf_puts(b, "null");
}

static void send(server *S, const dg_buf *body)
{
    fprintf(S->out, "Content-Length: %zu\r\n\r\n", body->len);
    fwrite(body->p, 1, body->len, S->out);
    fflush(S->out);
}

static void reply(server *S, const dg_json *id, const char *result)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(&b, id);
    dg_buf_puts(&b, ",\"result\":");
    dg_buf_puts(&b, result);
    dg_buf_putc(&b, '}');
    send(S, &b);
    dg_buf_free(&b);
}

static void reply_buf(server *S, const dg_json *id, dg_buf *result)
{
    dg_buf_putc(result, 0);
    reply(S, id, result->p);
    dg_buf_free(result);
}

static void reply_error(server *S, const dg_json *id, int code, const char *msg)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(&b, id);
    dg_buf_printf(&b, ",\"error\":{\"code\":%d,\"message\":", code);
    jstr(&b, msg);
    dg_buf_puts(&b, "}}");
    send(S, &b);
    dg_buf_free(&b);
}

/* ---------------------------------------------------------- URIs, paths */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* file:///a%20b/x.dag -> /a b/x.dag (file:///C:/x -> C:/x); another
 * scheme keeps the URI as the name. */
static char *uri_to_path(const char *uri)
{
    if (strncmp(uri, "file://", 7) != 0) return xstrdup(uri);
    const char *p = uri + 7;
    while (*p && *p != '/') p++; /* an authority (file://host/...) is dropped */
    char *out = dg_xmalloc(strlen(p) + 1);
    size_t o = 0;
    for (; *p; p++) {
        if (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
            char c = (char)(hexval(p[1]) * 16 + hexval(p[2]));
            out[o++] = c ? c : '?';
            p += 2;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = 0;
    if (o >= 3 && out[0] == '/' && out[2] == ':' && ((out[1] | 0x20) >= 'a' && (out[1] | 0x20) <= 'z'))
        memmove(out, out + 1, o); /* /C:/x -> C:/x */
    return out;
}

static void put_uri(dg_buf *b, const char *path)
{
    if (strstr(path, "://")) { /* not a file: the URI it came as */
        jstr(b, path);
        return;
    }
    dg_buf u = {0};
    dg_buf_puts(&u, "file://");
    if (path[0] != '/') dg_buf_putc(&u, '/');
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            strchr("/-._~:", (int)c))
            dg_buf_putc(&u, (char)(c == '\\' ? '/' : c));
        else dg_buf_printf(&u, "%%%02X", c);
    }
    dg_buf_putc(&u, 0);
    jstr(b, u.p);
    dg_buf_free(&u);
}

/* ----------------------------------------------------------- positions */

/* dagc counts columns in bytes; the protocol in UTF-16 code units unless
 * UTF-8 was agreed. Columns here are 0-based. */
static uint32_t to_client_col(const server *S, const dg_source *s, uint32_t line, uint32_t col0)
{
    if (S->utf8 || !s || line == 0 || line > s->nlines) return col0;
    size_t len;
    const char *p = dg_source_line(s, line, &len);
    uint32_t u = 0;
    for (size_t i = 0; i < len && i < col0;) {
        size_t n = utf8_len((const unsigned char *)p + i);
        if (!n) n = 1;
        u += n == 4 ? 2 : 1;
        i += n;
    }
    return u + (col0 > len ? col0 - (uint32_t)len : 0);
}

static uint32_t from_client_col(const server *S, const dg_source *s, uint32_t line, uint32_t ch)
{
    if (S->utf8 || !s || line == 0 || line > s->nlines) return ch;
    size_t len;
    const char *p = dg_source_line(s, line, &len);
    size_t i = 0;
    uint32_t u = 0;
    while (i < len && u < ch) {
        size_t n = utf8_len((const unsigned char *)p + i);
        if (!n) n = 1;
        u += n == 4 ? 2 : 1;
        i += n;
    }
    return (uint32_t)i;
}

/* {"start":..,"end":..} from 1-based line/byte columns (end col just past). */
static void put_range(dg_buf *b, const server *S, const dg_source *s, uint32_t l1, uint32_t c1,
                      uint32_t l2, uint32_t c2)
{
    uint32_t sl = l1 ? l1 - 1 : 0, el = l2 ? l2 - 1 : sl;
    uint32_t sc = to_client_col(S, s, l1, c1 ? c1 - 1 : 0);
    uint32_t ec = to_client_col(S, s, l2 ? l2 : l1, c2 ? c2 - 1 : 0);
    if (el < sl || (el == sl && ec < sc)) {
        el = sl;
        ec = sc;
    }
    dg_buf_printf(b, "{\"start\":{\"line\":%u,\"character\":%u},\"end\":{\"line\":%u,\"character\":%u}}",
                  sl, sc, el, ec);
}

static void put_location(dg_buf *b, const server *S, const lsp_occ *o)
{
    dg_buf_puts(b, "{\"uri\":");
    put_uri(b, o->src->path);
    dg_buf_puts(b, ",\"range\":");
    put_range(b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_putc(b, '}');
}

/* ------------------------------------------------------------ params */

static const dg_json *get(const dg_json *o, const char *k)
{
    return dg_json_get(o, k);
}

static const char *get_str(const dg_json *o, const char *k)
{
    const dg_json *v = get(o, k);
    return v && v->kind == DG_JSON_STR ? v->str : NULL;
}

static int get_u32(const dg_json *o, const char *k, uint32_t *out)
{
    const dg_json *v = get(o, k);
    if (!v || v->kind != DG_JSON_NUM || v->num < 0 || v->num > 4e9 || v->num != (double)(uint32_t)v->num)
        return 0;
    *out = (uint32_t)v->num;
    return 1;
}

/* ----------------------------------------------------------- documents */

static doc *find_doc(server *S, const char *uri)
{
    for (doc *d = S->docs; d; d = d->next)
        if (strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

static void doc_forget(doc *d)
{
    if (d->indexed) lsp_index_free(&d->index);
    d->indexed = 0;
    if (d->prof_state == 1) dg_profile_free(&d->prof);
    d->prof_state = 0;
    dagc_unit_free(d->unit);
    d->unit = NULL;
    dg_arena_free(&d->diag_arena);
    dg_arena_init(&d->diag_arena);
    d->diags = NULL;
}

static lsp_index *doc_index(doc *d)
{
    if (!d->unit) return NULL;
    if (!d->indexed) {
        lsp_index_build(&d->index, dagc_unit_files(d->unit));
        d->indexed = 1;
    }
    return &d->index;
}

/* The document's own source in its unit (its bytes as last compiled). */
static const dg_source *doc_src(doc *d)
{
    const dg_files *F = d->unit ? dagc_unit_files(d->unit) : NULL;
    return F && F->n ? F->src[0] : NULL;
}

/* A file of d's last compile, by its path as loaded. */
static const dg_source *unit_src(doc *d, const char *path)
{
    const dg_files *F = d->unit ? dagc_unit_files(d->unit) : NULL;
    for (size_t i = 0; F && path && i < F->n; i++)
        if (strcmp(F->src[i]->path, path) == 0) return F->src[i];
    return NULL;
}

/* A diagnostic of the compile's JSON as the protocol's Diagnostic. */
static void put_diag(dg_buf *b, server *S, doc *d, const dg_json *g, const dg_source *src,
                     const dg_json *at)
{
    const dg_json *where = at ? at : g;
    uint32_t l = 0, c = 0, el = 0, ec = 0;
    get_u32(where, "line", &l);
    get_u32(where, "column", &c);
    get_u32(where, "end_line", &el);
    get_u32(where, "end_column", &ec);
    if (!l) {
        el = l = 1;
        c = ec = 1;
    }
    dg_buf_puts(b, "{\"range\":");
    put_range(b, S, src, l, c, el, ec);
    const char *sev = get_str(g, "severity");
    int level = !sev || strcmp(sev, "error") == 0 || strcmp(sev, "fatal") == 0 ? 1
              : strcmp(sev, "warning") == 0 ? 2 : strcmp(sev, "note") == 0 ? 3 : 4;
    dg_buf_printf(b, ",\"severity\":%d,\"source\":\"dagc\"", level);
    const char *flag = get_str(g, "flag");
    if (flag) {
        dg_buf_puts(b, ",\"code\":");
        jstr(b, flag);
    }
    dg_buf m = {0};
    if (at) { /* a diagnostic of an imported file, shown at the import */
        uint32_t il = 0, ic = 0;
        get_u32(g, "line", &il);
        get_u32(g, "column", &ic);
        dg_buf_printf(&m, "in imported file %s:%u:%u: ", get_str(g, "file") ? get_str(g, "file") : "?",
                      il, ic);
    }
    dg_buf_puts(&m, get_str(g, "message") ? get_str(g, "message") : "");
    if (get_str(g, "hint")) dg_buf_printf(&m, "\nhint: %s", get_str(g, "hint"));
    dg_buf_putc(&m, 0);
    dg_buf_puts(b, ",\"message\":");
    jstr(b, m.p);
    dg_buf_free(&m);
    const dg_json *notes = get(g, "notes");
    int first = 1;
    if (notes && notes->kind == DG_JSON_ARR) {
        for (size_t i = 0; i < notes->n; i++) {
            const dg_json *n = notes->items[i];
            const char *file = get_str(n, "file");
            uint32_t nl = 0, nc = 0, nel = 0, nec = 0;
            if (!file || !get_u32(n, "line", &nl)) continue;
            get_u32(n, "column", &nc);
            get_u32(n, "end_line", &nel);
            get_u32(n, "end_column", &nec);
            dg_buf_puts(b, first ? ",\"relatedInformation\":[" : ",");
            first = 0;
            dg_buf_puts(b, "{\"location\":{\"uri\":");
            put_uri(b, file);
            dg_buf_puts(b, ",\"range\":");
            put_range(b, S, unit_src(d, file), nl, nc, nel, nec);
            dg_buf_puts(b, "},\"message\":");
            jstr(b, get_str(n, "message"));
            dg_buf_putc(b, '}');
        }
    }
    if (!first) dg_buf_putc(b, ']');
    dg_buf_putc(b, '}');
}

/* The import in the document that led to a diagnostic of another file:
 * its "in file imported from" note in this document, or NULL. */
static const dg_json *import_note(const dg_json *g, const char *path)
{
    const dg_json *notes = get(g, "notes");
    const dg_json *found = NULL;
    for (size_t i = 0; notes && notes->kind == DG_JSON_ARR && i < notes->n; i++) {
        const char *m = get_str(notes->items[i], "message");
        const char *f = get_str(notes->items[i], "file");
        if (m && f && strncmp(m, "in file imported from ", 22) == 0 && strcmp(f, path) == 0)
            found = notes->items[i]; /* the outermost, the one written in this file */
    }
    return found;
}

static void publish(server *S, doc *d, dg_buf *json)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":");
    jstr(&b, d->uri);
    dg_buf_puts(&b, ",\"diagnostics\":[");
    char err[256];
    const dg_json *root = json && json->len
        ? dg_json_parse(&d->diag_arena, "diagnostics", json->p, json->len, NULL, err, sizeof err) : NULL;
    const dg_json *arr = root ? get(root, "diagnostics") : NULL;
    d->diags = arr && arr->kind == DG_JSON_ARR ? arr : NULL;
    int n = 0;
    for (size_t i = 0; d->diags && i < d->diags->n; i++) {
        const dg_json *g = d->diags->items[i];
        const char *file = get_str(g, "file");
        const dg_json *at = NULL;
        if (file && strcmp(file, d->path) != 0) {
            at = import_note(g, d->path);
            if (!at) continue;
        }
        if (n++) dg_buf_putc(&b, ',');
        put_diag(&b, S, d, g, doc_src(d), at);
    }
    dg_buf_puts(&b, "]}}");
    send(S, &b);
    dg_buf_free(&b);
}

/* Compiles d (with every open document's bytes in place of the disk's)
 * and publishes its diagnostics. */
static void analyze(server *S, doc *d)
{
    d->dirty = 0;
    doc_forget(d);
    size_t nmem = 0;
    for (doc *o = S->docs; o; o = o->next) nmem++;
    dagc_memfile *mem = dg_xcalloc(nmem ? nmem : 1, sizeof *mem);
    nmem = 0;
    for (doc *o = S->docs; o; o = o->next)
        mem[nmem++] = (dagc_memfile){o->path, o->text, o->len};
    dg_buf json = {0};
    dagc_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.diag_format = DG_DIAG_JSON;
    opts.diag_json_to = &json;
    opts.max_errors = S->max_errors;
    opts.import_dirs = (const char *const *)S->idirs;
    opts.nimport_dirs = S->nidirs;
    opts.mem = mem;
    opts.nmem = nmem;
    opts.mem_then_disk = 1;
    d->unit = dagc_analyze_memory(d->path, d->text, d->len, &opts);
    publish(S, d, &json);
    dg_buf_free(&json);
    free(mem);
}

/* A workspace file that is not open, compiled as analyze() does (its
 * diagnostics dropped), or NULL when it cannot be read. */
static dagc_unit *compile_path(server *S, const char *path)
{
    char *text = NULL, err[256];
    size_t len = 0;
    if (dg_read_file(path, DG_MAX_FILE_SIZE, 1, &text, &len, err, sizeof err) != 0) return NULL;
    size_t nmem = 0;
    for (doc *o = S->docs; o; o = o->next) nmem++;
    dagc_memfile *mem = dg_xcalloc(nmem ? nmem : 1, sizeof *mem);
    nmem = 0;
    for (doc *o = S->docs; o; o = o->next)
        mem[nmem++] = (dagc_memfile){o->path, o->text, o->len};
    dagc_opts opts;
    memset(&opts, 0, sizeof opts);
    opts.max_errors = S->max_errors;
    opts.import_dirs = (const char *const *)S->idirs;
    opts.nimport_dirs = S->nidirs;
    opts.mem = mem;
    opts.nmem = nmem;
    opts.mem_then_disk = 1;
    dagc_unit *u = dagc_analyze_memory(path, text, len, &opts);
    free(mem);
    free(text);
    return u;
}

/* Whether d's last compile read the file at path. */
static int doc_reads(doc *d, const char *path)
{
    const dg_files *F = d->unit ? dagc_unit_files(d->unit) : NULL;
    for (size_t i = 1; F && i < F->n; i++) {
        char *a = dg_normalize_path(F->src[i]->path);
        int same = strcmp(a, path) == 0;
        free(a);
        if (same) return 1;
    }
    return 0;
}

/* d's text changed: it and the open files that import it (which read its
 * new bytes) are compiled again once no more input is waiting. */
static void changed(server *S, doc *d)
{
    d->dirty = 1;
    char *p = dg_normalize_path(d->path);
    for (doc *o = S->docs; o; o = o->next)
        if (o != d && doc_reads(o, p)) o->dirty = 1;
    free(p);
}

/* ------------------------------------------------------------ settings */

static void free_settings(server *S)
{
    free(S->profile);
    S->profile = NULL;
    for (size_t i = 0; i < S->nidirs; i++) free(S->idirs[i]);
    free(S->idirs);
    S->idirs = NULL;
    S->nidirs = 0;
}

/* {"profile": "trace.json", "importDirs": [...], "maxErrors": N}, as
 * initializationOptions or under "dagc" in the settings. A relative path
 * is taken from the workspace's folder. */
static char *abs_in_root(server *S, const char *p)
{
    if (S->root && p[0] != '/' && !(p[0] && p[1] == ':')) {
        size_t n = strlen(S->root) + strlen(p) + 2;
        char *s = dg_xmalloc(n);
        snprintf(s, n, "%s/%s", S->root, p);
        return s;
    }
    return xstrdup(p);
}

static void apply_settings(server *S, const dg_json *v)
{
    if (!v || v->kind != DG_JSON_OBJ) return;
    const dg_json *inner = get(v, "dagc");
    if (inner && inner->kind == DG_JSON_OBJ) v = inner;
    free_settings(S);
    const char *prof = get_str(v, "profile");
    if (prof && *prof) S->profile = abs_in_root(S, prof);
    const dg_json *dirs = get(v, "importDirs");
    if (dirs && dirs->kind == DG_JSON_ARR) {
        S->idirs = dg_xcalloc(dirs->n + 1, sizeof *S->idirs);
        for (size_t i = 0; i < dirs->n && i < 64; i++)
            if (dirs->items[i]->kind == DG_JSON_STR) S->idirs[S->nidirs++] = abs_in_root(S, dirs->items[i]->str);
    }
    uint32_t me;
    if (get_u32(v, "maxErrors", &me)) S->max_errors = me ? (int)me : -1;
}

/* ---------------------------------------------------------- requests */

/* The document and the 1-based line and byte column a
 * TextDocumentPositionParams names; 0 when it is not one. */
static int position(server *S, const dg_json *params, doc **dp, uint32_t *line, uint32_t *col)
{
    const dg_json *td = get(params, "textDocument");
    const char *uri = get_str(td, "uri");
    const dg_json *pos = get(params, "position");
    uint32_t l, c;
    if (!uri || !get_u32(pos, "line", &l) || !get_u32(pos, "character", &c)) return 0;
    doc *d = find_doc(S, uri);
    if (!d) return -1;
    *dp = d;
    *line = l + 1;
    *col = from_client_col(S, doc_src(d), l + 1, c) + 1;
    return 1;
}

/* The index entry under the cursor, or NULL; *err set for bad params. */
static const lsp_occ *occ_at(server *S, const dg_json *params, doc **dp, int *err)
{
    uint32_t line, col;
    int r = position(S, params, dp, &line, &col);
    *err = r == 0;
    if (r != 1) return NULL;
    lsp_index *x = doc_index(*dp);
    return x ? lsp_index_at(x, doc_src(*dp), line, col) : NULL;
}

static void on_definition(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    int err;
    const lsp_occ *o = occ_at(S, params, &d, &err);
    if (err) {
        reply_error(S, id, E_PARAMS, "expected textDocument and position");
        return;
    }
    if (!o) {
        reply(S, id, "null");
        return;
    }
    dg_buf b = {0};
    if (o->kind == LSP_FILE) {
        if (!o->target) {
            reply(S, id, "null");
            return;
        }
        dg_buf_puts(&b, "{\"uri\":");
        put_uri(&b, o->target->path);
        dg_buf_puts(&b, ",\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":0}}}");
        reply_buf(S, id, &b);
        return;
    }
    const lsp_occ *def = lsp_index_def(&d->index, o->key);
    if (!def) {
        reply(S, id, "null");
        return;
    }
    put_location(&b, S, def);
    reply_buf(S, id, &b);
}

/* Every use of a key: in the open documents' compiles, then in the .dag
 * files of the workspace's folder that none of them loads, each compiled
 * on its own (with the open documents' text for what it imports). The
 * entries point into those compiles: free_scan after the reply. */
typedef struct occ_list { const lsp_occ **v; size_t n, cap; } occ_list;
typedef struct scan {
    dagc_unit **units;
    lsp_index **idx;
    size_t n;
    char **paths;            /* the workspace's .dag files */
    size_t npaths, cap;
    size_t seen;             /* entries looked at: a home folder is not walked whole */
} scan;

#define SCAN_MAX_FILES 1024
#define SCAN_MAX_DEPTH 12
#define SCAN_MAX_ENTRIES 50000

typedef struct walker {
    scan *sc;
    const char *dir;
    char **subdirs;
    size_t nsub, capsub;
    int build; /* dir is a build directory (Meson's or CMake's) */
} walker;

static void walk_entry(void *user, const char *name, int is_dir)
{
    walker *w = user;
    /* A build directory holds copies and generated files, not the
     * workspace's sources: meson-private/ or CMakeCache.txt marks one. */
    if (strcmp(name, "meson-private") == 0 || strcmp(name, "CMakeCache.txt") == 0) w->build = 1;
    if (name[0] == '.' || w->sc->seen++ >= SCAN_MAX_ENTRIES) return; /* .git, .cache and the like */
    size_t n = strlen(w->dir) + strlen(name) + 2;
    char *p = dg_xmalloc(n);
    snprintf(p, n, "%s/%s", w->dir, name);
    if (is_dir) {
        if (w->nsub == w->capsub) {
            w->capsub = w->capsub ? w->capsub * 2 : 8;
            w->subdirs = dg_xrealloc(w->subdirs, w->capsub * sizeof *w->subdirs);
        }
        w->subdirs[w->nsub++] = p;
        return;
    }
    size_t l = strlen(name);
    if (l > 4 && strcmp(name + l - 4, ".dag") == 0 && w->sc->npaths < SCAN_MAX_FILES) {
        if (w->sc->npaths == w->sc->cap) {
            w->sc->cap = w->sc->cap ? w->sc->cap * 2 : 16;
            w->sc->paths = dg_xrealloc(w->sc->paths, w->sc->cap * sizeof *w->sc->paths);
        }
        w->sc->paths[w->sc->npaths++] = p;
        return;
    }
    free(p);
}

static void walk_dir(scan *sc, const char *dir, int depth)
{
    walker w = {sc, dir, NULL, 0, 0, 0};
    size_t before = sc->npaths;
    if (depth <= SCAN_MAX_DEPTH) dg_os_list_dir(dir, walk_entry, &w);
    if (w.build && depth > 0) { /* skipped, with what it listed (the root is the user's choice) */
        while (sc->npaths > before) free(sc->paths[--sc->npaths]);
        for (size_t i = 0; i < w.nsub; i++) free(w.subdirs[i]);
        w.nsub = 0;
    }
    for (size_t i = 0; i < w.nsub; i++) {
        walk_dir(sc, w.subdirs[i], depth + 1);
        free(w.subdirs[i]);
    }
    free(w.subdirs);
}

/* Whether a compile already read path (normalised). */
static int unit_has(const dagc_unit *u, const char *path)
{
    const dg_files *F = dagc_unit_files(u);
    for (size_t i = 0; i < F->n; i++) {
        char *a = dg_normalize_path(F->src[i]->path);
        int same = strcmp(a, path) == 0;
        free(a);
        if (same) return 1;
    }
    return 0;
}

static void add_uses(const lsp_index *x, const char *key, int with_defs, occ_list *L)
{
    for (size_t i = 0; i < x->n; i++) {
        const lsp_occ *o = &x->occ[i];
        if ((o->def && !with_defs) || strcmp(o->key, key) != 0) continue;
        int dup = 0;
        for (size_t k = 0; k < L->n && !dup; k++)
            dup = L->v[k]->pos.line == o->pos.line && L->v[k]->pos.col == o->pos.col &&
                  strcmp(L->v[k]->src->path, o->src->path) == 0;
        if (dup) continue;
        if (L->n == L->cap) {
            L->cap = L->cap ? L->cap * 2 : 16;
            L->v = dg_xrealloc(L->v, L->cap * sizeof *L->v);
        }
        L->v[L->n++] = o;
    }
}

static dagc_unit *compile_path(server *S, const char *path);

static void collect(server *S, const char *key, int with_defs, occ_list *L, scan *sc)
{
    memset(sc, 0, sizeof *sc);
    for (doc *d = S->docs; d; d = d->next) {
        lsp_index *x = doc_index(d);
        if (x) add_uses(x, key, with_defs, L);
    }
    if (!S->root) return;
    walk_dir(sc, S->root, 0);
    sc->units = dg_xcalloc(sc->npaths + 1, sizeof *sc->units);
    sc->idx = dg_xcalloc(sc->npaths + 1, sizeof *sc->idx);
    for (size_t i = 0; i < sc->npaths; i++) {
        char *p = dg_normalize_path(sc->paths[i]);
        int seen = 0;
        for (doc *d = S->docs; d && !seen; d = d->next) seen = d->unit && unit_has(d->unit, p);
        for (size_t k = 0; k < sc->n && !seen; k++) seen = unit_has(sc->units[k], p);
        free(p);
        if (seen) continue;
        dagc_unit *u = compile_path(S, sc->paths[i]);
        if (!u) continue;
        sc->units[sc->n] = u;
        sc->idx[sc->n] = dg_xcalloc(1, sizeof **sc->idx);
        lsp_index_build(sc->idx[sc->n], dagc_unit_files(u));
        add_uses(sc->idx[sc->n], key, with_defs, L);
        sc->n++;
    }
}

static void free_scan(scan *sc)
{
    for (size_t i = 0; i < sc->n; i++) {
        lsp_index_free(sc->idx[i]);
        free(sc->idx[i]);
        dagc_unit_free(sc->units[i]);
    }
    for (size_t i = 0; i < sc->npaths; i++) free(sc->paths[i]);
    free(sc->paths);
    free(sc->units);
    free(sc->idx);
}

static void on_references(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    int err;
    const lsp_occ *o = occ_at(S, params, &d, &err);
    if (err) {
        reply_error(S, id, E_PARAMS, "expected textDocument and position");
        return;
    }
    if (!o || o->kind == LSP_FILE) {
        reply(S, id, o ? "[]" : "null");
        return;
    }
    const dg_json *ctx = get(params, "context");
    const dg_json *decl = get(ctx, "includeDeclaration");
    int with_defs = !decl || decl->kind != DG_JSON_BOOL || decl->b;
    occ_list L = {0};
    scan sc;
    char *key = xstrdup(o->key);
    collect(S, key, with_defs, &L, &sc);
    free(key);
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    for (size_t i = 0; i < L.n; i++) {
        if (i) dg_buf_putc(&b, ',');
        put_location(&b, S, L.v[i]);
    }
    dg_buf_putc(&b, ']');
    free(L.v);
    free_scan(&sc);
    reply_buf(S, id, &b);
}

/* The measured median and p99 of a task, from the profile in the
 * settings, read against the document's program (when it compiled). */
static void prof_line(void *user, const lsp_occ *t, dg_buf *b)
{
    void **u = user;
    server *S = u[0];
    doc *d = u[1];
    if (!S->profile) return;
    const ir_program *p = d->unit ? dagc_unit_program(d->unit) : NULL;
    if (!p) {
        dg_buf_puts(b, "\nmeasured: not shown while the file has errors\n");
        return;
    }
    if (d->prof_state == 0) {
        dg_buf err = {0};
        d->prof_state = dg_profile_load(S->profile, p, &d->prof, &err) == 0 ? 1 : -1;
        if (d->prof_state < 0) {
            dg_buf_putc(&err, 0);
            dg_buf_printf(b, "\nmeasured: the profile could not be read: %s\n", err.p);
        }
        dg_buf_free(&err);
        if (d->prof_state < 0) return;
    }
    if (d->prof_state < 0) return;
    size_t nl = strlen(t->name);
    int shown = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        const dg_prof_graph *pg = &d->prof.graphs[gi];
        if (!pg->present) continue;
        for (uint32_t k = 0; k < g->nnodes; k++) {
            const ir_node *n = &g->nodes[k];
            if (n->kind != IR_TASK) continue;
            size_t l = strlen(n->name);
            int own = strcmp(g->name, t->graph->name) == 0 && strcmp(n->name, t->name) == 0;
            /* the same task copied into a graph that runs its graph: "phys.integrate" */
            int copied = n->sub != UINT32_MAX && l > nl && n->name[l - nl - 1] == '.' &&
                         strcmp(n->name + l - nl, t->name) == 0 &&
                         strcmp(g->subs[n->sub].graph, t->graph->name) == 0;
            if (!own && !copied) continue;
            const dg_prof_node *pn = &pg->nodes[k];
            if (!pn->runs) {
                dg_buf_printf(b, "\nmeasured (%s): not run in %u frames\n", n->name, pg->frames);
            } else {
                char m[32], q[32];
                dg_fmt_duration(pn->median_ns, m, sizeof m);
                dg_fmt_duration(pn->p99_ns, q, sizeof q);
                dg_buf_printf(b, "\nmeasured (%s in `%s`, %u frames): median %s, p99 %s\n", n->name,
                              g->name, pn->runs, m, q);
            }
            shown++;
        }
    }
    if (!shown) dg_buf_puts(b, "\nmeasured: not in the profile\n");
}

static void on_hover(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    int err;
    const lsp_occ *o = occ_at(S, params, &d, &err);
    if (err) {
        reply_error(S, id, E_PARAMS, "expected textDocument and position");
        return;
    }
    if (!o) {
        reply(S, id, "null");
        return;
    }
    dg_buf text = {0};
    void *user[2] = {S, d};
    lsp_index_hover(&d->index, o, &text, prof_line, user);
    dg_buf_putc(&text, 0);
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"contents\":{\"kind\":\"markdown\",\"value\":");
    jstr(&b, text.p);
    dg_buf_puts(&b, "},\"range\":");
    put_range(&b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_putc(&b, '}');
    dg_buf_free(&text);
    reply_buf(S, id, &b);
}

static void put_symbol(dg_buf *b, server *S, const lsp_occ *o, int kind, uint32_t end_line,
                       uint32_t end_col)
{
    dg_buf_puts(b, "{\"name\":");
    jstr(b, o->name);
    dg_buf_printf(b, ",\"kind\":%d,\"range\":", kind);
    put_range(b, S, o->src, o->pos.line, o->pos.col, end_line, end_col);
    dg_buf_puts(b, ",\"selectionRange\":");
    put_range(b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
}

static void on_symbols(server *S, const dg_json *id, const dg_json *params)
{
    const char *uri = get_str(get(params, "textDocument"), "uri");
    if (!uri) {
        reply_error(S, id, E_PARAMS, "expected textDocument");
        return;
    }
    doc *d = find_doc(S, uri);
    lsp_index *x = d ? doc_index(d) : NULL;
    if (!x) {
        reply(S, id, "null");
        return;
    }
    const dg_source *src = doc_src(d);
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    int n = 0;
    /* LSP SymbolKind: Module 2, Function 12, Variable 13, Event 24. */
    for (size_t i = 0; i < x->n; i++) {
        const lsp_occ *o = &x->occ[i];
        if (!o->def || o->src != src) continue;
        if (o->kind == LSP_RESOURCE) {
            if (n++) dg_buf_putc(&b, ',');
            put_symbol(&b, S, o, 13, o->pos.line, o->pos.col + o->len);
            dg_buf_putc(&b, '}');
        } else if (o->kind == LSP_GRAPH) {
            /* the graph's range runs to its last statement's name */
            uint32_t el = o->pos.line, ec = o->pos.col + o->len;
            size_t k = i + 1, first = i + 1;
            for (; k < x->n && (x->occ[k].kind != LSP_GRAPH || !x->occ[k].def) &&
                   x->occ[k].src == src; k++)
                if (x->occ[k].def && x->occ[k].graph == o->graph) {
                    el = x->occ[k].pos.line;
                    ec = x->occ[k].pos.col + x->occ[k].len;
                }
            if (n++) dg_buf_putc(&b, ',');
            put_symbol(&b, S, o, 2, el, ec);
            dg_buf_puts(&b, ",\"children\":[");
            int c = 0;
            for (size_t j = first; j < k; j++) {
                const lsp_occ *t = &x->occ[j];
                if (!t->def || t->graph != o->graph || !t->stmt) continue;
                if (c++) dg_buf_putc(&b, ',');
                put_symbol(&b, S, t, t->kind == LSP_GATE ? 24 : 12, t->pos.line, t->pos.col + t->len);
                dg_buf_putc(&b, '}');
            }
            dg_buf_puts(&b, "]}");
        }
    }
    dg_buf_putc(&b, ']');
    reply_buf(S, id, &b);
}

static void item(dg_buf *b, int *n, const char *label, int kind, const char *detail)
{
    if ((*n)++) dg_buf_putc(b, ',');
    dg_buf_puts(b, "{\"label\":");
    jstr(b, label);
    dg_buf_printf(b, ",\"kind\":%d", kind);
    if (detail) {
        dg_buf_puts(b, ",\"detail\":");
        jstr(b, detail);
    }
    dg_buf_putc(b, '}');
}

static const char *tok_word(int t)
{
    switch (t) {
    case TK_GRAPH: return "graph";
    case TK_TASK: return "task";
    case TK_GATE: return "gate";
    case TK_INCLUDE: return "include";
    case TK_AFTER: return "after";
    case TK_ON: return "on main";
    case TK_MAIN: return "main";
    case TK_HOT: return "hot";
    case TK_FIBER: return "fiber";
    case TK_PARALLEL: return "parallel";
    case TK_GRAIN: return "grain";
    case TK_CALL: return "call";
    case TK_COST: return "cost";
    case TK_WHEN: return "when";
    case TK_AND: return "and";
    case TK_OR: return "or";
    case TK_IMPORT: return "import";
    case TK_RUN: return "run";
    case TK_RESOURCE: return "resource";
    case TK_READS: return "reads";
    case TK_WRITES: return "writes";
    case TK_PREV: return "prev";
    default: return NULL;
    }
}

/* A clause keyword the task being written may still take: each clause
 * once, and `run` with nothing but `after` and `when` (sema's rules). */
static int clause_ok(int tok, unsigned have)
{
    int k;
    switch (tok) {
    case TK_AFTER: k = CL_AFTER; break;
    case TK_ON: k = CL_MAIN; break;
    case TK_HOT: k = CL_HOT; break;
    case TK_FIBER: k = CL_FIBER; break;
    case TK_PARALLEL: k = CL_PARALLEL; break;
    case TK_CALL: k = CL_CALL; break;
    case TK_WHEN: k = CL_WHEN; break;
    case TK_COST: k = CL_COST; break;
    case TK_RUN: k = CL_RUN; break;
    case TK_READS: k = CL_READS; break;
    case TK_WRITES: k = CL_WRITES; break;
    default: return 1;
    }
    if (have & (1u << k)) return 0;
    unsigned runs_not = ~((1u << CL_AFTER) | (1u << CL_WHEN) | (1u << CL_RUN)) & ((1u << CL_COUNT_) - 1);
    if (k == CL_RUN && (have & runs_not)) return 0;
    if ((have & (1u << CL_RUN)) && k != CL_AFTER && k != CL_WHEN) return 0;
    return 1;
}

static void on_completion(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    uint32_t line, col;
    int r = position(S, params, &d, &line, &col);
    if (r == 0) {
        reply_error(S, id, E_PARAMS, "expected textDocument and position");
        return;
    }
    const dg_source *src = r > 0 ? doc_src(d) : NULL;
    if (!src) { /* not open, or not compiled (a file over the size limit) */
        reply(S, id, "null");
        return;
    }
    /* The text before the cursor, less the word being typed. */
    size_t off = d->len;
    if (line <= src->nlines) {
        size_t len;
        const char *p = dg_source_line(src, line, &len);
        size_t c = col - 1 > len ? len : col - 1;
        off = (size_t)(p - src->text) + c - src->start;
    }
    if (off > d->len) off = d->len;
    while (off > 0) {
        char c = d->text[off - 1];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) break;
        off--;
    }
    dg_source pre;
    dg_source_from_memory(&pre, d->path, d->text, off);
    dg_arena a;
    dg_arena_init(&a);
    dg_expect x;
    dg_parse_expected(&pre, &a, &x);
    lsp_index *ix = doc_index(d);
    dg_buf b = {0};
    int n = 0;
    dg_buf_puts(&b, "{\"isIncomplete\":false,\"items\":[");
    /* CompletionItemKind: Function 3, Variable 6, Module 9, Keyword 14, Event 23. */
    if (!x.stuck) {
        static const char *const top[] = {"graph", "import", "resource", "include"};
        for (size_t i = 0; i < 4; i++) item(&b, &n, top[i], 14, NULL);
    }
    int want_nodes = 0, want_res = 0, want_graphs = 0;
    for (int i = 0; i < x.n; i++) {
        int t = x.tok[i];
        if (t == TK_NAME) {
            if (x.last_kw == TK_AFTER || x.last_kw == TK_AND || x.last_kw == TK_OR ||
                x.last_kw == TK_PREV || x.last_kw == TK_EQ)
                want_nodes = 1;
            else if (x.last_kw == TK_READS || x.last_kw == TK_WRITES) want_res = 1;
            else if (x.last_kw == TK_RUN) want_graphs = 1;
            continue;
        }
        const char *w = tok_word(t);
        if (!w || (x.in_task && !clause_ok(t, x.clauses))) continue;
        item(&b, &n, w, 14, NULL);
    }
    /* After an operand of `after` or a gate the parser has reduced the
     * expression by the time the end is seen: `and` and `or` may still
     * follow it. */
    int expr_kw = x.last_kw == TK_AFTER || x.last_kw == TK_AND || x.last_kw == TK_OR ||
                  x.last_kw == TK_PREV || x.last_kw == TK_EQ;
    if (x.stuck && expr_kw && (x.last_tok == TK_NAME || x.last_tok == TK_RPAREN)) {
        item(&b, &n, "and", 14, NULL);
        item(&b, &n, "or", 14, NULL);
    }
    for (size_t i = 0; ix && i < ix->n; i++) {
        const lsp_occ *o = &ix->occ[i];
        if (!o->def) continue;
        if (want_nodes && o->stmt && o->src == src && x.graph && o->graph->name &&
            strcmp(o->graph->name, x.graph) == 0)
            item(&b, &n, o->name, o->kind == LSP_GATE ? 23 : 3,
                 o->kind == LSP_GATE ? "gate" : "task");
        if (want_res && o->kind == LSP_RESOURCE) item(&b, &n, o->name, 6, "resource");
        if (want_graphs && o->kind == LSP_GRAPH && (!x.graph || strcmp(o->name, x.graph) != 0))
            item(&b, &n, o->name, 9, "graph");
    }
    dg_buf_puts(&b, "]}");
    dg_source_free(&pre);
    dg_arena_free(&a);
    reply_buf(S, id, &b);
}

/* The symbol rename may change at the cursor, or NULL. */
static const lsp_occ *renamable(server *S, const dg_json *params, doc **d, int *err)
{
    const lsp_occ *o = occ_at(S, params, d, err);
    if (!o || o->kind == LSP_FILE) return NULL;
    return o;
}

static void on_prepare_rename(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    int err;
    const lsp_occ *o = renamable(S, params, &d, &err);
    if (err) {
        reply_error(S, id, E_PARAMS, "expected textDocument and position");
        return;
    }
    if (!o) {
        reply(S, id, "null");
        return;
    }
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"range\":");
    put_range(&b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_puts(&b, ",\"placeholder\":");
    jstr(&b, o->name);
    dg_buf_putc(&b, '}');
    reply_buf(S, id, &b);
}

static void on_rename(server *S, const dg_json *id, const dg_json *params)
{
    doc *d = NULL;
    int err;
    const char *to = get_str(params, "newName");
    const lsp_occ *o = renamable(S, params, &d, &err);
    if (err || !to) {
        reply_error(S, id, E_PARAMS, "expected textDocument, position and newName");
        return;
    }
    if (!o) {
        reply_error(S, id, E_FAILED, "no task, gate, graph or resource here to rename");
        return;
    }
    if (!lsp_valid_name(to)) {
        reply_error(S, id, E_PARAMS, "the new name must be an identifier and not a keyword");
        return;
    }
    /* The new name taken already, in the same namespace: refused, as the
     * compile would refuse the result. */
    const char *sep = strrchr(o->key, '\x1f');
    dg_buf nk = {0};
    dg_buf_put(&nk, o->key, sep ? (size_t)(sep - o->key) + 1 : 0);
    dg_buf_puts(&nk, to);
    dg_buf_putc(&nk, 0);
    const lsp_occ *clash = strcmp(to, o->name) != 0 ? lsp_index_def(&d->index, nk.p) : NULL;
    dg_buf_free(&nk);
    if (clash) {
        dg_buf m = {0};
        dg_buf_printf(&m, "'%s' is already defined at %s:%u", to, clash->src->path, clash->pos.line);
        dg_buf_putc(&m, 0);
        reply_error(S, id, E_FAILED, m.p);
        dg_buf_free(&m);
        return;
    }
    occ_list L = {0};
    scan sc;
    char *key = xstrdup(o->key);
    collect(S, key, 1, &L, &sc);
    free(key);
    /* {"changes": {uri: [edit...]}}, the edits of one file together */
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"changes\":{");
    int *done = dg_xcalloc(L.n + 1, sizeof *done);
    int files = 0;
    for (size_t i = 0; i < L.n; i++) {
        if (done[i]) continue;
        if (files++) dg_buf_putc(&b, ',');
        put_uri(&b, L.v[i]->src->path);
        dg_buf_puts(&b, ":[");
        int e = 0;
        for (size_t k = i; k < L.n; k++) {
            if (done[k] || strcmp(L.v[k]->src->path, L.v[i]->src->path) != 0) continue;
            done[k] = 1;
            if (e++) dg_buf_putc(&b, ',');
            const lsp_occ *u = L.v[k];
            dg_buf_puts(&b, "{\"range\":");
            put_range(&b, S, u->src, u->pos.line, u->pos.col, u->pos.line, u->pos.col + u->len);
            dg_buf_puts(&b, ",\"newText\":");
            jstr(&b, to);
            dg_buf_putc(&b, '}');
        }
        dg_buf_putc(&b, ']');
    }
    dg_buf_puts(&b, "}}");
    free(done);
    free(L.v);
    free_scan(&sc);
    reply_buf(S, id, &b);
}

/* Quick fixes: the fix-its of the diagnostics that touch the range. */
static void on_code_action(server *S, const dg_json *id, const dg_json *params)
{
    const char *uri = get_str(get(params, "textDocument"), "uri");
    const dg_json *range = get(params, "range");
    uint32_t sl, el, ch;
    if (!uri || !get_u32(get(range, "start"), "line", &sl) || !get_u32(get(range, "end"), "line", &el) ||
        !get_u32(get(range, "start"), "character", &ch)) {
        reply_error(S, id, E_PARAMS, "expected textDocument and range");
        return;
    }
    doc *d = find_doc(S, uri);
    if (!d || !d->diags) {
        reply(S, id, d ? "[]" : "null");
        return;
    }
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    int n = 0;
    for (size_t i = 0; i < d->diags->n; i++) {
        const dg_json *g = d->diags->items[i];
        const dg_json *fx = get(g, "fixits");
        const char *file = get_str(g, "file");
        uint32_t l = 0, e = 0;
        if (!fx || fx->kind != DG_JSON_ARR || !fx->n || !file || strcmp(file, d->path) != 0) continue;
        if (!get_u32(g, "line", &l)) continue;
        get_u32(g, "end_line", &e);
        if (e < l) e = l;
        if (l - 1 > el || e - 1 < sl) continue;
        if (n++) dg_buf_putc(&b, ',');
        dg_buf m = {0};
        const char *hint = get_str(g, "hint");
        dg_buf_printf(&m, "dagc: %s", hint ? hint : get_str(g, "message") ? get_str(g, "message") : "fix");
        dg_buf_putc(&m, 0);
        dg_buf_puts(&b, "{\"title\":");
        jstr(&b, m.p);
        dg_buf_free(&m);
        dg_buf_puts(&b, ",\"kind\":\"quickfix\",\"diagnostics\":[");
        put_diag(&b, S, d, g, doc_src(d), NULL);
        dg_buf_puts(&b, "],\"edit\":{\"changes\":{");
        /* one list per file, in the order the fix-its name them */
        int files = 0;
        for (size_t k = 0; k < fx->n; k++) {
            const char *fk = get_str(fx->items[k], "file");
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) {
                const char *fj = get_str(fx->items[j], "file");
                seen = fk && fj && strcmp(fk, fj) == 0;
            }
            if (!fk || seen) continue;
            if (files++) dg_buf_putc(&b, ',');
            put_uri(&b, fk);
            dg_buf_puts(&b, ":[");
            int ne = 0;
            const dg_source *fs = unit_src(d, fk);
            for (size_t j = k; j < fx->n; j++) {
                const dg_json *f = fx->items[j];
                const char *fj = get_str(f, "file");
                uint32_t a = 0, c = 0, z = 0, w = 0;
                if (!fj || strcmp(fj, fk) != 0 || !get_u32(f, "line", &a)) continue;
                get_u32(f, "column", &c);
                get_u32(f, "end_line", &z);
                get_u32(f, "end_column", &w);
                if (ne++) dg_buf_putc(&b, ',');
                dg_buf_puts(&b, "{\"range\":");
                put_range(&b, S, fs, a, c, z, w);
                dg_buf_puts(&b, ",\"newText\":");
                jstr(&b, get_str(f, "text"));
                dg_buf_putc(&b, '}');
            }
            dg_buf_putc(&b, ']');
        }
        dg_buf_puts(&b, "}}}");
    }
    dg_buf_putc(&b, ']');
    reply_buf(S, id, &b);
}

static void on_initialize(server *S, const dg_json *id, const dg_json *params)
{
    const dg_json *caps = get(get(params, "capabilities"), "general");
    const dg_json *enc = get(caps, "positionEncodings");
    for (size_t i = 0; enc && enc->kind == DG_JSON_ARR && i < enc->n; i++)
        if (enc->items[i]->kind == DG_JSON_STR && strcmp(enc->items[i]->str, "utf-8") == 0) S->utf8 = 1;
    const char *root = get_str(params, "rootUri");
    if (root) {
        free(S->root);
        S->root = uri_to_path(root);
    }
    apply_settings(S, get(params, "initializationOptions"));
    S->initialized = 1;
    dg_buf b = {0};
    dg_buf_printf(&b, "{\"capabilities\":{\"positionEncoding\":\"%s\",", S->utf8 ? "utf-8" : "utf-16");
    dg_buf_puts(&b, "\"textDocumentSync\":{\"openClose\":true,\"change\":1},"
                    "\"definitionProvider\":true,\"referencesProvider\":true,\"hoverProvider\":true,"
                    "\"documentSymbolProvider\":true,"
                    "\"completionProvider\":{\"triggerCharacters\":[\" \",\",\",\"(\"]},"
                    "\"renameProvider\":{\"prepareProvider\":true},"
                    "\"codeActionProvider\":{\"codeActionKinds\":[\"quickfix\"]}},"
                    "\"serverInfo\":{\"name\":\"dagc\"}}");
    reply_buf(S, id, &b);
}

static void on_open(server *S, const dg_json *params)
{
    const dg_json *td = get(params, "textDocument");
    const char *uri = get_str(td, "uri");
    const dg_json *text = get(td, "text");
    if (!uri || !text || text->kind != DG_JSON_STR) return;
    doc *d = find_doc(S, uri);
    if (!d) {
        d = dg_xcalloc(1, sizeof *d);
        d->uri = xstrdup(uri);
        d->path = uri_to_path(uri);
        dg_arena_init(&d->diag_arena);
        d->next = S->docs;
        S->docs = d;
    }
    free(d->text);
    d->text = xstrdup(text->str);
    d->len = strlen(d->text);
    changed(S, d);
}

static void on_change(server *S, const dg_json *params)
{
    doc *d = find_doc(S, get_str(get(params, "textDocument"), "uri") ? get_str(get(params, "textDocument"), "uri") : "");
    const dg_json *ch = get(params, "contentChanges");
    if (!d || !ch || ch->kind != DG_JSON_ARR || !ch->n) return;
    /* Full sync: the last change holds the whole text. */
    const char *text = get_str(ch->items[ch->n - 1], "text");
    if (!text || get(ch->items[ch->n - 1], "range")) return;
    free(d->text);
    d->text = xstrdup(text);
    d->len = strlen(d->text);
    changed(S, d);
}

static void on_close(server *S, const dg_json *params)
{
    const char *uri = get_str(get(params, "textDocument"), "uri");
    for (doc **pp = &S->docs; uri && *pp; pp = &(*pp)->next) {
        doc *d = *pp;
        if (strcmp(d->uri, uri) != 0) continue;
        *pp = d->next;
        dg_buf b = {0};
        dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":");
        jstr(&b, d->uri);
        dg_buf_puts(&b, ",\"diagnostics\":[]}}");
        send(S, &b);
        dg_buf_free(&b);
        doc_forget(d);
        dg_arena_free(&d->diag_arena);
        free(d->uri);
        free(d->path);
        free(d->text);
        free(d);
        /* Files that imported it read the disk's bytes again. */
        for (doc *o = S->docs; o; o = o->next) o->dirty = 1;
        return;
    }
}

/* ------------------------------------------------------------ the loop */

/* The input, read through a buffer of our own rather than stdio's, so
 * that "is more input waiting?" can be asked (in_pending): changes that
 * arrive together are compiled once, after the last of them. */
static int in_fill(server *S)
{
    if (S->ipos) {
        memmove(S->ib, S->ib + S->ipos, S->ilen - S->ipos);
        S->ilen -= S->ipos;
        S->ipos = 0;
    }
    if (S->ilen == S->icap) {
        S->icap = S->icap ? S->icap * 2 : 65536;
        S->ib = dg_xrealloc(S->ib, S->icap);
    }
    long r = dg_os_read_some(S->in, S->ib + S->ilen, S->icap - S->ilen);
    if (r <= 0) return 0;
    S->ilen += (size_t)r;
    return 1;
}

static int in_getc(server *S)
{
    if (S->ipos == S->ilen && !in_fill(S)) return EOF;
    return (unsigned char)S->ib[S->ipos++];
}

/* Up to n bytes into dst (NULL: dropped); fewer only at the end. */
static size_t in_read(server *S, char *dst, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (S->ipos == S->ilen && !in_fill(S)) break;
        size_t k = S->ilen - S->ipos;
        if (k > n - got) k = n - got;
        if (dst) memcpy(dst + got, S->ib + S->ipos, k);
        S->ipos += k;
        got += k;
    }
    return got;
}

static int in_pending(server *S)
{
    return S->ipos < S->ilen || dg_os_input_ready(S->in) == 1;
}

/* One header line without its end, at most cap - 1 bytes (the rest of a
 * longer one is skipped, *longer set); -1 at the end of input. */
static int in_line(server *S, char *line, size_t cap, int *longer)
{
    size_t n = 0;
    *longer = 0;
    for (;;) {
        int c = in_getc(S);
        if (c == EOF) return n ? (int)n : -1;
        if (c == '\n') break;
        if (n + 1 < cap) line[n++] = (char)c;
        else *longer = 1;
    }
    while (n && line[n - 1] == '\r') n--;
    line[n] = 0;
    return (int)n;
}

/* Header names compare without case, as HTTP's do. */
static int prefix_nocase(const char *s, const char *lower)
{
    for (; *lower; s++, lower++)
        if ((*s >= 'A' && *s <= 'Z' ? *s + 32 : *s) != *lower) return 0;
    return 1;
}

/* One message's body (malloc'd, *len bytes), or NULL at the end of input.
 * *bad: the header was not one the protocol allows (no body read). */
static char *read_message(server *S, size_t *len, int *bad)
{
    char line[1024];
    size_t clen = SIZE_MAX;
    int any = 0;
    *bad = 0;
    for (;;) {
        int longer;
        int n = in_line(S, line, sizeof line, &longer);
        if (n < 0) return NULL;
        if (longer) {
            *bad = 1;
            continue;
        }
        if (n == 0) {
            if (!any) continue; /* stray blank lines between messages */
            break;
        }
        any = 1;
        if (prefix_nocase(line, "content-length:")) {
            const char *v = line + 15;
            while (*v == ' ' || *v == '\t') v++;
            size_t val = 0;
            int digits = 0;
            for (; *v >= '0' && *v <= '9' && val <= MAX_MESSAGE * 2; v++, digits++)
                val = val * 10 + (size_t)(*v - '0');
            while (*v == ' ' || *v == '\t') v++;
            if (*v || !digits) *bad = 1;
            else clen = val;
        }
    }
    if (clen == SIZE_MAX) {
        *bad = 1;
        return xstrdup("");
    }
    if (clen > MAX_MESSAGE) { /* read past it, to find the next message */
        if (in_read(S, NULL, clen) < clen) return NULL;
        *bad = 2;
        *len = 0;
        return xstrdup("");
    }
    char *body = dg_xmalloc(clen + 1);
    size_t got = in_read(S, body, clen);
    body[got] = 0;
    *len = got;
    if (got < clen) {
        free(body);
        return NULL;
    }
    return body;
}

/* Compiles what changed since the last compile. */
static void flush(server *S)
{
    for (doc *d = S->docs; d; d = d->next)
        if (d->dirty) analyze(S, d);
}

static void dispatch(server *S, const dg_json *msg, int *done, int *status)
{
    const dg_json *id = get(msg, "id");
    const dg_json *mv = get(msg, "method");
    const dg_json *params = get(msg, "params");
    if (id && id->kind != DG_JSON_NUM && id->kind != DG_JSON_STR) {
        reply_error(S, NULL, E_INVALID_REQUEST, "the id must be a number or a string");
        return;
    }
    if (!mv || mv->kind != DG_JSON_STR) {
        if (id || !get(msg, "result")) /* responses to us are fine: we send no requests */
            reply_error(S, id, E_INVALID_REQUEST, "a request needs a method");
        return;
    }
    const char *m = mv->str;
    if (params && params->kind != DG_JSON_OBJ && params->kind != DG_JSON_ARR) {
        if (id) reply_error(S, id, E_INVALID_REQUEST, "params must be an object or an array");
        return;
    }
    if (strcmp(m, "exit") == 0) {
        *done = 1;
        *status = S->shutdown ? 0 : 1;
        return;
    }
    if (!S->initialized && strcmp(m, "initialize") != 0) {
        if (id) reply_error(S, id, E_NOT_INIT, "the server is not initialized");
        return;
    }
    if (S->shutdown) {
        if (id) reply_error(S, id, E_INVALID_REQUEST, "the server is shutting down");
        return;
    }
    if (!id) { /* notifications */
        if (strcmp(m, "textDocument/didOpen") == 0) on_open(S, params);
        else if (strcmp(m, "textDocument/didChange") == 0) on_change(S, params);
        else if (strcmp(m, "textDocument/didClose") == 0) on_close(S, params);
        else if (strcmp(m, "workspace/didChangeConfiguration") == 0) {
            apply_settings(S, get(params, "settings"));
            for (doc *d = S->docs; d; d = d->next) d->dirty = 1;
        }
        return; /* others ($/cancelRequest, initialized, didSave) need nothing */
    }
    flush(S); /* a request is answered from the text as it is now */
    if (strcmp(m, "initialize") == 0) {
        if (S->initialized) reply_error(S, id, E_INVALID_REQUEST, "initialize was already called");
        else on_initialize(S, id, params);
    } else if (strcmp(m, "shutdown") == 0) {
        S->shutdown = 1;
        reply(S, id, "null");
    } else if (strcmp(m, "textDocument/definition") == 0) {
        on_definition(S, id, params);
    } else if (strcmp(m, "textDocument/references") == 0) {
        on_references(S, id, params);
    } else if (strcmp(m, "textDocument/hover") == 0) {
        on_hover(S, id, params);
    } else if (strcmp(m, "textDocument/documentSymbol") == 0) {
        on_symbols(S, id, params);
    } else if (strcmp(m, "textDocument/completion") == 0) {
        on_completion(S, id, params);
    } else if (strcmp(m, "textDocument/prepareRename") == 0) {
        on_prepare_rename(S, id, params);
    } else if (strcmp(m, "textDocument/rename") == 0) {
        on_rename(S, id, params);
    } else if (strcmp(m, "textDocument/codeAction") == 0) {
        on_code_action(S, id, params);
    } else {
        reply_error(S, id, E_METHOD, "method not found");
    }
}

int dg_lsp_main(FILE *in, FILE *out)
{
    server S;
    memset(&S, 0, sizeof S);
    S.in = in;
    S.out = out;
    S.max_errors = 100;
    dg_os_keep_freed_memory(); /* each change compiles the file again */
    int status = 1, done = 0;
    while (!done) {
        size_t len = 0;
        int bad;
        char *body = read_message(&S, &len, &bad);
        if (!body) break;
        if (bad) {
            reply_error(&S, NULL, E_PARSE, bad == 2 ? "message too large" : "bad message header");
            free(body);
            continue;
        }
        dg_arena a;
        dg_arena_init(&a);
        char err[256];
        const dg_json *msg = dg_json_parse(&a, "message", body, len, NULL, err, sizeof err);
        if (!msg) reply_error(&S, NULL, E_PARSE, err);
        else if (msg->kind != DG_JSON_OBJ) reply_error(&S, NULL, E_INVALID_REQUEST, "a message must be an object");
        else dispatch(&S, msg, &done, &status);
        dg_arena_free(&a);
        free(body);
        if (!done && !in_pending(&S)) flush(&S);
    }
    while (S.docs) {
        doc *d = S.docs;
        S.docs = d->next;
        doc_forget(d);
        dg_arena_free(&d->diag_arena);
        free(d->uri);
        free(d->path);
        free(d->text);
        free(d);
    }
    free_settings(&S);
    free(S.root);
    free(S.ib);
    return status;
}
