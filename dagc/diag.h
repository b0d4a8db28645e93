/*
 * diag.h - the diagnostics sink every stage reports through.
 *
 * Prints `FILE:LINE:COL: error: message`, then the source line and a caret,
 * the way C compilers do; notes the same way. Colour only when asked (main.c
 * asks when stderr is a terminal). After max_errors errors it prints
 * "too many errors" once and sets `stop`, which the stages poll to bail out.
 */
#ifndef DAGC_DIAG_H
#define DAGC_DIAG_H

#include <stdio.h>

#include "ir.h"
#include "source.h"

typedef struct dg_diag {
    FILE *out;
    const dg_source *src;  /* for printing source lines; may be NULL */
    int color;
    int werror;            /* warnings count as errors */
    int max_errors;        /* 0: no limit */
    int nerrors;
    int nwarnings;
    int stop;              /* the error limit was hit */
    int muted;             /* the last error was dropped: drop its notes */
} dg_diag;

void dg_diag_init(dg_diag *d, FILE *out, const dg_source *src);

void dg_error(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dg_warning(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Attached to the previous error or warning. */
void dg_note(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An error with no source position: "dagc: error: ...". */
void dg_error_plain(dg_diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
