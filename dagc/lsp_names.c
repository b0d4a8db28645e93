/* lsp_names.c - `dagc --lsp`'s requests about where a name is (lsp.h):
 * definition, references and rename, over the open documents, their
 * imports and the workspace's other .dag files (found by a bounded walk
 * of its folders: 1,024 files, 12 levels, build folders skipped). */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

#include "os.h"

/* The document and the 1-based line and byte column a
 * TextDocumentPositionParams names; 0 when it is not one. */
int lsp_position(lsp_server *S, const dg_json *params, lsp_doc **dp, uint32_t *line, uint32_t *col)
{
    const dg_json *td = lsp_get(params, "textDocument");
    const char *uri = lsp_get_str(td, "uri");
    const dg_json *pos = lsp_get(params, "position");
    uint32_t l, c;
    if (!uri || !lsp_get_u32(pos, "line", &l) || !lsp_get_u32(pos, "character", &c)) return 0;
    lsp_doc *d = lsp_find_doc(S, uri);
    if (!d) return -1;
    *dp = d;
    *line = l + 1;
    *col = lsp_from_client_col(S, lsp_doc_src(d), l + 1, c) + 1;
    return 1;
}

/* The index entry under the cursor, or NULL; *err set for bad params. */
const lsp_occ *lsp_occ_at(lsp_server *S, const dg_json *params, lsp_doc **dp, int *err)
{
    uint32_t line, col;
    int r = lsp_position(S, params, dp, &line, &col);
    *err = r == 0;
    if (r != 1) return NULL;
    lsp_index *x = lsp_doc_index(*dp);
    return x ? lsp_index_at(x, lsp_doc_src(*dp), line, col) : NULL;
}

const lsp_occ *lsp_occ_asked(lsp_server *S, const dg_json *id, const dg_json *params, lsp_doc **dp,
                             int names_only)
{
    int err;
    const lsp_occ *o = lsp_occ_at(S, params, dp, &err);
    if (err) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument and position");
        return NULL;
    }
    if (!o || (names_only && o->kind == LSP_FILE)) {
        lsp_reply(S, id, "null");
        return NULL;
    }
    return o;
}

void lsp_on_definition(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    const lsp_occ *o = lsp_occ_asked(S, id, params, &d, 0);
    if (!o)
        return;
    dg_buf b = {0};
    if (o->kind == LSP_FILE) {
        if (!o->target) {
            lsp_reply(S, id, "null");
            return;
        }
        dg_buf_puts(&b, "{\"uri\":");
        lsp_put_uri(&b, o->target->path);
        dg_buf_puts(&b, ",\"range\":{\"start\":{\"line\":0,\"character\":0},\"end\":{\"line\":0,\"character\":0}}}");
        lsp_reply_buf(S, id, &b);
        return;
    }
    const lsp_occ *def = lsp_index_def(&d->index, o->key);
    if (!def) {
        lsp_reply(S, id, "null");
        return;
    }
    lsp_put_location(&b, S, def);
    lsp_reply_buf(S, id, &b);
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


static void collect(lsp_server *S, const char *key, int with_defs, occ_list *L, scan *sc)
{
    memset(sc, 0, sizeof *sc);
    for (lsp_doc *d = S->docs; d; d = d->next) {
        lsp_index *x = lsp_doc_index(d);
        if (x) add_uses(x, key, with_defs, L);
    }
    if (!S->root) return;
    walk_dir(sc, S->root, 0);
    sc->units = dg_xcalloc(sc->npaths + 1, sizeof *sc->units);
    sc->idx = dg_xcalloc(sc->npaths + 1, sizeof *sc->idx);
    for (size_t i = 0; i < sc->npaths; i++) {
        char *p = dg_normalize_path(sc->paths[i]);
        int seen = 0;
        for (lsp_doc *d = S->docs; d && !seen; d = d->next) seen = d->unit && unit_has(d->unit, p);
        for (size_t k = 0; k < sc->n && !seen; k++) seen = unit_has(sc->units[k], p);
        free(p);
        if (seen) continue;
        dagc_unit *u = lsp_compile_path(S, sc->paths[i]);
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

void lsp_on_references(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    int err;
    const lsp_occ *o = lsp_occ_at(S, params, &d, &err);
    if (err) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument and position");
        return;
    }
    if (!o || o->kind == LSP_FILE) {
        lsp_reply(S, id, o ? "[]" : "null");
        return;
    }
    const dg_json *ctx = lsp_get(params, "context");
    const dg_json *decl = lsp_get(ctx, "includeDeclaration");
    int with_defs = !decl || decl->kind != DG_JSON_BOOL || decl->b;
    occ_list L = {0};
    scan sc;
    char *key = lsp_xstrdup(o->key);
    collect(S, key, with_defs, &L, &sc);
    free(key);
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    for (size_t i = 0; i < L.n; i++) {
        if (i) dg_buf_putc(&b, ',');
        lsp_put_location(&b, S, L.v[i]);
    }
    dg_buf_putc(&b, ']');
    free(L.v);
    free_scan(&sc);
    lsp_reply_buf(S, id, &b);
}

/* The symbol rename may change at the cursor, or NULL. */
static const lsp_occ *renamable(lsp_server *S, const dg_json *params, lsp_doc **d, int *err)
{
    const lsp_occ *o = lsp_occ_at(S, params, d, err);
    if (!o || o->kind == LSP_FILE) return NULL;
    return o;
}

void lsp_on_prepare_rename(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    const lsp_occ *o = lsp_occ_asked(S, id, params, &d, 1);
    if (!o)
        return;
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"range\":");
    lsp_put_range(&b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_puts(&b, ",\"placeholder\":");
    lsp_jstr(&b, o->name);
    dg_buf_putc(&b, '}');
    lsp_reply_buf(S, id, &b);
}

void lsp_on_rename(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    int err;
    const char *to = lsp_get_str(params, "newName");
    const lsp_occ *o = renamable(S, params, &d, &err);
    if (err || !to) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument, position and newName");
        return;
    }
    if (!o) {
        lsp_reply_error(S, id, LSP_E_FAILED, "no task, gate, graph or resource here to rename");
        return;
    }
    if (!lsp_valid_name(to)) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "the new name must be an identifier and not a keyword");
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
        lsp_reply_error(S, id, LSP_E_FAILED, m.p);
        dg_buf_free(&m);
        return;
    }
    occ_list L = {0};
    scan sc;
    char *key = lsp_xstrdup(o->key);
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
        lsp_put_uri(&b, L.v[i]->src->path);
        dg_buf_puts(&b, ":[");
        int e = 0;
        for (size_t k = i; k < L.n; k++) {
            if (done[k] || strcmp(L.v[k]->src->path, L.v[i]->src->path) != 0) continue;
            done[k] = 1;
            if (e++) dg_buf_putc(&b, ',');
            const lsp_occ *u = L.v[k];
            dg_buf_puts(&b, "{\"range\":");
            lsp_put_range(&b, S, u->src, u->pos.line, u->pos.col, u->pos.line, u->pos.col + u->len);
            dg_buf_puts(&b, ",\"newText\":");
            lsp_jstr(&b, to);
            dg_buf_putc(&b, '}');
        }
        dg_buf_putc(&b, ']');
    }
    dg_buf_puts(&b, "}}");
    free(done);
    free(L.v);
    free_scan(&sc);
    lsp_reply_buf(S, id, &b);
}
