/*
 * diag_json.h - the JSON side of the diagnostics sink, for diag.c only:
 * collects each error or warning with its notes and hint, and writes them
 * all as one document at the end (the format: docs/build-integration.md).
 */
#ifndef DAGC_DIAG_JSON_H
#define DAGC_DIAG_JSON_H

#include "diag.h"

/* Starts a diagnostic: severity "error", "warning" or "fatal"; end is
 * where the range to underline ends (its column just past it). */
void dg_json_diag(dg_diag *d, const char *severity, src_pos pos, src_pos end, const char *msg);
/* A note or hint of the diagnostic started last. */
void dg_json_note(dg_diag *d, src_pos pos, src_pos end, const char *msg);
void dg_json_hint(dg_diag *d, const char *msg);
/* A note "in file imported from FILE:LINE" at the import (pos) that led
 * to the diagnostic's file; these come after the diagnostic's own notes. */
void dg_json_import(dg_diag *d, src_pos pos, src_pos end);
/* A structured edit: replace start..end with text. */
void dg_json_fixit(dg_diag *d, src_pos start, src_pos end, const char *text);
/* Writes the document to d->out and frees what was collected. */
void dg_json_finish(dg_diag *d);

#endif
