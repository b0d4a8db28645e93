/*
 * lsp.h - `dagc --lsp`: a Language Server Protocol server over a pair of
 * streams (docs/build-integration.md, "In your editor").
 *
 * lsp.c speaks the protocol (framing, JSON-RPC, documents, settings) and
 * lsp_index.c answers from the front end's own syntax trees: every name
 * a file defines or uses, with where it is, found by walking the trees
 * that dagc_analyze_memory (driver.h) keeps for broken files too. No
 * second parser: completion asks the grammar itself what may follow the
 * text before the cursor (dg_parse_expected, parse.h).
 */
#ifndef DAGC_LSP_H
#define DAGC_LSP_H

#include <stdint.h>
#include <stdio.h>

#include "driver.h"
#include "import.h"
#include "util.h"

/* Serves until `exit` or the end of IN. Returns the exit status: 0 after
 * `shutdown` then `exit`, 1 otherwise (as the protocol asks). */
int dg_lsp_main(FILE *in, FILE *out);

/* ------------------------------------------------ lsp_index.c: the index */

typedef enum lsp_sym {
    LSP_GRAPH, LSP_TASK, LSP_GATE, LSP_RESOURCE, LSP_FILE,
} lsp_sym;

/* One name where it is written: a definition (def) or a use. */
typedef struct lsp_occ {
    uint8_t kind;            /* lsp_sym of what it names (LSP_FILE: an import's string) */
    uint8_t def;
    uint32_t len;            /* bytes it spans on its line */
    src_pos pos;
    const dg_source *src;    /* the file it is in */
    const char *name;
    const char *key;         /* the symbol: equal keys, same symbol (across units too) */
    const ast_graph *graph;  /* the graph it is in, or NULL */
    const ast_stmt *stmt;    /* a task's or gate's definition */
    const dg_source *target; /* LSP_FILE: the imported file, or NULL if it was not loaded */
} lsp_occ;

typedef struct lsp_index {
    dg_arena arena;
    lsp_occ *occ;
    size_t n, cap;
    dg_map defs;             /* key -> index of its first definition */
    const dg_files *files;
} lsp_index;

void lsp_index_build(lsp_index *x, const dg_files *F);
void lsp_index_free(lsp_index *x);
/* The name at 1-based LINE and byte column COL of the file SRC (a cursor
 * just past a name is on it too), or NULL. */
const lsp_occ *lsp_index_at(const lsp_index *x, const dg_source *src, uint32_t line, uint32_t col);
/* The definition of KEY, or NULL. */
const lsp_occ *lsp_index_def(const lsp_index *x, const char *key);
/* Hover text (Markdown) for the name at o, appended to b; prof_line is
 * called for a task to add what a profile measured (may be NULL). */
void lsp_index_hover(const lsp_index *x, const lsp_occ *o, dg_buf *b,
                     void (*prof_line)(void *user, const lsp_occ *task, dg_buf *b), void *user);
/* The file's source among the unit's, by its path as loaded, or NULL. */
const dg_source *lsp_index_src(const lsp_index *x, const char *path);
/* Whether NAME may name a task, gate, graph or resource (an identifier,
 * not a keyword). */
int lsp_valid_name(const char *name);

#endif
