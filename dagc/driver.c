#define _XOPEN_SOURCE 700
#include "driver.h"

#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "parse.h"
#include "sema.h"
#include "source.h"
#include "util.h"

/* Everything one compilation owns; the ir_program handed out is its first
 * member, so freeing the program finds the rest. */
typedef struct unit {
    ir_program *prog;
    dg_arena arena;
    dg_source src;
    dg_diag diag;
    dg_files files;    /* (v2) the input and every import */
} unit;

/* Maps a program back to its unit: programs are allocated at the start of
 * a small header that points to the unit. */
typedef struct prog_box {
    ir_program prog;   /* must be first */
    unit *u;
} prog_box;

static int run(unit *u, const dagc_opts *o, ir_program **out)
{
    dg_diag_init(&u->diag, o ? o->diag_out : stderr, &u->src);
    if (o) {
        u->diag.color = o->color;
        u->diag.werror = o->werror;
        if (o->max_errors > 0) u->diag.max_errors = o->max_errors;
        else if (o->max_errors < 0) u->diag.max_errors = 0;
    }
    ast_file *f = dg_parse(&u->src, &u->diag, &u->arena);
    char *id = NULL;
    if (o && o->mem) id = dg_normalize_path(u->src.path);
    else id = realpath(u->src.path, NULL);
    if (!id) id = dg_normalize_path(u->src.path);
    dg_files_add(&u->files, &u->src, f, id);
    dg_import_opts io = {0};
    if (o) {
        io.dirs = o->import_dirs;
        io.ndirs = o->nimport_dirs;
        io.mem = o->mem;
        io.nmem = o->nmem;
    }
    if (!u->diag.stop) dg_load_imports(&u->files, &io, &u->diag, &u->arena);
    ir_program *p = NULL;
    dg_sema_opts so = {o ? !o->no_pipeline_race : 1};
    if (!u->diag.stop)
        p = dg_sema((const ast_file *const *)u->files.ast, u->files.n, &so, &u->diag, &u->arena);
    if (u->diag.nerrors > 0 || u->diag.stop || !p) {
        *out = NULL;
        return DAGC_EINPUT;
    }
    prog_box *box = dg_alloc(&u->arena, sizeof *box);
    box->prog = *p;
    box->u = u;
    u->prog = &box->prog;
    *out = &box->prog;
    return DAGC_OK;
}

static void unit_free(unit *u)
{
    dg_files_free(&u->files);
    dg_arena_free(&u->arena);
    dg_source_free(&u->src);
    free(u);
}

int dagc_compile_file(const char *path, const dagc_opts *o, ir_program **out)
{
    *out = NULL;
    unit *u = dg_xcalloc(1, sizeof *u);
    dg_arena_init(&u->arena);
    char err[512];
    if (dg_source_load(&u->src, path, err, sizeof err) != 0) {
        FILE *dout = o ? o->diag_out : stderr;
        if (dout) fprintf(dout, "dagc: error: %s\n", err);
        free(u);
        return DAGC_EUSAGE;
    }
    int rc = run(u, o, out);
    if (rc != DAGC_OK) unit_free(u);
    return rc;
}

int dagc_compile_memory(const char *name, const char *buf, size_t n, const dagc_opts *o,
                        ir_program **out)
{
    *out = NULL;
    unit *u = dg_xcalloc(1, sizeof *u);
    dg_arena_init(&u->arena);
    if (n > DG_MAX_FILE_SIZE) {
        FILE *dout = o ? o->diag_out : stderr;
        if (dout) fprintf(dout, "dagc: error: cannot read '%s': file is larger than the %zu MiB limit\n",
                          name, DG_MAX_FILE_SIZE >> 20);
        free(u);
        return DAGC_EUSAGE;
    }
    dg_source_from_memory(&u->src, name, buf, n);
    int rc = run(u, o, out);
    if (rc != DAGC_OK) unit_free(u);
    return rc;
}

static unit *unit_of(const ir_program *p)
{
    return ((const prog_box *)(const void *)p)->u;
}

int dagc_program_warnings(const ir_program *p)
{
    return p ? unit_of(p)->diag.nwarnings : 0;
}

dg_diag *dagc_program_diag(ir_program *p)
{
    return &unit_of(p)->diag;
}

void dagc_program_free(ir_program *p)
{
    if (p) unit_free(unit_of(p));
}
