/*
 * driver.h - the front end as one call: source -> lexer -> parser -> sema
 * -> IR, reporting diagnostics. main.c, the tests and the fuzzer share it.
 */
#ifndef DAGC_DRIVER_H
#define DAGC_DRIVER_H

#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"

typedef struct dagc_opts {
    FILE *diag_out;   /* where diagnostics go; NULL: nowhere */
    int color;        /* ANSI colours in diagnostics */
    int werror;       /* warnings are errors */
    int max_errors;   /* 0: the default (20); negative: no limit */
    int diag_format;  /* dg_diag_format: DG_DIAG_TEXT (0) or DG_DIAG_JSON */
    /* imports, and races across frames */
    const char *const *import_dirs; /* -I DIR, searched in order after the importer's directory */
    size_t nimport_dirs;
    int no_pipeline_race;           /* -Wno-pipeline-race */
    int c_output;                   /* C output (not --cxx) will be written: `coro` tasks are errors */
    const struct dagc_memfile *mem; /* non-NULL: imports are read from these, never the disk */
    size_t nmem;
    int mem_then_disk;              /* with mem: a file not among them is read from the disk */
    /* DG_DIAG_JSON: the document is appended here instead of written to
     * diag_out (which may then be NULL); the language server reads it. */
    struct dg_buf *diag_json_to;
} dagc_opts;

/* Exit statuses, as the command line contract has them. */
enum { DAGC_OK = 0, DAGC_EINPUT = 1, DAGC_EUSAGE = 2 };

/* Compiles PATH. Returns DAGC_OK and sets *out, or DAGC_EINPUT (errors in
 * the file; *out = NULL) or DAGC_EUSAGE (the file could not be read).
 * PATH must outlive *out (positions point at it). */
int dagc_compile_file(const char *path, const dagc_opts *o, ir_program **out);
/* The same for bytes in memory; NAME is used in diagnostics. Imports
 * are read from o->mem when it is set (the fuzzer and tests), else from the
 * disk relative to NAME's directory and o->import_dirs. */
int dagc_compile_memory(const char *name, const char *buf, size_t n, const dagc_opts *o,
                        ir_program **out);
/* Number of warnings the last successful compile of P reported. */
int dagc_program_warnings(const ir_program *p);
/* The diagnostics sink P was compiled with, so back ends can report more
 * (with source lines) after the front end. dagc_program_free finishes it
 * (JSON diagnostics are written then). */
dg_diag *dagc_program_diag(ir_program *p);
/* Every .dag file the compile of P read, the input first ("-" for
 * standard input): outputs may not overwrite any of them. */
const char *const *dagc_program_files(const ir_program *p, size_t *n);
void dagc_program_free(ir_program *p);

/* The front end for a tool that needs the syntax of a broken file too (the
 * language server, lsp.c): compiles NAME's bytes as dagc_compile_memory
 * does, but always hands back the unit: every loaded file with its syntax
 * tree (broken ones as far as they parsed), and the program when no error
 * was reported. Diagnostics are finished (written) when it is freed. */
typedef struct dagc_unit dagc_unit;
struct dg_files;
dagc_unit *dagc_analyze_memory(const char *name, const char *buf, size_t n, const dagc_opts *o);
const struct dg_files *dagc_unit_files(const dagc_unit *u);
/* NULL when the compile reported an error. */
const ir_program *dagc_unit_program(const dagc_unit *u);
void dagc_unit_free(dagc_unit *u);

#endif
