#define _XOPEN_SOURCE 700
#include "import.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "parse.h"
#include "util.h"

#define MAX_DEPTH 200 /* imports nested deeper are surely a generated mistake */

void dg_files_add(dg_files *F, dg_source *s, ast_file *f, char *id)
{
    if (F->n == F->cap) {
        F->cap = F->cap ? F->cap * 2 : 8;
        F->src = dg_xrealloc(F->src, F->cap * sizeof *F->src);
        F->ast = dg_xrealloc(F->ast, F->cap * sizeof *F->ast);
        F->id = dg_xrealloc(F->id, F->cap * sizeof *F->id);
    }
    if (F->n) F->src[F->n - 1]->next = s;
    F->src[F->n] = s;
    F->ast[F->n] = f;
    F->id[F->n] = id;
    F->n++;
}

void dg_files_free(dg_files *F)
{
    for (size_t i = 0; i < F->n; i++) {
        if (i > 0) {
            free((char *)F->src[i]->path);
            dg_source_free(F->src[i]);
            free(F->src[i]);
        }
        free(F->id[i]);
    }
    free(F->src);
    free(F->ast);
    free(F->id);
    memset(F, 0, sizeof *F);
}

/* Windows takes '\\' as a separator too; a normalized path uses '/'. */
#if defined(_WIN32)
#  define IS_SEP(c) ((c) == '/' || (c) == '\\')
#else
#  define IS_SEP(c) ((c) == '/')
#endif

/* Drops "." components and repeated separators; with fold_dotdot also
 * folds "x/.." away, which only a file system without symlinks (the
 * in-memory one) may do. */
static char *clean_path(const char *p, bool fold_dotdot)
{
    size_t n = strlen(p);
    char *out = dg_xmalloc(n + 3);
    size_t o = 0, i = 0;
#if defined(_WIN32)
    /* A drive ("C:") stays in front; "C:\\x" is absolute, "C:x" is not. */
    if (((p[0] | 0x20) >= 'a' && (p[0] | 0x20) <= 'z') && p[1] == ':') {
        out[o++] = p[0];
        out[o++] = ':';
        i = 2;
    }
#endif
    int abs = IS_SEP(p[i]);
    if (abs) out[o++] = '/';
    size_t keep = o; /* ".." cannot go above this */
    while (i < n) {
        while (i < n && IS_SEP(p[i])) i++;
        size_t j = i;
        while (j < n && !IS_SEP(p[j])) j++;
        size_t len = j - i;
        if (len == 0) break;
        if (len == 1 && p[i] == '.') {
            /* nothing */
        } else if (fold_dotdot && len == 2 && p[i] == '.' && p[i + 1] == '.' && o > keep &&
                   !(o - keep >= 2 && out[o - 1] == '.' && out[o - 2] == '.' &&
                     (o - keep == 2 || out[o - 3] == '/'))) {
            while (o > keep && out[o - 1] != '/') o--;
            if (o > keep) o--;
        } else {
            if (o > keep && out[o - 1] != '/') out[o++] = '/';
            memcpy(out + o, p + i, len);
            o += len;
        }
        i = j;
    }
    if (o == keep && !abs) out[o++] = '.';
    out[o] = 0;
    return out;
}

char *dg_normalize_path(const char *p)
{
    return clean_path(p, true);
}

/* dir of path (with its '/') + name; name itself when absolute. A ".." is
 * kept: the file system resolves it after the symlinks before it, as it
 * does for gcc's #include "../x.h", and the name stays as spelled. */
static char *join(const char *dir, size_t dirlen, const char *name)
{
    if (dg_path_is_abs(name)) return clean_path(name, false);
    size_t n = dirlen + 1 + strlen(name) + 1;
    char *s = dg_xmalloc(n);
    if (dirlen) snprintf(s, n, "%.*s/%s", (int)dirlen, dir, name);
    else snprintf(s, n, "%s", name);
    char *r = clean_path(s, false);
    free(s);
    return r;
}

typedef struct loader {
    dg_files *F;
    const dg_import_opts *o;
    dg_diag *d;
    dg_arena *a;
    size_t *stack;           /* files being loaded: their imports are not done */
    const ast_import **via;  /* the import that led to stack[i + 1] */
    size_t sp;
} loader;

/* Tries one candidate path. Returns 1 loaded, 0 not there, -1 error (err). */
static int try_load(loader *L, const char *path, dg_source *s, char **id, char *err, size_t errsz)
{
    if (L->o && L->o->mem) {
        for (size_t i = 0; i < L->o->nmem; i++) {
            char *mp = dg_normalize_path(L->o->mem[i].path), *pp = dg_normalize_path(path);
            int same = strcmp(mp, pp) == 0;
            free(mp);
            free(pp);
            if (!same) continue;
            dg_source_from_memory(s, path, L->o->mem[i].data, L->o->mem[i].len);
            *id = L->o->mem_then_disk ? dg_realpath(path) : NULL;
            if (!*id) *id = dg_normalize_path(path);
            for (size_t k = 0; k < L->F->n; k++)
                if (strcmp(L->F->id[k], *id) == 0) {
                    dg_source_free(s);
                    memset(s, 0, sizeof *s);
                    return 2;
                }
            return 1;
        }
        if (!L->o->mem_then_disk) return 0;
    }
    char *real = dg_realpath(path);
    if (!real) {
        if (errno == ENOENT || errno == ENOTDIR) return 0;
        snprintf(err, errsz, "%s", strerror(errno));
        return -1;
    }
    /* Already loaded under another spelling: no need to read it again. */
    for (size_t i = 0; i < L->F->n; i++)
        if (strcmp(L->F->id[i], real) == 0) {
            *id = real;
            return 2;
        }
    char msg[600];
    if (dg_source_load(s, path, 1, msg, sizeof msg) != 0) {
        free(real);
        const char *colon = strstr(msg, "': ");
        snprintf(err, errsz, "%s", colon ? colon + 3 : msg);
        return -1;
    }
    *id = real;
    return 1;
}

static void load_file_imports(loader *L, size_t fi);

static void report_cycle(loader *L, size_t from, const ast_import *im, size_t target)
{
    dg_buf msg = {0};
    for (size_t k = from; k < L->sp; k++)
        dg_buf_printf(&msg, "%s'%s'", k == from ? "" : ", which imports ",
                      L->F->src[L->stack[k]]->path);
    dg_buf_printf(&msg, ", which imports '%s'", L->F->src[target]->path);
    /* Reported at the import that closes the loop; a note at each other. */
    dg_error(L->d, im->pos, "import cycle: %s", msg.p);
    for (size_t k = from; k + 1 < L->sp; k++)
        dg_note(L->d, L->via[k]->pos, "'%s' imports '%s' here", L->F->src[L->stack[k]]->path,
                L->F->src[L->stack[k + 1]]->path);
    dg_buf_free(&msg);
}

static void import_one(loader *L, size_t fi, const ast_import *im)
{
    const char *from = L->F->src[fi]->path;
    /* The importing file's directory, without its last separator. */
    const char *base = dg_path_base(from);
    size_t dirlen = base > from ? (size_t)(base - from) - 1 : 0;
    if (base == from + 1) dirlen = 1; /* "/x.dag": the root */
#if defined(_WIN32)
    if (base == from + 3 && from[1] == ':') dirlen = 3;      /* "C:\\x.dag" */
    else if (base == from + 2 && from[1] == ':') dirlen = 2; /* "C:x.dag" */
#endif
    size_t ncand = 1 + (L->o ? L->o->ndirs : 0);
    dg_source *s = dg_xcalloc(1, sizeof *s);
    char err[600] = "";
    for (size_t c = 0; c < ncand; c++) {
        char *path = c == 0 ? join(from, dirlen, im->path)
                            : join(L->o->dirs[c - 1], strlen(L->o->dirs[c - 1]), im->path);
        char *id = NULL;
        int r = try_load(L, path, s, &id, err, sizeof err);
        if (r == 0) {
            free(path);
            if (dg_path_is_abs(im->path)) break;
            continue;
        }
        if (r < 0) {
            dg_error(L->d, im->pos, "cannot import '%s': %s", path, err);
            free(path);
            free(s);
            return;
        }
        size_t seen = SIZE_MAX;
        for (size_t i = 0; i < L->F->n && seen == SIZE_MAX; i++)
            if (strcmp(L->F->id[i], id) == 0) seen = i;
        if (seen != SIZE_MAX) {
            /* Imported before: once is enough, unless it is still loading. */
            for (size_t k = 0; k < L->sp; k++)
                if (L->stack[k] == seen) {
                    report_cycle(L, k, im, seen);
                    break;
                }
            if (r == 1) dg_source_free(s);
            free(s);
            free(path);
            free(id);
            return;
        }
        s->path = path;
        s->importer = L->F->src[fi];
        s->import_line = im->pos.line;
        s->import_col = im->pos.col;
        /* Linked first, so that the parser's own errors show its lines. */
        dg_files_add(L->F, s, NULL, id);
        L->F->ast[L->F->n - 1] = dg_parse(s, L->d, L->a);
        if (L->sp >= MAX_DEPTH) {
            dg_error(L->d, im->pos, "imports nested too deeply (the limit is %d)", MAX_DEPTH);
            return;
        }
        L->via[L->sp - 1] = im;
        load_file_imports(L, L->F->n - 1);
        return;
    }
    if (ncand > 1)
        dg_error(L->d, im->pos, "cannot import '%s': not found beside '%s' or in the %zu -I "
                 "director%s", im->path, from, ncand - 1, ncand == 2 ? "y" : "ies");
    else
        dg_error(L->d, im->pos, "cannot import '%s': not found beside '%s'", im->path, from);
    free(s);
}

static void load_file_imports(loader *L, size_t fi)
{
    L->stack[L->sp++] = fi;
    for (const ast_import *im = L->F->ast[fi]->imports; im && !L->d->stop; im = im->next)
        if (im->path[0]) import_one(L, fi, im);
    L->sp--;
}

void dg_load_imports(dg_files *F, const dg_import_opts *o, dg_diag *d, dg_arena *a)
{
    loader L;
    memset(&L, 0, sizeof L);
    L.F = F;
    L.o = o;
    L.d = d;
    L.a = a;
    L.stack = dg_xmalloc((MAX_DEPTH + 2) * sizeof *L.stack);
    L.via = dg_xmalloc((MAX_DEPTH + 2) * sizeof *L.via);
    load_file_imports(&L, 0);
    free(L.stack);
    free(L.via);
}
