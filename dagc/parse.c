#include "parse.h"

#include <stdlib.h>
#include <string.h>

#include "parser.h"

/* Lemon's generated entry points (grammar/parser.c). */
void *dgParseAlloc(void *(*mallocProc)(size_t));
void dgParseFree(void *p, void (*freeProc)(void *));
void dgParse(void *p, int major, dg_token minor, dg_parser *P);

static const char *tok_name(int code)
{
    switch (code) {
    case 0: return "end of file";
    case TK_GRAPH: return "'graph'";
    case TK_TASK: return "'task'";
    case TK_GATE: return "'gate'";
    case TK_INCLUDE: return "'include'";
    case TK_AFTER: return "'after'";
    case TK_ON: return "'on'";
    case TK_MAIN: return "'main'";
    case TK_HOT: return "'hot'";
    case TK_FIBER: return "'fiber'";
    case TK_PARALLEL: return "'parallel'";
    case TK_GRAIN: return "'grain'";
    case TK_CALL: return "'call'";
    case TK_COST: return "'cost'";
    case TK_WHEN: return "'when'";
    case TK_AND: return "'and'";
    case TK_OR: return "'or'";
    case TK_IMPORT: return "'import'";
    case TK_RUN: return "'run'";
    case TK_RESOURCE: return "'resource'";
    case TK_READS: return "'reads'";
    case TK_WRITES: return "'writes'";
    case TK_PREV: return "'prev'";
    case TK_CORO: return "'coro'";
    case TK_NAME: return "a name";
    case TK_INT: return "an integer";
    case TK_DURATION: return "a duration";
    case TK_STRING: return "a string";
    case TK_CTYPE: return "'('";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_SEMI: return "';'";
    case TK_COMMA: return "','";
    case TK_EQ: return "'='";
    default: return "a token";
    }
}

/* dg_parse_expected: the first time the input's end is refused, keep what
 * the parser could have taken instead and where it was. */
static void keep_expected(dg_parser *P, const int *expected, int n)
{
    dg_expect *x = P->expect;
    if (x->stuck) return;
    x->stuck = 1;
    for (int i = 0; i < n && x->n < (int)(sizeof x->tok / sizeof *x->tok); i++) x->tok[x->n++] = expected[i];
    x->last_kw = P->last_kw;
    x->last_tok = P->last_tok;
    x->graph = P->graph ? P->graph->name : NULL;
    x->in_task = P->in_task;
    if (P->stmt && P->in_task)
        for (const ast_clause *c = P->stmt->clauses; c; c = c->next) x->clauses |= 1u << c->kind;
}

void dg_syntax_error(dg_parser *P, const dg_token *tok, const int *expected, int n)
{
    if (P->expect && tok->code == 0) keep_expected(P, expected, n);
    if (P->graph) P->graph->syntax_errors++;
    char what[96];
    if (tok->code == TK_NAME && tok->text)
        snprintf(what, sizeof what, "name '%.60s'", tok->text);
    else if (tok->code == TK_INT)
        snprintf(what, sizeof what, "integer %llu", (unsigned long long)tok->value);
    else if (tok->code == TK_DURATION)
        snprintf(what, sizeof what, "duration");
    else if (tok->code == TK_STRING)
        snprintf(what, sizeof what, "string");
    else if (tok->code == TK_CTYPE)
        snprintf(what, sizeof what, "'('");
    else if (tok->code >= TK_GRAPH && tok->code <= TK_CORO)
        snprintf(what, sizeof what, "keyword %s", tok_name(tok->code));
    else
        snprintf(what, sizeof what, "%s", tok_name(tok->code));

    dg_buf b = {0};
    int shown = 0;
    for (int i = 0; i < n; i++) {
        /* CTYPE is only ever produced after `graph NAME (`, so "expected '('"
         * is what the user should read. */
        const char *nm = tok_name(expected[i]);
        if (strstr(b.p ? b.p : "", nm)) continue;
        if (shown) dg_buf_puts(&b, i == n - 1 ? " or " : ", ");
        dg_buf_puts(&b, nm);
        shown++;
    }
    if (tok->code == 0) {
        /* An unterminated comment or context type already said why the
         * file ended early; "unexpected end of file" would only repeat it. */
        if (P->eof_reported) {
            dg_buf_free(&b);
            return;
        }
        src_pos at = tok->pos;
        if (shown) dg_error(P->diag, at, "unexpected end of file, expected %s", b.p);
        else dg_error(P->diag, at, "unexpected end of file");
    } else if (shown) {
        /* A near-miss keyword (`readz`, `grpah`): the closest keyword that
         * would be accepted here, as names and resources get. */
        const char *kw[TK_CORO - TK_GRAPH + 1];
        size_t nkw = 0;
        char words[TK_CORO - TK_GRAPH + 1][16];
        for (int i = 0; i < n && tok->code == TK_NAME && tok->text; i++) {
            if (expected[i] < TK_GRAPH || expected[i] > TK_CORO) continue;
            const char *q = tok_name(expected[i]); /* "'after'" */
            size_t l = strlen(q);
            if (l < 3 || l - 2 >= sizeof words[0] || nkw >= sizeof words / sizeof words[0]) continue;
            memcpy(words[nkw], q + 1, l - 2);
            words[nkw][l - 2] = 0;
            kw[nkw] = words[nkw];
            nkw++;
        }
        /* With one choice, "expected 'main'" already says it. */
        const char *sug = nkw && shown > 1 ? dg_suggest(tok->text, kw, nkw) : NULL;
        if (sug) {
            dg_error(P->diag, tok->pos, "unexpected %s, expected %s; did you mean '%s'?", what, b.p,
                     sug);
            dg_fixit_replace(P->diag, tok->pos, sug);
        } else {
            dg_error(P->diag, tok->pos, "unexpected %s, expected %s", what, b.p);
        }
    } else {
        dg_error(P->diag, tok->pos, "unexpected %s", what);
    }
    dg_buf_free(&b);
}

void dg_stack_overflow(dg_parser *P)
{
    P->overflow = 1;
}

void dg_ast_include(dg_parser *P, const dg_token *kw, const dg_token *str)
{
    ast_include *inc = dg_alloc(P->arena, sizeof *inc);
    inc->pos = str->pos;
    inc->path = str->text ? str->text : "";
    if (!str->bad && inc->path[0] == 0) dg_error(P->diag, str->pos, "empty include path");
    (void)kw;
    if (P->file->last_include) P->file->last_include->next = inc;
    else P->file->includes = inc;
    P->file->last_include = inc;
}

void dg_ast_import(dg_parser *P, const dg_token *kw, const dg_token *str)
{
    ast_import *im = dg_alloc(P->arena, sizeof *im);
    im->pos = str->pos;
    im->path = str->text ? str->text : "";
    if (!str->bad && im->path[0] == 0) dg_error(P->diag, str->pos, "empty import path");
    (void)kw;
    if (P->file->last_import) P->file->last_import->next = im;
    else P->file->imports = im;
    P->file->last_import = im;
}

static ast_name *new_name(dg_parser *P, const dg_token *name)
{
    ast_name *n = dg_alloc(P->arena, sizeof *n);
    n->name = name->text;
    n->pos = name->pos;
    return n;
}

void dg_ast_resource(dg_parser *P, const dg_token *name, const dg_token *per,
                     const dg_token *frame, const dg_token *ctype)
{
    ast_name *n = new_name(P, name);
    if (per) {
        /* Not keywords: `per` and `frame` stay usable as names elsewhere. */
        if (per->text && strcmp(per->text, "per") != 0) {
            dg_error(P->diag, per->pos,
                     "unexpected name '%s' after resource '%s', expected 'per frame', ',' or ';'",
                     per->text, name->text ? name->text : "");
        } else if (!frame) {
            dg_error(P->diag, per->pos, "expected 'frame' after 'per' (a per-frame resource is "
                     "declared 'resource %s per frame;')", name->text ? name->text : "");
        } else if (frame->text && strcmp(frame->text, "frame") != 0) {
            dg_error(P->diag, frame->pos, "unexpected name '%s', expected 'frame' (a per-frame "
                     "resource is declared 'resource %s per frame;')",
                     frame->text, name->text ? name->text : "");
        } else {
            n->per_frame = 1;
        }
        if (ctype && !ctype->bad) {
            n->ctype = ctype->text;
            n->ctype_pos = ctype->pos;
        }
    } else if (ctype) {
        /* The copies are what the type is for: one shared object has none. */
        dg_error(P->diag, ctype->pos, "a C type is given only to a per-frame resource: "
                 "'resource %s per frame (%s);'", name->text ? name->text : "",
                 ctype->text ? ctype->text : "");
    }
    if (P->file->last_resource) P->file->last_resource->next = n;
    else P->file->resources = n;
    P->file->last_resource = n;
}

void dg_ast_access_name(dg_parser *P, const dg_token *name, int prev)
{
    ast_name *n = new_name(P, name);
    n->prev = prev;
    if (P->pending_last) P->pending_last->next = n;
    else P->pending = n;
    P->pending_last = n;
}

void dg_ast_access_end(dg_parser *P, ast_clause_kind k, const dg_token *kw)
{
    ast_name *names = P->pending;
    P->pending = P->pending_last = NULL;
    dg_ast_clause(P, k, kw, NULL, NULL);
    if (P->stmt && P->stmt->last_clause && P->stmt->last_clause->kind == k &&
        !P->stmt->last_clause->names) {
        P->stmt->last_clause->names = names;
        if (names) P->stmt->last_clause->arg_pos = names->pos;
    }
}

void dg_ast_graph_begin(dg_parser *P, const dg_token *name, const dg_token *ctype)
{
    ast_graph *g = dg_alloc(P->arena, sizeof *g);
    g->pos = name->pos;
    g->name = name->text;
    if (ctype && !ctype->bad) {
        g->ctype = ctype->text;
        g->ctype_pos = ctype->pos;
    }
    if (P->file->last_graph) P->file->last_graph->next = g;
    else P->file->graphs = g;
    P->file->last_graph = g;
    P->graph = g;
    P->stmt = NULL;
}

void dg_ast_graph_end(dg_parser *P)
{
    if (P->graph) P->graph->closed = 1;
    P->graph = NULL;
    P->stmt = NULL;
}

static void add_stmt(dg_parser *P, ast_stmt *s)
{
    ast_graph *g = P->graph;
    if (!g) return; /* only reachable through error recovery */
    if (g->last_stmt) g->last_stmt->next = s;
    else g->stmts = s;
    g->last_stmt = s;
}

void dg_ast_task_begin(dg_parser *P, const dg_token *name)
{
    ast_stmt *s = dg_alloc(P->arena, sizeof *s);
    s->kind = AST_TASK;
    s->pos = name->pos;
    s->name = name->text;
    add_stmt(P, s);
    P->stmt = s;
}

void dg_ast_clause(dg_parser *P, ast_clause_kind k, const dg_token *kw,
                   const dg_token *arg, ast_expr *e)
{
    ast_stmt *s = P->stmt;
    if (!s) return;
    ast_clause *c = dg_alloc(P->arena, sizeof *c);
    c->kind = k;
    c->pos = kw->pos;
    c->expr = e;
    if (arg) {
        c->arg_pos = arg->pos;
        c->name = arg->text;
        c->value = arg->value;
        c->bad = arg->bad;
        if (k == CL_PARALLEL) c->has_grain = 1;
    }
    if (s->last_clause) s->last_clause->next = c;
    else s->clauses = c;
    s->last_clause = c;
}

void dg_ast_gate(dg_parser *P, const dg_token *name, ast_expr *e)
{
    ast_stmt *s = dg_alloc(P->arena, sizeof *s);
    s->kind = AST_GATE;
    s->pos = name->pos;
    s->name = name->text;
    s->expr = e;
    add_stmt(P, s);
    P->stmt = NULL;
}

ast_expr *dg_ast_name(dg_parser *P, const dg_token *name)
{
    ast_expr *e = dg_alloc(P->arena, sizeof *e);
    e->kind = AST_NAME;
    e->pos = name->pos;
    e->name = name->text;
    return e;
}

static void append_kid(ast_expr *p, ast_expr *k)
{
    k->next = NULL;
    if (p->last_kid) p->last_kid->next = k;
    else p->kids = k;
    p->last_kid = k;
}

ast_expr *dg_ast_binary(dg_parser *P, ast_expr_kind k, ast_expr *l, ast_expr *r)
{
    if (!l) return r;
    if (!r) return l;
    /* `a and b and c` becomes one n-ary node: long chains stay shallow, so
     * nothing downstream recurses deeper than the parentheses go. */
    if (l->kind == k && !l->paren) {
        append_kid(l, r);
        return l;
    }
    ast_expr *e = dg_alloc(P->arena, sizeof *e);
    e->kind = k;
    e->pos = l->pos;
    append_kid(e, l);
    append_kid(e, r);
    return e;
}

ast_expr *dg_ast_paren(ast_expr *e)
{
    if (e) e->paren = 1;
    return e;
}

static ast_file *parse(const dg_source *src, dg_diag *d, dg_arena *a, dg_expect *x)
{
    dg_parser P;
    memset(&P, 0, sizeof P);
    P.expect = x;
    P.arena = a;
    P.diag = d;
    P.file = dg_alloc(a, sizeof *P.file);
    P.file->path = src->path;

    dg_lexer L;
    dg_lexer_init(&L, src, d, a);
    void *lp = dgParseAlloc(malloc);
    if (!lp) {
        dg_error_plain(d, "out of memory");
        return P.file;
    }
    int prev1 = -1, prev2 = -1, depth = 0;
    dg_token t;
    for (;;) {
        int code = dg_lex(&L, &t);
        if (d->stop) break;
        /* The context type is C, not .dag: once `graph NAME (` is seen,
         * the lexer hands over everything up to the balancing ')'. */
        if (code == TK_LPAREN && prev1 == TK_NAME && prev2 == TK_GRAPH)
            code = dg_lex_ctype(&L, &t, t.pos);
        /* (v2.2) So is a per-frame resource's: `resource r per frame (`. */
        else if (code == TK_LPAREN && prev1 == TK_NAME && P.last_kw == TK_RESOURCE &&
                 (prev2 == TK_NAME || prev2 == TK_RESOURCE || prev2 == TK_COMMA))
            code = dg_lex_ctype(&L, &t, t.pos);
        if (code == TK_LPAREN && ++depth > DG_MAX_NESTING) {
            dg_error(d, t.pos, "parentheses nested too deeply (the limit is %d)",
                     DG_MAX_NESTING);
            break;
        }
        if (code == TK_RPAREN && depth > 0) depth--;
        if (code == TK_SEMI || code == TK_RBRACE || code == TK_LBRACE) depth = 0;
        if (code == 0) P.eof_reported = L.eof_error;
        dgParse(lp, code, t, &P);
        if (P.overflow) {
            dg_error(d, t.pos, "input nested too deeply");
            break;
        }
        if (code == 0) break;
        if ((code >= TK_GRAPH && code <= TK_CORO) || code == TK_EQ) P.last_kw = code;
        /* A statement's end: what the next one is made of starts afresh. */
        if (code == TK_SEMI || code == TK_LBRACE || code == TK_RBRACE) P.last_kw = P.in_task = 0;
        if (code == TK_TASK) P.in_task = 1;
        P.last_tok = code;
        prev2 = prev1;
        prev1 = code;
    }
    dgParseFree(lp, free);
    return P.file;
}

ast_file *dg_parse(const dg_source *src, dg_diag *d, dg_arena *a)
{
    return parse(src, d, a, NULL);
}

void dg_parse_expected(const dg_source *src, dg_arena *a, dg_expect *out)
{
    memset(out, 0, sizeof *out);
    dg_diag quiet;
    dg_diag_init(&quiet, NULL, src);
    quiet.max_errors = 0; /* errors before the end must not stop the parse */
    parse(src, &quiet, a, out);
    dg_diag_finish(&quiet);
}
