/*
 * sema.h - semantic analysis (sema.c, program.c, subgraph.c, race.c):
 * resolves names, checks clauses, lowers `after` expressions and gates
 * into one node graph per `graph` (anonymous
 * AND/OR gates for mixed sub-expressions), finds cycles, and builds the IR
 * in topological order. Reports through diag; the returned program is only
 * meaningful when no error was reported.
 */
#ifndef DAGC_SEMA_H
#define DAGC_SEMA_H

#include "ast.h"
#include "diag.h"
#include "ir.h"
#include "util.h"

#define DG_MAX_NODES (1u << 20) /* per graph, generated gates included */

typedef struct dg_sema_opts {
    int pipeline_warnings;   /* -Wpipeline-race (on unless -Wno-pipeline-race) */
    int c_output;            /* C output is asked for (not --cxx): `coro` tasks are errors */
} dg_sema_opts;

/* files[0] is the input, then every imported file in load order. Only the
 * input's graphs go into the program, with their subgraphs flattened. */
ir_program *dg_sema(const ast_file *const *files, size_t nfiles, const dg_sema_opts *o,
                    dg_diag *d, dg_arena *a);

/* Shared with tests: is NAME a C keyword or reserved C identifier? */
int dg_is_c_keyword(const char *name);
int dg_is_reserved_c_name(const char *name);

#endif
