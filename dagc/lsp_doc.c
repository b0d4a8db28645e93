/* lsp_doc.c - `dagc --lsp`'s documents (lsp.h): the open files, their
 * compiles by the front end, and the diagnostics published for them (the
 * JSON dagc --diagnostics-format=json writes, in the protocol's shape:
 * hints after the message, notes as related locations, an imported
 * file's error at its `import` line). */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

#include "os.h"

/* ----------------------------------------------------------- documents */

lsp_doc *lsp_find_doc(lsp_server *S, const char *uri)
{
    for (lsp_doc *d = S->docs; d; d = d->next)
        if (strcmp(d->uri, uri) == 0) return d;
    return NULL;
}

void lsp_doc_forget(lsp_doc *d)
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

lsp_index *lsp_doc_index(lsp_doc *d)
{
    if (!d->unit) return NULL;
    if (!d->indexed) {
        lsp_index_build(&d->index, dagc_unit_files(d->unit));
        d->indexed = 1;
    }
    return &d->index;
}

/* The document's own source in its unit (its bytes as last compiled). */
const dg_source *lsp_doc_src(lsp_doc *d)
{
    const dg_files *F = d->unit ? dagc_unit_files(d->unit) : NULL;
    return F && F->n ? F->src[0] : NULL;
}

/* A file of d's last compile, by its path as loaded. */
const dg_source *lsp_unit_src(lsp_doc *d, const char *path)
{
    const dg_files *F = d->unit ? dagc_unit_files(d->unit) : NULL;
    for (size_t i = 0; F && path && i < F->n; i++)
        if (strcmp(F->src[i]->path, path) == 0) return F->src[i];
    return NULL;
}

/* A diagnostic of the compile's JSON as the protocol's Diagnostic. */
void lsp_put_diag(dg_buf *b, lsp_server *S, lsp_doc *d, const dg_json *g, const dg_source *src,
                     const dg_json *at)
{
    const dg_json *where = at ? at : g;
    uint32_t l = 0, c = 0, el = 0, ec = 0;
    lsp_get_u32(where, "line", &l);
    lsp_get_u32(where, "column", &c);
    lsp_get_u32(where, "end_line", &el);
    lsp_get_u32(where, "end_column", &ec);
    if (!l) {
        el = l = 1;
        c = ec = 1;
    }
    dg_buf_puts(b, "{\"range\":");
    lsp_put_range(b, S, src, l, c, el, ec);
    const char *sev = lsp_get_str(g, "severity");
    int level = !sev || strcmp(sev, "error") == 0 || strcmp(sev, "fatal") == 0 ? 1
              : strcmp(sev, "warning") == 0 ? 2 : strcmp(sev, "note") == 0 ? 3 : 4;
    dg_buf_printf(b, ",\"severity\":%d,\"source\":\"dagc\"", level);
    const char *flag = lsp_get_str(g, "flag");
    if (flag) {
        dg_buf_puts(b, ",\"code\":");
        lsp_jstr(b, flag);
    }
    dg_buf m = {0};
    if (at) { /* a diagnostic of an imported file, shown at the import */
        uint32_t il = 0, ic = 0;
        lsp_get_u32(g, "line", &il);
        lsp_get_u32(g, "column", &ic);
        dg_buf_printf(&m, "in imported file %s:%u:%u: ", lsp_get_str(g, "file") ? lsp_get_str(g, "file") : "?",
                      il, ic);
    }
    dg_buf_puts(&m, lsp_get_str(g, "message") ? lsp_get_str(g, "message") : "");
    if (lsp_get_str(g, "hint")) dg_buf_printf(&m, "\nhint: %s", lsp_get_str(g, "hint"));
    dg_buf_putc(&m, 0);
    dg_buf_puts(b, ",\"message\":");
    lsp_jstr(b, m.p);
    dg_buf_free(&m);
    const dg_json *notes = lsp_get(g, "notes");
    int first = 1;
    if (notes && notes->kind == DG_JSON_ARR) {
        for (size_t i = 0; i < notes->n; i++) {
            const dg_json *n = notes->items[i];
            const char *file = lsp_get_str(n, "file");
            uint32_t nl = 0, nc = 0, nel = 0, nec = 0;
            if (!file || !lsp_get_u32(n, "line", &nl)) continue;
            lsp_get_u32(n, "column", &nc);
            lsp_get_u32(n, "end_line", &nel);
            lsp_get_u32(n, "end_column", &nec);
            dg_buf_puts(b, first ? ",\"relatedInformation\":[" : ",");
            first = 0;
            dg_buf_puts(b, "{\"location\":{\"uri\":");
            lsp_put_uri(b, file);
            dg_buf_puts(b, ",\"range\":");
            lsp_put_range(b, S, lsp_unit_src(d, file), nl, nc, nel, nec);
            dg_buf_puts(b, "},\"message\":");
            lsp_jstr(b, lsp_get_str(n, "message"));
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
    const dg_json *notes = lsp_get(g, "notes");
    const dg_json *found = NULL;
    for (size_t i = 0; notes && notes->kind == DG_JSON_ARR && i < notes->n; i++) {
        const char *m = lsp_get_str(notes->items[i], "message");
        const char *f = lsp_get_str(notes->items[i], "file");
        if (m && f && strncmp(m, "in file imported from ", 22) == 0 && strcmp(f, path) == 0)
            found = notes->items[i]; /* the outermost, the one written in this file */
    }
    return found;
}

static void publish(lsp_server *S, lsp_doc *d, dg_buf *json)
{
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/publishDiagnostics\",\"params\":{\"uri\":");
    lsp_jstr(&b, d->uri);
    dg_buf_puts(&b, ",\"diagnostics\":[");
    char err[256];
    const dg_json *root = json && json->len
        ? dg_json_parse(&d->diag_arena, "diagnostics", json->p, json->len, NULL, err, sizeof err) : NULL;
    const dg_json *arr = root ? lsp_get(root, "diagnostics") : NULL;
    d->diags = arr && arr->kind == DG_JSON_ARR ? arr : NULL;
    int n = 0;
    for (size_t i = 0; d->diags && i < d->diags->n; i++) {
        const dg_json *g = d->diags->items[i];
        const char *file = lsp_get_str(g, "file");
        const dg_json *at = NULL;
        if (file && strcmp(file, d->path) != 0) {
            at = import_note(g, d->path);
            if (!at) continue;
        }
        if (n++) dg_buf_putc(&b, ',');
        lsp_put_diag(&b, S, d, g, lsp_doc_src(d), at);
    }
    dg_buf_puts(&b, "]}}");
    lsp_send(S, &b);
    dg_buf_free(&b);
}

/* Compiles d (with every open document's bytes in place of the disk's)
 * and publishes its diagnostics. */
void lsp_analyze(lsp_server *S, lsp_doc *d)
{
    d->dirty = 0;
    lsp_doc_forget(d);
    size_t nmem = 0;
    for (lsp_doc *o = S->docs; o; o = o->next) nmem++;
    dagc_memfile *mem = dg_xcalloc(nmem ? nmem : 1, sizeof *mem);
    nmem = 0;
    for (lsp_doc *o = S->docs; o; o = o->next)
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
dagc_unit *lsp_compile_path(lsp_server *S, const char *path)
{
    char *text = NULL, err[256];
    size_t len = 0;
    if (dg_read_file(path, DG_MAX_FILE_SIZE, 1, &text, &len, err, sizeof err) != 0) return NULL;
    size_t nmem = 0;
    for (lsp_doc *o = S->docs; o; o = o->next) nmem++;
    dagc_memfile *mem = dg_xcalloc(nmem ? nmem : 1, sizeof *mem);
    nmem = 0;
    for (lsp_doc *o = S->docs; o; o = o->next)
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
static int doc_reads(lsp_doc *d, const char *path)
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
void lsp_changed(lsp_server *S, lsp_doc *d)
{
    d->dirty = 1;
    char *p = dg_normalize_path(d->path);
    for (lsp_doc *o = S->docs; o; o = o->next)
        if (o != d && doc_reads(o, p)) o->dirty = 1;
    free(p);
}

