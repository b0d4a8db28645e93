/*
 * output.h - all-or-nothing output files. Each file is written to a
 * temporary file beside its target and renamed into place only when the
 * whole run succeeded, so a failing run leaves no half-written or stale
 * output behind. "-" means standard output (written directly).
 */
#ifndef DAGC_OUTPUT_H
#define DAGC_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct dg_outfile {
    const char *path;  /* the target */
    char *tmp;         /* the temporary beside it; NULL for stdout */
    FILE *fp;
} dg_outfile;

/* Opens a temporary for PATH. Returns 0, or -1 with a message in err. */
int dg_out_open(dg_outfile *o, const char *path, char *err, size_t errsz);
/* Flushes and renames into place. Returns 0, or -1 with a message (the
 * temporary is removed). */
int dg_out_commit(dg_outfile *o, char *err, size_t errsz);
/* Discards the temporary. Safe on a file never opened or already closed. */
void dg_out_abort(dg_outfile *o);

#endif
