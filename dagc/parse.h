/*
 * parse.h - drives the lexer into the Lemon parser and builds the AST.
 * The grammar actions (grammar/parser.y) call the dg_ast_* builders here.
 */
#ifndef DAGC_PARSE_H
#define DAGC_PARSE_H

#include "ast.h"
#include "diag.h"
#include "lexer.h"
#include "util.h"

#define DG_MAX_NESTING 256

typedef struct dg_parser {
    dg_arena *arena;
    dg_diag *diag;
    ast_file *file;
    ast_graph *graph;     /* the graph being parsed */
    ast_stmt *stmt;       /* the task being parsed */
    int overflow;
    int eof_reported;     /* the lexer already reported an early end */
    ast_name *pending, *pending_last; /* names of a `reads`/`writes` being parsed */
    struct dg_expect *expect; /* dg_parse_expected: what the end of input is met with */
    int last_kw;              /* the last keyword or '=' read (for dg_expect) */
    int in_task;              /* a `task` was read and its ';' not yet */
    int last_tok;
} dg_parser;

/* What the grammar accepts where a text ends, for completion: the parser
 * is run over a prefix of a file and asked, at its end, which tokens it
 * could take (the same simulation as the "expected ..." of a syntax
 * error). */
typedef struct dg_expect {
    int tok[64];          /* TK_* codes; none: the prefix ends at top level */
    int n;
    int stuck;            /* the end came inside an item (n may still be 0) */
    int last_kw;          /* TK_* of the last keyword or '=' before the end, or 0 */
    int last_tok;         /* TK_* of the last token before the end, or 0 */
    unsigned clauses;     /* bit k: the task being written has a clause of kind k */
    int in_task;          /* the end is inside a `task` statement */
    const char *graph;    /* the graph being written, or NULL (in the arena) */
} dg_expect;

/* Parses the whole source; returns the AST (never NULL). Errors go to d. */
ast_file *dg_parse(const dg_source *src, dg_diag *d, dg_arena *a);

/* Parses src (a prefix of a file, usually) with no diagnostics and fills
 * *out with what could follow it. */
void dg_parse_expected(const dg_source *src, dg_arena *a, dg_expect *out);

/* Builders used by the grammar's actions. */
void dg_ast_include(dg_parser *P, const dg_token *kw, const dg_token *str);
void dg_ast_import(dg_parser *P, const dg_token *kw, const dg_token *str);
/* `resource NAME`, or (v2.2) `resource NAME per frame [(CTYPE)]`: PER and
 * FRAME are the words after the name (checked here; FRAME NULL when only
 * one came), CTYPE the type. */
void dg_ast_resource(dg_parser *P, const dg_token *name, const dg_token *per,
                     const dg_token *frame, const dg_token *ctype);
/* A name of a `reads`/`writes` list; prev: (v2.2) written `prev NAME`. */
void dg_ast_access_name(dg_parser *P, const dg_token *name, int prev);
void dg_ast_access_end(dg_parser *P, ast_clause_kind k, const dg_token *kw);
void dg_ast_graph_begin(dg_parser *P, const dg_token *name, const dg_token *ctype);
void dg_ast_graph_end(dg_parser *P);
void dg_ast_task_begin(dg_parser *P, const dg_token *name);
void dg_ast_clause(dg_parser *P, ast_clause_kind k, const dg_token *kw,
                   const dg_token *arg, ast_expr *e);
void dg_ast_gate(dg_parser *P, const dg_token *name, ast_expr *e);
ast_expr *dg_ast_name(dg_parser *P, const dg_token *name);
ast_expr *dg_ast_binary(dg_parser *P, ast_expr_kind k, ast_expr *l, ast_expr *r);
ast_expr *dg_ast_paren(ast_expr *e);
/* From %syntax_error: tok is what the parser could not take; expected the
 * tokens it could have taken (n of them). */
void dg_syntax_error(dg_parser *P, const dg_token *tok, const int *expected, int n);
void dg_stack_overflow(dg_parser *P);

#endif
