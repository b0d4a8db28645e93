/* lsp_req.c - `dagc --lsp`'s requests about what is written (lsp.h):
 * hover, document symbols, completion (from the grammar itself,
 * dg_parse_expected) and code actions (the diagnostics' fix-its). Where a
 * name is defined and used: lsp_names.c; the server itself: lsp.c. */
#include "lsp.h"

#include <stdlib.h>
#include <string.h>

#include "os.h"
#include "parse.h"
#include "parser.h"
#include "stats.h"

/* The measured median and p99 of a task, from the profile in the
 * settings, read against the document's program (when it compiled). */
static void prof_line(void *user, const lsp_occ *t, dg_buf *b)
{
    void **u = user;
    lsp_server *S = u[0];
    lsp_doc *d = u[1];
    if (!S->profile) return;
    const ir_program *p = d->unit ? dagc_unit_program(d->unit) : NULL;
    if (!p) {
        dg_buf_puts(b, "\nmeasured: not shown while the file has errors\n");
        return;
    }
    if (d->prof_state == 0) {
        dg_buf err = {0};
        d->prof_state = dg_profile_load(S->profile, p, &d->prof, &err) == 0 ? 1 : -1;
        if (d->prof_state < 0) {
            dg_buf_putc(&err, 0);
            dg_buf_printf(b, "\nmeasured: the profile could not be read: %s\n", err.p);
        }
        dg_buf_free(&err);
        if (d->prof_state < 0) return;
    }
    if (d->prof_state < 0) return;
    size_t nl = strlen(t->name);
    int shown = 0;
    for (size_t gi = 0; gi < p->ngraphs; gi++) {
        const ir_graph *g = &p->graphs[gi];
        const dg_prof_graph *pg = &d->prof.graphs[gi];
        if (!pg->present) continue;
        for (uint32_t k = 0; k < g->nnodes; k++) {
            const ir_node *n = &g->nodes[k];
            if (n->kind != IR_TASK) continue;
            size_t l = strlen(n->name);
            int own = strcmp(g->name, t->graph->name) == 0 && strcmp(n->name, t->name) == 0;
            /* the same task copied into a graph that runs its graph: "phys.integrate" */
            int copied = n->sub != UINT32_MAX && l > nl && n->name[l - nl - 1] == '.' &&
                         strcmp(n->name + l - nl, t->name) == 0 &&
                         strcmp(g->subs[n->sub].graph, t->graph->name) == 0;
            if (!own && !copied) continue;
            const dg_prof_node *pn = &pg->nodes[k];
            if (!pn->runs) {
                dg_buf_printf(b, "\nmeasured (%s): not run in %u frames\n", n->name, pg->frames);
            } else {
                char m[32], q[32];
                dg_fmt_duration(pn->median_ns, m, sizeof m);
                dg_fmt_duration(pn->p99_ns, q, sizeof q);
                dg_buf_printf(b, "\nmeasured (%s in `%s`, %u frames): median %s, p99 %s\n", n->name,
                              g->name, pn->runs, m, q);
            }
            shown++;
        }
    }
    if (!shown) dg_buf_puts(b, "\nmeasured: not in the profile\n");
}

void lsp_on_hover(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    const lsp_occ *o = lsp_occ_asked(S, id, params, &d, 0);
    if (!o)
        return;
    dg_buf text = {0};
    void *user[2] = {S, d};
    lsp_index_hover(&d->index, o, &text, prof_line, user);
    dg_buf_putc(&text, 0);
    dg_buf b = {0};
    dg_buf_puts(&b, "{\"contents\":{\"kind\":\"markdown\",\"value\":");
    lsp_jstr(&b, text.p);
    dg_buf_puts(&b, "},\"range\":");
    lsp_put_range(&b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
    dg_buf_putc(&b, '}');
    dg_buf_free(&text);
    lsp_reply_buf(S, id, &b);
}

static void put_symbol(dg_buf *b, lsp_server *S, const lsp_occ *o, int kind, uint32_t end_line,
                       uint32_t end_col)
{
    dg_buf_puts(b, "{\"name\":");
    lsp_jstr(b, o->name);
    dg_buf_printf(b, ",\"kind\":%d,\"range\":", kind);
    lsp_put_range(b, S, o->src, o->pos.line, o->pos.col, end_line, end_col);
    dg_buf_puts(b, ",\"selectionRange\":");
    lsp_put_range(b, S, o->src, o->pos.line, o->pos.col, o->pos.line, o->pos.col + o->len);
}

void lsp_on_symbols(lsp_server *S, const dg_json *id, const dg_json *params)
{
    const char *uri = lsp_get_str(lsp_get(params, "textDocument"), "uri");
    if (!uri) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument");
        return;
    }
    lsp_doc *d = lsp_find_doc(S, uri);
    lsp_index *x = d ? lsp_doc_index(d) : NULL;
    if (!x) {
        lsp_reply(S, id, "null");
        return;
    }
    const dg_source *src = lsp_doc_src(d);
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    int n = 0;
    /* LSP SymbolKind: Module 2, Function 12, Variable 13, Event 24. */
    for (size_t i = 0; i < x->n; i++) {
        const lsp_occ *o = &x->occ[i];
        if (!o->def || o->src != src) continue;
        if (o->kind == LSP_RESOURCE) {
            if (n++) dg_buf_putc(&b, ',');
            put_symbol(&b, S, o, 13, o->pos.line, o->pos.col + o->len);
            dg_buf_putc(&b, '}');
        } else if (o->kind == LSP_GRAPH) {
            /* the graph's range runs to its last statement's name */
            uint32_t el = o->pos.line, ec = o->pos.col + o->len;
            size_t k = i + 1, first = i + 1;
            for (; k < x->n && (x->occ[k].kind != LSP_GRAPH || !x->occ[k].def) &&
                   x->occ[k].src == src; k++)
                if (x->occ[k].def && x->occ[k].graph == o->graph) {
                    el = x->occ[k].pos.line;
                    ec = x->occ[k].pos.col + x->occ[k].len;
                }
            if (n++) dg_buf_putc(&b, ',');
            put_symbol(&b, S, o, 2, el, ec);
            dg_buf_puts(&b, ",\"children\":[");
            int c = 0;
            for (size_t j = first; j < k; j++) {
                const lsp_occ *t = &x->occ[j];
                if (!t->def || t->graph != o->graph || !t->stmt) continue;
                if (c++) dg_buf_putc(&b, ',');
                put_symbol(&b, S, t, t->kind == LSP_GATE ? 24 : 12, t->pos.line, t->pos.col + t->len);
                dg_buf_putc(&b, '}');
            }
            dg_buf_puts(&b, "]}");
        }
    }
    dg_buf_putc(&b, ']');
    lsp_reply_buf(S, id, &b);
}

static void item(dg_buf *b, int *n, const char *label, int kind, const char *detail)
{
    if ((*n)++) dg_buf_putc(b, ',');
    dg_buf_puts(b, "{\"label\":");
    lsp_jstr(b, label);
    dg_buf_printf(b, ",\"kind\":%d", kind);
    if (detail) {
        dg_buf_puts(b, ",\"detail\":");
        lsp_jstr(b, detail);
    }
    dg_buf_putc(b, '}');
}

static const char *tok_word(int t)
{
    switch (t) {
    case TK_GRAPH: return "graph";
    case TK_TASK: return "task";
    case TK_GATE: return "gate";
    case TK_INCLUDE: return "include";
    case TK_AFTER: return "after";
    case TK_ON: return "on main";
    case TK_MAIN: return "main";
    case TK_HOT: return "hot";
    case TK_FIBER: return "fiber";
    case TK_PARALLEL: return "parallel";
    case TK_GRAIN: return "grain";
    case TK_CALL: return "call";
    case TK_COST: return "cost";
    case TK_WHEN: return "when";
    case TK_AND: return "and";
    case TK_OR: return "or";
    case TK_IMPORT: return "import";
    case TK_RUN: return "run";
    case TK_RESOURCE: return "resource";
    case TK_READS: return "reads";
    case TK_WRITES: return "writes";
    case TK_PREV: return "prev";
    case TK_CORO: return "coro";
    default: return NULL;
    }
}

/* A clause keyword the task being written may still take: each clause
 * once, and `run` with nothing but `after` and `when` (sema's rules). */
static int clause_ok(int tok, unsigned have)
{
    int k;
    switch (tok) {
    case TK_AFTER: k = CL_AFTER; break;
    case TK_ON: k = CL_MAIN; break;
    case TK_HOT: k = CL_HOT; break;
    case TK_FIBER: k = CL_FIBER; break;
    case TK_CORO: k = CL_CORO; break;
    case TK_PARALLEL: k = CL_PARALLEL; break;
    case TK_CALL: k = CL_CALL; break;
    case TK_WHEN: k = CL_WHEN; break;
    case TK_COST: k = CL_COST; break;
    case TK_RUN: k = CL_RUN; break;
    case TK_READS: k = CL_READS; break;
    case TK_WRITES: k = CL_WRITES; break;
    default: return 1;
    }
    if (have & (1u << k)) return 0;
    unsigned runs_not = ~((1u << CL_AFTER) | (1u << CL_WHEN) | (1u << CL_RUN)) & ((1u << CL_COUNT_) - 1);
    if (k == CL_RUN && (have & runs_not)) return 0;
    if ((have & (1u << CL_RUN)) && k != CL_AFTER && k != CL_WHEN) return 0;
    return 1;
}

void lsp_on_completion(lsp_server *S, const dg_json *id, const dg_json *params)
{
    lsp_doc *d = NULL;
    uint32_t line, col;
    int r = lsp_position(S, params, &d, &line, &col);
    if (r == 0) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument and position");
        return;
    }
    const dg_source *src = r > 0 ? lsp_doc_src(d) : NULL;
    if (!src) { /* not open, or not compiled (a file over the size limit) */
        lsp_reply(S, id, "null");
        return;
    }
    /* The text before the cursor, less the word being typed. */
    size_t off = d->len;
    if (line <= src->nlines) {
        size_t len;
        const char *p = dg_source_line(src, line, &len);
        size_t c = col - 1 > len ? len : col - 1;
        off = (size_t)(p - src->text) + c - src->start;
    }
    if (off > d->len) off = d->len;
    while (off > 0) {
        char c = d->text[off - 1];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) break;
        off--;
    }
    dg_source pre;
    dg_source_from_memory(&pre, d->path, d->text, off);
    dg_arena a;
    dg_arena_init(&a);
    dg_expect x;
    dg_parse_expected(&pre, &a, &x);
    lsp_index *ix = lsp_doc_index(d);
    dg_buf b = {0};
    int n = 0;
    dg_buf_puts(&b, "{\"isIncomplete\":false,\"items\":[");
    /* CompletionItemKind: Function 3, Variable 6, Module 9, Keyword 14, Event 23. */
    if (!x.stuck) {
        static const char *const top[] = {"graph", "import", "resource", "include"};
        for (size_t i = 0; i < 4; i++) item(&b, &n, top[i], 14, NULL);
    }
    int want_nodes = 0, want_res = 0, want_graphs = 0;
    for (int i = 0; i < x.n; i++) {
        int t = x.tok[i];
        if (t == TK_NAME) {
            if (x.last_kw == TK_AFTER || x.last_kw == TK_AND || x.last_kw == TK_OR ||
                x.last_kw == TK_PREV || x.last_kw == TK_EQ)
                want_nodes = 1;
            else if (x.last_kw == TK_READS || x.last_kw == TK_WRITES) want_res = 1;
            else if (x.last_kw == TK_RUN) want_graphs = 1;
            continue;
        }
        const char *w = tok_word(t);
        if (!w || (x.in_task && !clause_ok(t, x.clauses))) continue;
        item(&b, &n, w, 14, NULL);
    }
    /* After an operand of `after` or a gate the parser has reduced the
     * expression by the time the end is seen: `and` and `or` may still
     * follow it. */
    int expr_kw = x.last_kw == TK_AFTER || x.last_kw == TK_AND || x.last_kw == TK_OR ||
                  x.last_kw == TK_PREV || x.last_kw == TK_EQ;
    if (x.stuck && expr_kw && (x.last_tok == TK_NAME || x.last_tok == TK_RPAREN)) {
        item(&b, &n, "and", 14, NULL);
        item(&b, &n, "or", 14, NULL);
    }
    for (size_t i = 0; ix && i < ix->n; i++) {
        const lsp_occ *o = &ix->occ[i];
        if (!o->def) continue;
        if (want_nodes && o->stmt && o->src == src && x.graph && o->graph->name &&
            strcmp(o->graph->name, x.graph) == 0)
            item(&b, &n, o->name, o->kind == LSP_GATE ? 23 : 3,
                 o->kind == LSP_GATE ? "gate" : "task");
        if (want_res && o->kind == LSP_RESOURCE) item(&b, &n, o->name, 6, "resource");
        if (want_graphs && o->kind == LSP_GRAPH && (!x.graph || strcmp(o->name, x.graph) != 0))
            item(&b, &n, o->name, 9, "graph");
    }
    dg_buf_puts(&b, "]}");
    dg_source_free(&pre);
    dg_arena_free(&a);
    lsp_reply_buf(S, id, &b);
}

/* Quick fixes: the fix-its of the diagnostics that touch the range. */
void lsp_on_code_action(lsp_server *S, const dg_json *id, const dg_json *params)
{
    const char *uri = lsp_get_str(lsp_get(params, "textDocument"), "uri");
    const dg_json *range = lsp_get(params, "range");
    uint32_t sl, el, ch;
    if (!uri || !lsp_get_u32(lsp_get(range, "start"), "line", &sl) || !lsp_get_u32(lsp_get(range, "end"), "line", &el) ||
        !lsp_get_u32(lsp_get(range, "start"), "character", &ch)) {
        lsp_reply_error(S, id, LSP_E_PARAMS, "expected textDocument and range");
        return;
    }
    lsp_doc *d = lsp_find_doc(S, uri);
    if (!d || !d->diags) {
        lsp_reply(S, id, d ? "[]" : "null");
        return;
    }
    dg_buf b = {0};
    dg_buf_putc(&b, '[');
    int n = 0;
    for (size_t i = 0; i < d->diags->n; i++) {
        const dg_json *g = d->diags->items[i];
        const dg_json *fx = lsp_get(g, "fixits");
        const char *file = lsp_get_str(g, "file");
        uint32_t l = 0, e = 0;
        if (!fx || fx->kind != DG_JSON_ARR || !fx->n || !file || strcmp(file, d->path) != 0) continue;
        if (!lsp_get_u32(g, "line", &l)) continue;
        lsp_get_u32(g, "end_line", &e);
        if (e < l) e = l;
        if (l - 1 > el || e - 1 < sl) continue;
        if (n++) dg_buf_putc(&b, ',');
        dg_buf m = {0};
        const char *hint = lsp_get_str(g, "hint");
        dg_buf_printf(&m, "dagc: %s", hint ? hint : lsp_get_str(g, "message") ? lsp_get_str(g, "message") : "fix");
        dg_buf_putc(&m, 0);
        dg_buf_puts(&b, "{\"title\":");
        lsp_jstr(&b, m.p);
        dg_buf_free(&m);
        dg_buf_puts(&b, ",\"kind\":\"quickfix\",\"diagnostics\":[");
        lsp_put_diag(&b, S, d, g, lsp_doc_src(d), NULL);
        dg_buf_puts(&b, "],\"edit\":{\"changes\":{");
        /* one list per file, in the order the fix-its name them */
        int files = 0;
        for (size_t k = 0; k < fx->n; k++) {
            const char *fk = lsp_get_str(fx->items[k], "file");
            int seen = 0;
            for (size_t j = 0; j < k && !seen; j++) {
                const char *fj = lsp_get_str(fx->items[j], "file");
                seen = fk && fj && strcmp(fk, fj) == 0;
            }
            if (!fk || seen) continue;
            if (files++) dg_buf_putc(&b, ',');
            lsp_put_uri(&b, fk);
            dg_buf_puts(&b, ":[");
            int ne = 0;
            const dg_source *fs = lsp_unit_src(d, fk);
            for (size_t j = k; j < fx->n; j++) {
                const dg_json *f = fx->items[j];
                const char *fj = lsp_get_str(f, "file");
                uint32_t a = 0, c = 0, z = 0, w = 0;
                if (!fj || strcmp(fj, fk) != 0 || !lsp_get_u32(f, "line", &a)) continue;
                lsp_get_u32(f, "column", &c);
                lsp_get_u32(f, "end_line", &z);
                lsp_get_u32(f, "end_column", &w);
                if (ne++) dg_buf_putc(&b, ',');
                dg_buf_puts(&b, "{\"range\":");
                lsp_put_range(&b, S, fs, a, c, z, w);
                dg_buf_puts(&b, ",\"newText\":");
                lsp_jstr(&b, lsp_get_str(f, "text"));
                dg_buf_putc(&b, '}');
            }
            dg_buf_putc(&b, ']');
        }
        dg_buf_puts(&b, "}}}");
    }
    dg_buf_putc(&b, ']');
    lsp_reply_buf(S, id, &b);
}
