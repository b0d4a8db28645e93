/*
 * lsp.h - `dagc --lsp`: a Language Server Protocol server over a pair of
 * streams (docs/build-integration.md, "In your editor").
 *
 * lsp.c speaks the protocol (framing, JSON-RPC, settings, the dispatch),
 * lsp_doc.c keeps the open documents, compiles them and publishes their
 * diagnostics, lsp_names.c and lsp_req.c answer the requests, and
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
#include "json.h"
#include "profile.h"
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

/* ------------------------------------- lsp.c: the server and its wire */
/* The server's state and what every request handler uses: replies
 * (JSON-RPC framing on S->out), positions in the client's encoding, and
 * reading params (lsp_get* return NULL or 0 for anything missing or of
 * another JSON type, so a malformed request gets LSP_E_PARAMS, not a
 * crash). Handlers are called with the server initialized. */

/* JSON-RPC and LSP error codes. */
enum {
    LSP_E_PARSE = -32700, LSP_E_INVALID_REQUEST = -32600, LSP_E_METHOD = -32601, LSP_E_PARAMS = -32602,
    LSP_E_NOT_INIT = -32002, LSP_E_FAILED = -32803,
};

typedef struct lsp_doc {
    char *uri, *path;
    char *text;
    size_t len;
    dagc_unit *unit;         /* the last analysis, kept for the index */
    int indexed;
    lsp_index index;
    dg_arena diag_arena;     /* the parsed diagnostics document */
    const dg_json *diags;    /* its "diagnostics" array, for code actions */
    int dirty;               /* changed since its last compile */
    dg_profile prof;         /* the profile, read against the unit's program */
    int prof_state;          /* 0 not read, 1 read, -1 failed */
    struct lsp_doc *next;
} lsp_doc;

typedef struct lsp_server {
    FILE *in, *out;
    lsp_doc *docs;
    int initialized, shutdown;
    int utf8;                /* positions in UTF-8 bytes (negotiated), else UTF-16 */
    char *root;              /* the workspace's folder, or NULL */
    char *profile;           /* settings: a trace for hover's measured times */
    char **idirs;            /* settings: -I directories */
    size_t nidirs;
    int max_errors;
    char *ib;                /* the input buffer: ib[ipos, ilen) unread */
    size_t ipos, ilen, icap;
} lsp_server;

char *lsp_xstrdup(const char *s);
void lsp_jstr(dg_buf *b, const char *s);
void lsp_reply(lsp_server *S, const dg_json *id, const char *result);
void lsp_reply_buf(lsp_server *S, const dg_json *id, dg_buf *result);
void lsp_reply_error(lsp_server *S, const dg_json *id, int code, const char *msg);
void lsp_put_uri(dg_buf *b, const char *path);
uint32_t lsp_from_client_col(const lsp_server *S, const dg_source *s, uint32_t line, uint32_t ch);
void lsp_put_range(dg_buf *b, const lsp_server *S, const dg_source *s, uint32_t l1, uint32_t c1, uint32_t l2, uint32_t c2);
void lsp_put_location(dg_buf *b, const lsp_server *S, const lsp_occ *o);
const dg_json *lsp_get(const dg_json *o, const char *k);
const char *lsp_get_str(const dg_json *o, const char *k);
int lsp_get_u32(const dg_json *o, const char *k, uint32_t *out);
void lsp_send(lsp_server *S, const dg_buf *body);   /* one framed message */

/* ------------------------- lsp_doc.c: documents and their diagnostics */
/* A document is compiled when a request needs it after a change
 * (lsp_analyze: diagnostics published, index dropped); its index is built
 * on first use (lsp_doc_index). lsp_compile_path compiles a closed file
 * of the workspace for references and rename. */

lsp_doc *lsp_find_doc(lsp_server *S, const char *uri);
void lsp_doc_forget(lsp_doc *d);
lsp_index *lsp_doc_index(lsp_doc *d);
const dg_source *lsp_doc_src(lsp_doc *d);
const dg_source *lsp_unit_src(lsp_doc *d, const char *path);
void lsp_put_diag(dg_buf *b, lsp_server *S, lsp_doc *d, const dg_json *g, const dg_source *src, const dg_json *at);
void lsp_analyze(lsp_server *S, lsp_doc *d);
dagc_unit *lsp_compile_path(lsp_server *S, const char *path);
void lsp_changed(lsp_server *S, lsp_doc *d);

/* ------------------------------- lsp_names.c: where a name is and is used */
/* lsp_position: the document and 1-based line and byte column of a
 * TextDocumentPositionParams (0: not one; -1: no such open document);
 * lsp_occ_at: the indexed name there, or NULL (*err set for bad params). */

int lsp_position(lsp_server *S, const dg_json *params, lsp_doc **dp, uint32_t *line, uint32_t *col);
const lsp_occ *lsp_occ_at(lsp_server *S, const dg_json *params, lsp_doc **dp, int *err);
/* The same for a request that answers with it: NULL once answered (bad
 * params: LSP_E_PARAMS; no name there, or with names_only an import's
 * file name: null). */
const lsp_occ *lsp_occ_asked(lsp_server *S, const dg_json *id, const dg_json *params, lsp_doc **dp,
                             int names_only);
void lsp_on_definition(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_references(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_prepare_rename(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_rename(lsp_server *S, const dg_json *id, const dg_json *params);

/* ---------------------------------- lsp_req.c: the other requests */

void lsp_on_hover(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_symbols(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_completion(lsp_server *S, const dg_json *id, const dg_json *params);
void lsp_on_code_action(lsp_server *S, const dg_json *id, const dg_json *params);

#endif
