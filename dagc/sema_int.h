/*
 * sema_int.h - what the front end's checking stages share: the per-graph
 * working state sema.c lowers into (sema_order.c sorts it, finds cycles and
 * the optional warnings), the lowered graphs that subgraph.c flattens, and
 * the entry points of cnames.c and race.c. Not part of the IR.
 */
#ifndef DAGC_SEMA_INT_H
#define DAGC_SEMA_INT_H

#include "ast.h"
#include "diag.h"
#include "ir.h"
#include "util.h"

typedef struct snode {
    ir_kind kind;
    ir_join join;
    unsigned flags;
    const char *name;
    const char *func;
    const char *when;
    uint32_t grain;
    uint64_t cost_ns;
    src_pos pos;
    uint64_t key;        /* topological tie-break: source order */
    const ast_clause *when_clause, *call_clause;
    const char *run;     /* `run G`: the graph's name */
    src_pos run_pos;
    ir_access *acc;      /* reads/writes, one per resource */
    uint32_t nacc, acap;
} snode;

typedef struct sedge {
    uint32_t from, to;
    src_pos pos;         /* where `from` is named in `to`'s expression */
} sedge;

typedef struct sgraph {
    dg_diag *d;
    dg_arena *a;
    const ast_graph *ag;
    const dg_map *resources;     /* name -> resource index */
    const ir_resource *res;
    size_t nres;
    snode *nodes;
    uint32_t n, cap;
    sedge *edges;
    uint8_t *eop;                /* per edge: how its name can be removed (sref_op) */
    size_t ne, ecap;
    sedge *pedges;               /* `prev` inputs: from (last frame) -> to */
    size_t npe, pecap;
    dg_map names;        /* user name -> node index */
    uint32_t nanon_and, nanon_or, seq;
    uint32_t owner;      /* node whose expression is being lowered */
    uint64_t owner_decl;
    int too_many;
} sgraph;

/* Where a node's input is named, and how a fix-it can remove it: the
 * whole expression (none), an operand of a `,`/`and` list, or its last. */
enum { SREF_ALONE, SREF_LISTED, SREF_LAST };

typedef struct sref {
    src_pos pos;
    int op;              /* SREF_* */
} sref;

/* Compressed adjacency over the (deduplicated) edges. */
typedef struct adj {
    uint32_t *pstart, *plist;  /* preds of each node: edge indices */
    uint32_t *sstart, *slist;  /* succs of each node: edge indices */
} adj;

/* A binary min-heap of (key, node): the key travels with the node so that
 * sifting does not chase pointers into the node array. */
typedef struct hent {
    uint64_t key;
    uint32_t v;
} hent;

typedef struct heap {
    hent *e;
    size_t n;
} heap;

/* sema_order.c */
void dg_heap_push(heap *h, uint64_t key, uint32_t v);
uint32_t dg_heap_pop(heap *h);
void dg_adj_build(const sgraph *g, adj *A);
void dg_adj_free(adj *A);
void dg_report_cycle(sgraph *g, const adj *A, const uint8_t *done);
void dg_warn_implied(sgraph *g, const ir_node *nodes, uint32_t n, sref *const *predpos);

/* One graph after sema.c: its IR with `run` nodes still in it (gates with
 * IR_F_RUN), and what subgraph.c needs to resolve them. */
typedef struct lgraph {
    const ast_graph *ag;
    size_t file;             /* index into the loaded files */
    int ok;                  /* lowered without errors */
    ir_graph g;              /* local: run nodes not yet flattened */
    const char **run;        /* per node: the graph a run node runs, else NULL */
    src_pos *run_pos;        /* per node: where that name is written */
    uint32_t *target;        /* per node: the run graph's lgraph index (subgraph.c) */
    int state;               /* subgraph.c: 0 new, 1 being flattened, 2 done, 3 failed */
    ir_graph flat;           /* subgraph.c: flattened */
} lgraph;

/* subgraph.c: resolves every `run`, reports unknown graphs, other context
 * types and recursion, and flattens the graphs marked `want`. */
void dg_flatten(lgraph *L, size_t n, const dg_map *gnames, const int *want, dg_diag *d,
                dg_arena *a);

/* cnames.c: generated C names that would collide, across the output. */
void dg_check_c_names(const ir_program *p, dg_diag *d, dg_arena *a);

/* race.c: the race checks over the output graphs (flattened). */
void dg_check_races(const ir_program *p, int pipeline_warnings, dg_diag *d);

/* sema.c: one graph's AST -> its IR, run nodes not yet flattened. */
int dg_lower_graph(sgraph *g, lgraph *L);

/* Shared helpers (sema.c). */
int dg_check_name(dg_diag *d, src_pos pos, const char *name, const char *what);

#endif
