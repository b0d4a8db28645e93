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

/* A message larger than this is refused (a file is at most 64 MiB, and
 * JSON's escapes can double it). */
#define MAX_MESSAGE ((size_t)160 << 20)

char *lsp_xstrdup(const char *s)
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
void lsp_jstr(dg_buf *b, const char *s)
{
    dg_json_write_str(b, s ? s : "");
}

/* A request's id as it came (a number or a string), or null. */
static void put_id(dg_buf *b, const dg_json *id)
{
    if (id && id->kind == DG_JSON_STR) lsp_jstr(b, id->str);
    else if (id && id->kind == DG_JSON_NUM && id->num >= -9e15 && id->num <= 9e15 &&
             id->num == (double)(long long)id->num)
        dg_buf_printf(b, "%lld", (long long)id->num);
    else if (id && id->kind == DG_JSON_NUM) dg_buf_printf(b, "%.17g", id->num);
    else dg_buf_puts(b, "null");
}

void lsp_send(lsp_server *S, const dg_buf *body)
{
    fprintf(S->out, "Content-Length: %zu\r\n\r\n", body->len);
    fwrite(body->p, 1, body->len, S->out);
    fflush(S->out);
}

void lsp_reply(lsp_server *S, const dg_json *id, const char *result)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(&b, id);
    dg_buf_puts(&b, ",\"result\":");
    dg_buf_puts(&b, result);
    dg_buf_putc(&b, '}');
    lsp_send(S, &b);
    dg_buf_free(&b);
}

void lsp_reply_buf(lsp_server *S, const dg_json *id, dg_buf *result)
{
    dg_buf_putc(result, 0);
    lsp_reply(S, id, result->p);
    dg_buf_free(result);
}

void lsp_reply_error(lsp_server *S, const dg_json *id, int code, const char *msg)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"id\":");
    put_id(&b, id);
    dg_buf_printf(&b, ",\"error\":{\"code\":%d,\"message\":", code);
    lsp_jstr(&b, msg);
    dg_buf_puts(&b, "}}");
    lsp_send(S, &b);
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
    if (strncmp(uri, "file://", 7) != 0) return lsp_xstrdup(uri);
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

void lsp_put_uri(dg_buf *b, const char *path)
{
    if (strstr(path, "://")) { /* not a file: the URI it came as */
        lsp_jstr(b, path);
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
    lsp_jstr(b, u.p);
    dg_buf_free(&u);
}

/* ----------------------------------------------------------- positions */

/* dagc counts columns in bytes; the protocol in UTF-16 code units unless
 * UTF-8 was agreed. Columns here are 0-based. */
static uint32_t to_client_col(const lsp_server *S, const dg_source *s, uint32_t line, uint32_t col0)
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

uint32_t lsp_from_client_col(const lsp_server *S, const dg_source *s, uint32_t line, uint32_t ch)
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
void lsp_put_range(dg_buf *b, const lsp_server *S, const dg_source *s, uint32_t l1, uint32_t c1,
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

void lsp_put_location(dg_buf *b, const lsp_server *S, const lsp_occ *o)
{
    dg_buf_puts(b, "{\"uri\":");
    lsp_put_uri(b, o->src->path);
    dg_buf_puts(b, ",\"range\":");
    lsp_put_range(b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_putc(b, '}');
}

/* ------------------------------------------------------------ params */

const dg_json *lsp_get(const dg_json *o, const char *k)
{
    return dg_json_get(o, k);
}

const char *lsp_get_str(const dg_json *o, const char *k)
{
    const dg_json *v = lsp_get(o, k);
    return v && v->kind == DG_JSON_STR ? v->str : NULL;
}

int lsp_get_u32(const dg_json *o, const char *k, uint32_t *out)
{
    const dg_json *v = lsp_get(o, k);
    if (!v || v->kind != DG_JSON_NUM || v->num < 0 || v->num > 4e9 || v->num != (double)(uint32_t)v->num)
        return 0;
    *out = (uint32_t)v->num;
    return 1;
}

/* ------------------------------------------------------------ settings */

static void free_settings(lsp_server *S)
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
static char *abs_in_root(lsp_server *S, const char *p)
{
    if (S->root && p[0] != '/' && !(p[0] && p[1] == ':')) {
        size_t n = strlen(S->root) + strlen(p) + 2;
        char *s = dg_xmalloc(n);
        snprintf(s, n, "%s/%s", S->root, p);
        return s;
    }
    return lsp_xstrdup(p);
}

static void apply_settings(lsp_server *S, const dg_json *v)
{
    if (!v || v->kind != DG_JSON_OBJ) return;
    const dg_json *inner = lsp_get(v, "dagc");
    if (inner && inner->kind == DG_JSON_OBJ) v = inner;
    free_settings(S);
    const char *prof = lsp_get_str(v, "profile");
    if (prof && *prof) S->profile = abs_in_root(S, prof);
    const dg_json *dirs = lsp_get(v, "importDirs");
    if (dirs && dirs->kind == DG_JSON_ARR) {
        S->idirs = dg_xcalloc(dirs->n + 1, sizeof *S->idirs);
        for (size_t i = 0; i < dirs->n && i < 64; i++)
            if (dirs->items[i]->kind == DG_JSON_STR) S->idirs[S->nidirs++] = abs_in_root(S, dirs->items[i]->str);
    }
    uint32_t me;
    if (lsp_get_u32(v, "maxErrors", &me)) S->max_errors = me ? (int)me : -1;
}

static void on_initialize(lsp_server *S, const dg_json *id, const dg_json *params)
{
    const dg_json *caps = lsp_get(lsp_get(params, "capabilities"), "general");
    const dg_json *enc = lsp_get(caps, "positionEncodings");
    for (size_t i = 0; enc && enc->kind == DG_JSON_ARR && i < enc->n; i++)
        if (enc->items[i]->kind == DG_JSON_STR && strcmp(enc->items[i]->str, "utf-8") == 0) S->utf8 = 1;
    const char *root = lsp_get_str(params, "rootUri");
    if (root) {
        free(S->root);
        S->root = uri_to_path(root);
    }
    apply_settings(S, lsp_get(params, "initializationOptions"));
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
    lsp_reply_buf(S, id, &b);
}

static void on_open(lsp_server *S, const dg_json *params)
{
    const dg_json *td = lsp_get(params, "textDocument");
    const char *uri = lsp_get_str(td, "uri");
    const dg_json *text = lsp_get(td, "text");
    if (!uri || !text || text->kind != DG_JSON_STR) return;
    lsp_doc *d = lsp_find_doc(S, uri);
    if (!d) {
        d = dg_xcalloc(1, sizeof *d);
        d->uri = lsp_xstrdup(uri);
        d->path = uri_to_path(uri);
        dg_arena_init(&d->diag_arena);
        d->next = S->docs;
        S->docs = d;
    }
    free(d->text);
    d->text = lsp_xstrdup(text->str);
    d->len = strlen(d->text);
    lsp_changed(S, d);
}

static void on_change(lsp_server *S, const dg_json *params)
{
    lsp_doc *d = lsp_find_doc(S, lsp_get_str(lsp_get(params, "textDocument"), "uri") ? lsp_get_str(lsp_get(params, "textDocument"), "uri") : "");
    const dg_json *ch = lsp_get(params, "contentChanges");
    if (!d || !ch || ch->kind != DG_JSON_ARR || !ch->n) return;
    /* Full sync: the last change holds the whole text. */
    const char *text = lsp_get_str(ch->items[ch->n - 1], "text");
    if (!text || lsp_get(ch->items[ch->n - 1], "range")) return;
    free(d->text);
    d->text = lsp_xstrdup(text);
    d->len = strlen(d->text);
    lsp_changed(S, d);
}

static void on_close(lsp_server *S, const dg_json *params)
{
    const char *uri = lsp_get_str(lsp_get(params, "textDocument"), "uri");
    for (lsp_doc **pp = &S->docs; uri && *pp; pp = &(*pp)->next) {
        lsp_doc *d = *pp;
        if (strcmp(d->uri, uri) != 0) continue;
        *pp = d->next;
        dg_buf b = {0};
        dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":");
        lsp_jstr(&b, d->uri);
        dg_buf_puts(&b, ",\"diagnostics\":[]}}");
        lsp_send(S, &b);
        dg_buf_free(&b);
        lsp_doc_forget(d);
        dg_arena_free(&d->diag_arena);
        free(d->uri);
        free(d->path);
        free(d->text);
        free(d);
        /* Files that imported it read the disk's bytes again. */
        for (lsp_doc *o = S->docs; o; o = o->next) o->dirty = 1;
        return;
    }
}

/* ------------------------------------------------------------ the loop */

/* The input, read through a buffer of our own rather than stdio's, so
 * that "is more input waiting?" can be asked (in_pending): changes that
 * arrive together are compiled once, after the last of them. */
static int in_fill(lsp_server *S)
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

static int in_getc(lsp_server *S)
{
    if (S->ipos == S->ilen && !in_fill(S)) return EOF;
    return (unsigned char)S->ib[S->ipos++];
}

/* Up to n bytes into dst (NULL: dropped); fewer only at the end. */
static size_t in_read(lsp_server *S, char *dst, size_t n)
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

static int in_pending(lsp_server *S)
{
    return S->ipos < S->ilen || dg_os_input_ready(S->in) == 1;
}

/* One header line without its end, at most cap - 1 bytes (the rest of a
 * longer one is skipped, *longer set); -1 at the end of input. */
static int in_line(lsp_server *S, char *line, size_t cap, int *longer)
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
static char *read_message(lsp_server *S, size_t *len, int *bad)
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
        return lsp_xstrdup("");
    }
    if (clen > MAX_MESSAGE) { /* read past it, to find the next message */
        if (in_read(S, NULL, clen) < clen) return NULL;
        *bad = 2;
        *len = 0;
        return lsp_xstrdup("");
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
static void flush(lsp_server *S)
{
    for (lsp_doc *d = S->docs; d; d = d->next)
        if (d->dirty) lsp_analyze(S, d);
}

static void dispatch(lsp_server *S, const dg_json *msg, int *done, int *status)
{
    const dg_json *id = lsp_get(msg, "id");
    const dg_json *mv = lsp_get(msg, "method");
    const dg_json *params = lsp_get(msg, "params");
    if (id && id->kind != DG_JSON_NUM && id->kind != DG_JSON_STR) {
        lsp_reply_error(S, NULL, LSP_E_INVALID_REQUEST, "the id must be a number or a string");
        return;
    }
    if (!mv || mv->kind != DG_JSON_STR) {
        if (id || !lsp_get(msg, "result")) /* responses to us are fine: we send no requests */
            lsp_reply_error(S, id, LSP_E_INVALID_REQUEST, "a request needs a method");
        return;
    }
    const char *m = mv->str;
    if (params && params->kind != DG_JSON_OBJ && params->kind != DG_JSON_ARR) {
        if (id) lsp_reply_error(S, id, LSP_E_INVALID_REQUEST, "params must be an object or an array");
        return;
    }
    if (strcmp(m, "exit") == 0) {
        *done = 1;
        *status = S->shutdown ? 0 : 1;
        return;
    }
    if (!S->initialized && strcmp(m, "initialize") != 0) {
        if (id) lsp_reply_error(S, id, LSP_E_NOT_INIT, "the server is not initialized");
        return;
    }
    if (S->shutdown) {
        if (id) lsp_reply_error(S, id, LSP_E_INVALID_REQUEST, "the server is shutting down");
        return;
    }
    if (!id) { /* notifications */
        if (strcmp(m, "textDocument/didOpen") == 0) on_open(S, params);
        else if (strcmp(m, "textDocument/didChange") == 0) on_change(S, params);
        else if (strcmp(m, "textDocument/didClose") == 0) on_close(S, params);
        else if (strcmp(m, "workspace/didChangeConfiguration") == 0) {
            apply_settings(S, lsp_get(params, "settings"));
            for (lsp_doc *d = S->docs; d; d = d->next) d->dirty = 1;
        }
        return; /* others ($/cancelRequest, initialized, didSave) need nothing */
    }
    flush(S); /* a request is answered from the text as it is now */
    if (strcmp(m, "initialize") == 0) {
        if (S->initialized) lsp_reply_error(S, id, LSP_E_INVALID_REQUEST, "initialize was already called");
        else on_initialize(S, id, params);
    } else if (strcmp(m, "shutdown") == 0) {
        S->shutdown = 1;
        lsp_reply(S, id, "null");
    } else if (strcmp(m, "textDocument/definition") == 0) {
        lsp_on_definition(S, id, params);
    } else if (strcmp(m, "textDocument/references") == 0) {
        lsp_on_references(S, id, params);
    } else if (strcmp(m, "textDocument/hover") == 0) {
        lsp_on_hover(S, id, params);
    } else if (strcmp(m, "textDocument/documentSymbol") == 0) {
        lsp_on_symbols(S, id, params);
    } else if (strcmp(m, "textDocument/completion") == 0) {
        lsp_on_completion(S, id, params);
    } else if (strcmp(m, "textDocument/prepareRename") == 0) {
        lsp_on_prepare_rename(S, id, params);
    } else if (strcmp(m, "textDocument/rename") == 0) {
        lsp_on_rename(S, id, params);
    } else if (strcmp(m, "textDocument/codeAction") == 0) {
        lsp_on_code_action(S, id, params);
    } else {
        lsp_reply_error(S, id, LSP_E_METHOD, "method not found");
    }
}

int dg_lsp_main(FILE *in, FILE *out)
{
    lsp_server S;
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
            lsp_reply_error(&S, NULL, LSP_E_PARSE, bad == 2 ? "message too large" : "bad message header");
            free(body);
            continue;
        }
        dg_arena a;
        dg_arena_init(&a);
        char err[256];
        const dg_json *msg = dg_json_parse(&a, "message", body, len, NULL, err, sizeof err);
        if (!msg) lsp_reply_error(&S, NULL, LSP_E_PARSE, err);
        else if (msg->kind != DG_JSON_OBJ) lsp_reply_error(&S, NULL, LSP_E_INVALID_REQUEST, "a message must be an object");
        else dispatch(&S, msg, &done, &status);
        dg_arena_free(&a);
        free(body);
        if (!done && !in_pending(&S)) flush(&S);
    }
    while (S.docs) {
        lsp_doc *d = S.docs;
        S.docs = d->next;
        lsp_doc_forget(d);
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
