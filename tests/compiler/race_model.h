/*
 * race_model.h - the race tests' own model of a .dag file with resources,
 * subgraphs (`run`) and `prev`, written from the language contract alone
 * (docs/language.md, "Resources and races (v2)") and independent of
 * dagc's code:
 *   - race_gen.c writes seeded random valid files and prints them,
 *   - race_parse.c reads the subset of the language the tests write by hand,
 *   - race_ref.c is the brute-force reference: it explores every reachable
 *     state of one frame (and of two consecutive frames of a pipeline) and
 *     lists the races the contract says dagc must report.
 */
#ifndef RACE_MODEL_H
#define RACE_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gen.h"

enum {
    RM_MAX_NODES = 16,   /* nodes of one graph */
    RM_MAX_GRAPHS = 6,
    RM_MAX_RES = 8,
    RM_MAX_FLAT = 24,    /* tasks of one graph once its subgraphs are inlined */
    RM_POOL = 1024,      /* expression nodes of one file */
};

enum { RX_NAME, RX_PREV, RX_AND, RX_OR, RX_COMMA }; /* COMMA: an AND written with ',' */

typedef struct rx {
    int op;
    int node;            /* RX_NAME, RX_PREV: index in the same graph */
    int nk;
    struct rx *k[4];
} rx;

enum { RN_TASK, RN_GATE, RN_RUN };
enum { RF_MAIN = 1, RF_HOT = 2, RF_FIBER = 4, RF_PARALLEL = 8 };

typedef struct rnode {
    char name[24];
    int kind;
    rx *e;               /* after (task, run) or the gate's expression; NULL: a root */
    int sub;             /* RN_RUN: index of the graph it runs */
    char when[24];       /* "" when none */
    unsigned flags;      /* RF_*: printed, no effect on ordering */
    unsigned grain, cost_us;
    uint32_t reads, writes; /* resource bit masks (disjoint) */
    uint32_t reads_prev; /* (v2.2) `reads prev R`: per-frame resources only */
    int line;            /* line of its declaration in the printed source */
} rnode;

typedef struct rgraph {
    char name[24];
    int n;
    rnode nodes[RM_MAX_NODES];
} rgraph;

typedef struct rprog {
    int ng;
    rgraph g[RM_MAX_GRAPHS];
    int nres;
    char res[RM_MAX_RES][16];
    uint32_t per_frame;  /* (v2.2) resources declared `per frame` (bit mask) */
    char include[32];    /* printed as `include "...";` when not empty */
    int hide_access;     /* print no resources or accesses (a version-1 file) */
    rx pool[RM_POOL];
    int npool;
} rprog;

/* ---- reference (race_ref.c) */

/* Graph G with its subgraphs inlined: one entry per task that runs. */
typedef struct rflat_inst {
    int graph, parent, runnode;  /* parent instance and its run node; -1 at the top */
    int flat[RM_MAX_NODES];      /* task node -> flat index */
    int child[RM_MAX_NODES];     /* run node -> instance */
    uint64_t all;                /* flat tasks of this instance and below */
} rflat_inst;

typedef struct rflat {
    const rprog *p;
    int n;                       /* flat tasks */
    char name[RM_MAX_FLAT][96];  /* path: run-node names and '.', then the task */
    int inst[RM_MAX_FLAT], node[RM_MAX_FLAT];
    int ninst;
    rflat_inst insts[RM_MAX_FLAT * 2];
} rflat;

typedef struct rrace {
    int cross;     /* 0: in one frame (error); 1: x in frame N, y in N+1 (warning);
                      2: (v2.2) y of frame N+1 reads frame N's copy that x writes */
    int x, y;      /* flat indices; in-frame: x < y */
    int res;
    int writer;    /* flat index of the only writer, or -1 when both write */
} rrace;

typedef struct rresult {
    rflat f;
    uint64_t conc[RM_MAX_FLAT];   /* in one frame: conc[i] bit j: i and j can overlap */
    uint64_t cross[RM_MAX_FLAT];  /* cross[i] bit j: i of frame N and j of N+1 can overlap */
    int nraces;
    rrace races[2048];
    long states;                  /* states explored (both explorations) */
} rresult;

/* Inlines graph GI of P; returns 0, or -1 if it is too big for the model
 * (more than RM_MAX_FLAT tasks) or runs itself. */
int ref_flatten(const rprog *p, int gi, rflat *f);
/* The races of graph GI: 0, or -1 as ref_flatten or when there are more
 * than rresult holds. */
int ref_races(const rprog *p, int gi, rresult *r);
/* The same concurrency relations computed by the literal exploration of
 * (completed, running) states, for cross-checking the compact one on small
 * graphs; returns -1 when F is too big for it (more than 7 tasks). */
int ref_literal(const rflat *f, uint64_t *conc, uint64_t *cross);
/* Canonical text of one race: "race 'a' 'b' R both" (a < b by strcmp) or
 * "race 'a' 'b' R w=a"; "pipe 'x' 'y' R both" or "pipe 'x' 'y' R w=y"
 * (x in frame N); "prev 'x' 'y' R" (y reads the copy of the frame before,
 * which x writes). dagc's diagnostics are parsed into the same form. */
void ref_race_text(const rresult *r, const rrace *k, char *buf, size_t n);

/* ---- generator (race_gen.c) */

typedef struct rgen_opts {
    int max_top;        /* nodes of the top graph */
    int subgraphs;      /* 0: none */
    int prev;           /* use `prev` */
    int race_free;      /* strip accesses until the top graph has no in-frame race */
    int max_flat;       /* tasks of the top graph once inlined (<= RM_MAX_FLAT) */
    /* Forms dagc gets wrong today (race_props.c, race_repro), generated
     * only when asked: bit 0, `when` on a run node whose graph has `when`
     * inside; bit 1, `prev` under an `or` in a graph run as a subgraph.
     * (race_props reads bit 2 too: hints checked strictly.) */
    int known_bugs;
    int sub_races;      /* subgraphs may have races of their own */
    int prev_of_runs;   /* `prev` may name a run node (dagc: all of it) */
    int per_frame;      /* (v2.2) some resources per frame, some `reads prev` */
    int dense;          /* 5-8 resources, most tasks accessing most of them
                           (more than 64 (resource, task) pairs: bitsets of
                           several words) */
} rgen_opts;

/* A random valid program: graph 0 is the top graph; graphs 1.. are run as
 * subgraphs and, unless sub_races, have no race of their own. */
void gen_race_prog(rprog *p, rng *r, const rgen_opts *o);
/* Prints P (random declaration order, one node per line; sets each node's
 * line). Returns a malloc'd NUL-terminated string. */
char *print_race_prog(rprog *p, rng *r, size_t *len);

/* ---- parser (race_parse.c) */

/* Reads the subset of the language the tests use. Returns 0, or -1 with a
 * message in ERR. Graphs keep their order; graph 0 is the first. */
int parse_race_prog(const char *src, rprog *p, char *err, size_t errn);
/* Index of graph NAME in P, or -1. */
int race_graph_index(const rprog *p, const char *name);

/* ---- hints (race_hint.c) */

/* Applies dagc's hint text ("to order them, add 'after X' to 'Y'" or "add
 * ', X' to the 'after' of 'Y'", X maybe "prev X", maybe then " in graph
 * 'G'") to P, where graph TOP is the one checked. Returns 0, or -1 with a
 * message in ERR (unknown shape or names, or the edit makes a cycle).
 * LENIENT: accept the known dagc bug of extending a missing `after` of a
 * run node inside a subgraph. */
int race_apply_hint(rprog *p, int top, const char *hint, int lenient, char *err, size_t errn);
/* Parsing diagnostics' text (race_hint.c, race_props.c): race_quoted copies
 * the quoted word at *S ('...') into OUT, race_lit matches the literal W;
 * both advance *S past what they read and return 0 when it is not there. */
int race_quoted(const char **s, char *out, size_t n);
int race_lit(const char **s, const char *w);

#endif
