/*
 * diag.h - the diagnostics sink every stage reports through.
 *
 * Prints `FILE:LINE:COL: error: message`, then the source line and a caret,
 * the way C compilers do; notes the same way. Colour only when asked (main.c
 * asks when stderr is a terminal). After max_errors errors it prints
 * "too many errors" once and sets `stop`, which the stages poll to bail out.
 *
 * With format DG_DIAG_JSON the same diagnostics are collected instead, each
 * with its notes and hint, and dg_diag_finish writes them as one JSON
 * document (diag_json.c; docs/build-integration.md has the format).
 *
 * A diagnostic in an imported file is preceded, as gcc does for includes,
 * by "In file imported from FILE:LINE:" for each import that led to it
 * (JSON: a note at each import).
 */
#ifndef DAGC_DIAG_H
#define DAGC_DIAG_H

#include <stdio.h>

#include "ir.h"
#include "source.h"
#include "util.h"

typedef enum dg_diag_format {
    DG_DIAG_TEXT = 0,      /* FILE:LINE:COL: error: ..., as they come */
    DG_DIAG_JSON = 1,      /* one JSON document, written by dg_diag_finish */
} dg_diag_format;

typedef struct dg_json_diags dg_json_diags;

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
    int format;            /* dg_diag_format; set after dg_diag_init */
    dg_json_diags *json;   /* DG_DIAG_JSON: what was collected (diag_json.c) */
    dg_buf *json_to;       /* DG_DIAG_JSON: the document goes here, not to out */
} dg_diag;

void dg_diag_init(dg_diag *d, FILE *out, const dg_source *src);

void dg_error(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 3, 4)));
void dg_warning(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 3, 4)));
/* Attached to the previous error or warning. */
void dg_note(dg_diag *d, src_pos pos, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 3, 4)));
/* An error with no source position: "dagc: error: ...". */
void dg_error_plain(dg_diag *d, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 2, 3)));
/* How to fix the previous error or warning (no position of its own):
 * "  hint: ..." on a line of its own, or the diagnostic's "hint" in JSON.
 * A second hint for the same diagnostic is added after "; ". */
void dg_hint(dg_diag *d, const char *fmt, ...)
    __attribute__((format(DG_PRINTF_FMT, 2, 3)));
/* A fix-it of the previous error or warning: replace the bytes from start
 * to end (end's column just past them; start == end inserts)
 * with text. Machine-readable edits for the hint or the "did you mean" the
 * message already says in words: JSON's "fixits"; the text output shows
 * nothing more. */
void dg_fixit(dg_diag *d, src_pos start, src_pos end, const char *text);
/* The same, replacing the token at `at` (a name, keyword or string). */
void dg_fixit_replace(dg_diag *d, src_pos at, const char *text);
/* The same, inserting text just after the token at `at`. */
void dg_fixit_insert_after(dg_diag *d, src_pos at, const char *text);
/* The same, removing the operand named at `name` (a name, or `prev` and a
 * name, with any parentheses of its own) from its `,`/`and` list: with the
 * separator after it and the white space up to the next operand, or, when
 * it is the last (`last`), from the end of the operand before it. The range
 * may span lines. 0 when the text around it is not what that needs (a
 * comment in the way): no fix-it then. */
int dg_fixit_remove_operand(dg_diag *d, src_pos name, int last);
/* Writes what the format held back (JSON: the whole document) and frees
 * it. Text writes as it goes, so this does nothing there. Call it once,
 * after the last diagnostic; the driver does when the program is freed. */
void dg_diag_finish(dg_diag *d);

#endif
