/*
 * parser.y - the .dag grammar (docs/language.md), for Lemon.
 *
 * The actions only call the builders in dagc/parse.c, so the tree-building
 * code is compiled with the project's strict warnings and this file stays a
 * readable grammar. Error recovery: a broken statement is skipped up to its
 * ';' (or to the next 'task'/'gate'/'}'), a broken top-level item up to ';',
 * '}' or the next 'graph'/'include', so one run reports independent errors.
 */
%name dgParse
%token_prefix TK_
%token_type { dg_token }
%default_type { dg_token }
%extra_argument { dg_parser *P }
%stack_size 4096
%start_symbol file

%include {
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "parse.h"
#include "parser.h"
}

/* Listing every terminal fixes the numbering the lexer (which includes the
 * generated parser.h) returns. */
%token GRAPH TASK GATE INCLUDE AFTER ON MAIN HOT FIBER PARALLEL GRAIN CALL COST
       WHEN AND OR IMPORT RUN RESOURCE READS WRITES PREV CORO NAME INT DURATION STRING CTYPE LBRACE RBRACE LPAREN RPAREN
       SEMI COMMA EQ.

%syntax_error {
    /* Which terminals could the parser take here? Simulate the LALR
     * automaton on a copy of the state stack: a state's default reduction
     * alone would claim every token, so the reductions have to be followed
     * until a shift or an error decides. */
    int expected[YYNTOKEN];
    int nexp = 0;
    size_t depth = (size_t)(yypParser->yytos - yypParser->yystack) + 1;
    YYACTIONTYPE *st = malloc((depth + 64) * sizeof *st);
    if (st) {
        for (int t = 0; t < YYNTOKEN; t++) {
            size_t sp = depth - 1;
            for (size_t i = 0; i < depth; i++) st[i] = yypParser->yystack[i].stateno;
            YYACTIONTYPE act = st[sp];
            int ok = 0;
            for (int guard = 0; guard < 10000; guard++) {
                act = yy_find_shift_action((YYCODETYPE)t, act);
                if (act >= YY_MIN_REDUCE && act <= YY_MAX_REDUCE) {
                    unsigned rule = act - YY_MIN_REDUCE;
                    int pop = -yyRuleInfoNRhs[rule];
                    if ((size_t)pop > sp) break;
                    sp -= (size_t)pop;
                    act = yy_find_reduce_action(st[sp], yyRuleInfoLhs[rule]);
                    if (sp + 1 >= depth + 64) break;
                    st[++sp] = act;
                    continue;
                }
                ok = act <= YY_MAX_SHIFTREDUCE || act == YY_ACCEPT_ACTION;
                break;
            }
            if (ok) expected[nexp++] = t;
        }
        free(st);
    }
    dg_syntax_error(P, &yyminor, expected, nexp);
}

%stack_overflow { dg_stack_overflow(P); }

file ::= items.
items ::= .
items ::= items item.

item ::= INCLUDE(K) STRING(S) SEMI.       { dg_ast_include(P, &K, &S); }
item ::= IMPORT(K) STRING(S) SEMI.        { dg_ast_import(P, &K, &S); }
item ::= RESOURCE rnames SEMI.
rnames ::= rdecl.
rnames ::= rnames COMMA rdecl.
/* (v2.2) `per frame` after a resource's name: two plain names, since
 * neither word is reserved (`frame` is a common graph name); parse.c
 * checks their spelling. An optional C type follows, lexed as a graph's. */
rdecl ::= NAME(N).                        { dg_ast_resource(P, &N, NULL, NULL, NULL); }
rdecl ::= NAME(N) NAME(A).                { dg_ast_resource(P, &N, &A, NULL, NULL); }
rdecl ::= NAME(N) NAME(A) NAME(B).        { dg_ast_resource(P, &N, &A, &B, NULL); }
rdecl ::= NAME(N) NAME(A) NAME(B) CTYPE(C). { dg_ast_resource(P, &N, &A, &B, &C); }
rdecl ::= NAME(N) CTYPE(C).               { dg_ast_resource(P, &N, NULL, NULL, &C); }
item ::= graph.
item ::= error SEMI.
item ::= error RBRACE.
item ::= error.

graph ::= ghead LBRACE stmts RBRACE.        { dg_ast_graph_end(P); }
ghead ::= GRAPH NAME(N).                    { dg_ast_graph_begin(P, &N, NULL); }
ghead ::= GRAPH NAME(N) CTYPE(C).           { dg_ast_graph_begin(P, &N, &C); }

stmts ::= .
stmts ::= stmts stmt.

stmt ::= thead clauses SEMI.
stmt ::= GATE NAME(N) EQ expr(E) SEMI.      { dg_ast_gate(P, &N, E); }
stmt ::= error SEMI.
stmt ::= error.

thead ::= TASK NAME(N).                     { dg_ast_task_begin(P, &N); }

clauses ::= .
clauses ::= clauses clause.

clause ::= AFTER(K) expr(E).                { dg_ast_clause(P, CL_AFTER, &K, NULL, E); }
clause ::= ON(K) MAIN.                      { dg_ast_clause(P, CL_MAIN, &K, NULL, NULL); }
clause ::= HOT(K).                          { dg_ast_clause(P, CL_HOT, &K, NULL, NULL); }
clause ::= FIBER(K).                        { dg_ast_clause(P, CL_FIBER, &K, NULL, NULL); }
clause ::= CORO(K).                         { dg_ast_clause(P, CL_CORO, &K, NULL, NULL); } /* (v2.2) */
clause ::= PARALLEL(K).                     { dg_ast_clause(P, CL_PARALLEL, &K, NULL, NULL); }
clause ::= PARALLEL(K) GRAIN INT(V).        { dg_ast_clause(P, CL_PARALLEL, &K, &V, NULL); }
clause ::= CALL(K) NAME(N).                 { dg_ast_clause(P, CL_CALL, &K, &N, NULL); }
clause ::= WHEN(K) NAME(N).                 { dg_ast_clause(P, CL_WHEN, &K, &N, NULL); }
clause ::= COST(K) DURATION(D).             { dg_ast_clause(P, CL_COST, &K, &D, NULL); }
clause ::= RUN(K) NAME(N).                  { dg_ast_clause(P, CL_RUN, &K, &N, NULL); }
clause ::= READS(K) anames.                 { dg_ast_access_end(P, CL_READS, &K); }
clause ::= WRITES(K) anames.                { dg_ast_access_end(P, CL_WRITES, &K); }
anames ::= aname.
anames ::= anames COMMA aname.
aname ::= NAME(N).                          { dg_ast_access_name(P, &N, 0); }
aname ::= PREV NAME(N).                     { dg_ast_access_name(P, &N, 1); } /* (v2.2) */

%type expr { ast_expr * }
%type orx { ast_expr * }
%type andx { ast_expr * }
%type prim { ast_expr * }

expr(A) ::= orx(B).                         { A = B; }
expr(A) ::= expr(B) COMMA orx(C).           { A = dg_ast_binary(P, AST_AND, B, C); }
orx(A) ::= andx(B).                         { A = B; }
orx(A) ::= orx(B) OR andx(C).               { A = dg_ast_binary(P, AST_OR, B, C); }
andx(A) ::= prim(B).                        { A = B; }
andx(A) ::= andx(B) AND prim(C).            { A = dg_ast_binary(P, AST_AND, B, C); }
prim(A) ::= NAME(N).                        { A = dg_ast_name(P, &N); }
prim(A) ::= PREV NAME(N).                   { A = dg_ast_name(P, &N); A->prev = 1; }
prim(A) ::= LPAREN expr(B) RPAREN.          { A = dg_ast_paren(B); }
