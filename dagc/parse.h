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
} dg_parser;

/* Parses the whole source; returns the AST (never NULL). Errors go to d. */
ast_file *dg_parse(const dg_source *src, dg_diag *d, dg_arena *a);

/* Builders used by the grammar's actions. */
void dg_ast_include(dg_parser *P, const dg_token *kw, const dg_token *str);
void dg_ast_import(dg_parser *P, const dg_token *kw, const dg_token *str);
void dg_ast_resource(dg_parser *P, const dg_token *name);
void dg_ast_access_name(dg_parser *P, const dg_token *name);
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
