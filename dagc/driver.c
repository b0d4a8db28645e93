#define _XOPEN_SOURCE 700
#include "driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "os.h"
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
    dg_files files;    /* the input and every import */
    const char *input; /* the input's path as given ("-": standard input) */
    const char **read; /* dagc_program_files: input, then p->files' imports */
} unit;

/* Maps a program back to its unit: programs are allocated at the start of
 * a small header that points to the unit. */
typedef struct prog_box {
    ir_program prog;   /* must be first */
    unit *u;
} prog_box;

static void diag_setup(unit *u, const dagc_opts *o)
{
    dg_diag_init(&u->diag, o ? o->diag_out : stderr, &u->src);
    if (o) {
        u->diag.color = o->color && o->diag_format == DG_DIAG_TEXT;
        u->diag.werror = o->werror;
        u->diag.format = o->diag_format;
        u->diag.json_to = o->diag_json_to;
        if (o->max_errors > 0) u->diag.max_errors = o->max_errors;
        else if (o->max_errors < 0) u->diag.max_errors = 0;
    }
}

/* An input that could not be read: reported through the sink, so that it
 * is in the JSON document too, then finished. */
static int load_failed(unit *u, const dagc_opts *o, const char *path, const char *err)
{
    diag_setup(u, o);
    u->diag.src = NULL;
    /* JSON names the file; the text line stays "dagc: error: ...". */
    src_pos at = {0};
    at.file = path;
    if (u->diag.format == DG_DIAG_JSON) dg_error(&u->diag, at, "%s", err);
    else dg_error_plain(&u->diag, "%s", err);
    dg_diag_finish(&u->diag);
    free(u);
    return DAGC_EUSAGE;
}

static int run(unit *u, const dagc_opts *o, ir_program **out)
{
    diag_setup(u, o);
    ast_file *f = dg_parse(&u->src, &u->diag, &u->arena);
    char *id = NULL;
    if (o && o->mem && !o->mem_then_disk) id = dg_normalize_path(u->src.path);
    else id = dg_realpath(u->src.path);
    if (!id) id = dg_normalize_path(u->src.path);
    dg_files_add(&u->files, &u->src, f, id);
    dg_import_opts io = {0};
    if (o) {
        io.dirs = o->import_dirs;
        io.ndirs = o->nimport_dirs;
        io.mem = o->mem;
        io.nmem = o->nmem;
        io.mem_then_disk = o->mem_then_disk;
    }
    if (!u->diag.stop) dg_load_imports(&u->files, &io, &u->diag, &u->arena);
    ir_program *p = NULL;
    dg_sema_opts so = {o ? !o->no_pipeline_race : 1, o ? o->c_output : 0};
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
    dg_diag_finish(&u->diag);
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
    if (dg_source_load(&u->src, path, 0, err, sizeof err) != 0)
        return load_failed(u, o, path, err);
    u->input = path;
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
        char err[512];
        snprintf(err, sizeof err, "cannot read '%s': file is larger than the %zu MiB limit",
                 name, DG_MAX_FILE_SIZE >> 20);
        return load_failed(u, o, name, err);
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

const char *const *dagc_program_files(const ir_program *p, size_t *n)
{
    /* The program's list (the input, then every import) with the input as
     * the command line named it; a compile from memory read no file. */
    unit *u = unit_of(p);
    if (!u->input) {
        *n = 0;
        return p->files;
    }
    if (!u->read) {
        u->read = dg_alloc(&u->arena, (p->nfiles + 1) * sizeof *u->read);
        u->read[0] = u->input;
        for (size_t i = 1; i < p->nfiles; i++) u->read[i] = p->files[i];
    }
    *n = p->nfiles > 0 ? p->nfiles : 1;
    return u->read;
}

void dagc_program_free(ir_program *p)
{
    if (p) unit_free(unit_of(p));
}

/* The analysis handle is the unit itself: run() keeps the files and their
 * trees whatever it reports. */
struct dagc_unit {
    unit *u;
    int ok;
};

dagc_unit *dagc_analyze_memory(const char *name, const char *buf, size_t n, const dagc_opts *o)
{
    dagc_unit *h = dg_xcalloc(1, sizeof *h);
    unit *u = dg_xcalloc(1, sizeof *u);
    dg_arena_init(&u->arena);
    h->u = u;
    ir_program *p = NULL;
    if (n > DG_MAX_FILE_SIZE) {
        /* What dagc_compile_memory says, and a unit with no file. */
        diag_setup(u, o);
        u->diag.src = NULL;
        src_pos at = {0};
        at.file = name;
        dg_error(&u->diag, at, "cannot read '%s': file is larger than the %zu MiB limit", name,
                 DG_MAX_FILE_SIZE >> 20);
    } else {
        dg_source_from_memory(&u->src, name, buf, n);
        h->ok = run(u, o, &p) == DAGC_OK;
    }
    /* The diagnostics are wanted now, the trees later: finish the sink
     * and leave it with nowhere to write (text finishes with nothing). */
    dg_diag_finish(&u->diag);
    u->diag.out = NULL;
    u->diag.json_to = NULL;
    u->diag.format = DG_DIAG_TEXT;
    return h;
}

const struct dg_files *dagc_unit_files(const dagc_unit *h)
{
    return &h->u->files;
}

const ir_program *dagc_unit_program(const dagc_unit *h)
{
    return h->ok ? h->u->prog : NULL;
}

void dagc_unit_free(dagc_unit *h)
{
    if (!h) return;
    unit_free(h->u);
    free(h);
}
