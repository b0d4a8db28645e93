/*
 * ast.h - the syntax tree the parser builds, all in the compilation's arena.
 * Every node carries its source position. Lists are singly linked with a
 * tail pointer, so building them needs no reallocation.
 */
#ifndef DAGC_AST_H
#define DAGC_AST_H

#include <stdint.h>

#include "ir.h"

typedef enum ast_expr_kind { AST_NAME, AST_AND, AST_OR } ast_expr_kind;

typedef struct ast_expr {
    ast_expr_kind kind;
    int paren;                /* written in parentheses */
    int prev;                 /* AST_NAME written `prev NAME` */
    src_pos pos;              /* the name, or the first operand */
    const char *name;         /* AST_NAME */
    struct ast_expr *kids;    /* AST_AND / AST_OR operands, >= 2 */
    struct ast_expr *last_kid;
    struct ast_expr *next;    /* sibling in the parent's operand list */
} ast_expr;

typedef enum ast_clause_kind {
    CL_AFTER, CL_MAIN, CL_HOT, CL_FIBER, CL_PARALLEL, CL_CALL, CL_WHEN, CL_COST,
    CL_RUN, CL_READS, CL_WRITES, CL_CORO,
    CL_COUNT_
} ast_clause_kind;

/* A name in a list: `reads a, b`, `resource a, b`. */
typedef struct ast_name {
    const char *name;
    src_pos pos;
    int prev;                 /* (v2.2) `reads prev a` */
    int per_frame;            /* (v2.2) `resource a per frame` */
    const char *ctype;        /* (v2.2) its `(C type)`, or NULL */
    src_pos ctype_pos;
    struct ast_name *next;
} ast_name;

typedef struct ast_clause {
    ast_clause_kind kind;
    src_pos pos;              /* the keyword */
    ast_expr *expr;           /* CL_AFTER */
    const char *name;         /* CL_CALL, CL_WHEN, CL_RUN */
    ast_name *names;          /* CL_READS, CL_WRITES */
    src_pos arg_pos;          /* the name, grain or duration */
    int has_grain;            /* CL_PARALLEL with `grain` */
    int bad;                  /* the value was already reported as invalid */
    uint64_t value;           /* grain, or cost in ns */
    struct ast_clause *next;
} ast_clause;

typedef enum ast_stmt_kind { AST_TASK, AST_GATE } ast_stmt_kind;

typedef struct ast_stmt {
    ast_stmt_kind kind;
    src_pos pos;              /* the name */
    const char *name;
    ast_clause *clauses, *last_clause; /* tasks */
    ast_expr *expr;           /* gates; NULL if a syntax error ate it */
    struct ast_stmt *next;
} ast_stmt;

typedef struct ast_graph {
    src_pos pos;              /* the name */
    const char *name;
    const char *ctype;        /* NULL when omitted */
    src_pos ctype_pos;
    ast_stmt *stmts, *last_stmt;
    int syntax_errors;        /* errors were reported inside this graph */
    int closed;               /* its '}' was seen */
    struct ast_graph *next;
} ast_graph;

typedef struct ast_include {
    src_pos pos;
    const char *path;         /* unescaped */
    struct ast_include *next;
} ast_include;

/* `import "x.dag";` */
typedef struct ast_import {
    src_pos pos;              /* the string */
    const char *path;         /* unescaped */
    struct ast_import *next;
} ast_import;

typedef struct ast_file {
    const char *path;         /* as loaded (relative to the importer's directory) */
    ast_include *includes, *last_include;
    ast_graph *graphs, *last_graph;
    ast_import *imports, *last_import;
    ast_name *resources, *last_resource;
} ast_file;

#endif
