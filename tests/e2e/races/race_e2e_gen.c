/*
 * race_e2e_gen.c - writes, at build time, the end-to-end race test's input:
 *   race_e2e_K.dag (K < N): seeded random graphs (race_gen.c) with resources,
 *     subgraphs, joins and `prev`, whose accesses are stripped by the
 *     brute-force reference until no two conflicting tasks are unordered;
 *   race_e2e_bad.dag: the negative control, a race hidden from dagc by
 *     declaring one of two conflicting writes on another resource;
 *   race_e2e_bad_honest.dag: the same with the write declared as made;
 *   race_e2e_bodies.c: every task body, predicate and count function, with
 *     the accesses each task really makes, for the checker (race_e2e.c).
 *
 * usage: race_e2e_gen OUTDIR SEED N [v1]
 * v1: for a dagc without language version 2 (no resources, subgraphs or
 * prev): the files declare no accesses (the bodies still make them), and
 * the graphs use no v2 form; the test then checks the runtime against the
 * reference alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "race_model.h"

static FILE *open_out(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

static void write_text(const char *dir, const char *name, const char *text)
{
    FILE *f = open_out(dir, name);
    fputs(text, f);
    if (fclose(f) != 0) {
        perror(name);
        exit(1);
    }
}

typedef struct out {
    FILE *b;          /* bodies */
    int nfid, nwhen, res_base, ngraphs;
    char graphs[4096]; /* race_graphs[] rows */
    size_t glen;
} out;

/* Bodies of every task of P (the accesses in REAL, the same program as P
 * but for what the tasks really touch), and P's graphs' rows. */
static void emit(out *o, const rprog *p, const rprog *real, const char *header, int control,
                 rng *r)
{
    fprintf(o->b, "\n#include \"%s\"\n", header);
    int when_base = o->nwhen;
    int nwhen = 0;
    unsigned used = 0;
    for (int gi = 0; gi < p->ng; gi++) {
        const rgraph *g = &p->g[gi];
        for (int i = 0; i < g->n; i++) {
            const rnode *x = &g->nodes[i], *rx_ = &real->g[gi].nodes[i];
            if (x->when[0]) {
                /* predicates are named <file>p<k>; defined once below */
                int k = atoi(strrchr(x->when, 'p') + 1);
                if (k + 1 > nwhen)
                    nwhen = k + 1;
                used |= 1u << k;
            }
            if (x->kind != RN_TASK)
                continue;
            int fid = o->nfid++;
            fprintf(o->b, "static const race_acc acc_%d[] = {", fid);
            int nacc = 0;
            for (int k = 0; k < real->nres; k++)
                if ((rx_->reads | rx_->writes) >> k & 1) {
                    fprintf(o->b, "{%d, %d}, ", o->res_base + k, (int)(rx_->writes >> k & 1));
                    nacc++;
                }
            fprintf(o->b, "{-1, 0}};\n");
            int par = (x->flags & RF_PARALLEL) != 0;
            unsigned spin = control ? 2000000 : 500 + rng_below(r, 16000);
            fprintf(o->b, "#define TASK_%d {\"%s_%s\", %d, %d, %u, %d, acc_%d}\n", fid, g->name,
                    x->name, par, !par && !control, spin, nacc, fid);
            if (par)
                fprintf(o->b,
                        "void %s_%s(struct rctx *ctx, size_t b, size_t e)"
                        " { (void)b; (void)e; race_body(ctx, %d); }\n"
                        "size_t %s_%s_count(struct rctx *ctx) { return race_count(ctx, %d); }\n",
                        g->name, x->name, fid, g->name, x->name, fid);
            else
                fprintf(o->b, "void %s_%s(struct rctx *ctx) { race_body(ctx, %d); }\n", g->name,
                        x->name, fid);
        }
        if (control && gi > 0)
            continue; /* the control runs its top graph only */
        o->glen += (size_t)snprintf(o->graphs + o->glen, sizeof o->graphs - o->glen,
                                    "    {\"%s\", %d, %s_run},\n", g->name, control, g->name);
        o->ngraphs++;
    }
    for (int k = 0; k < nwhen; k++) {
        if (!(used >> k & 1))
            continue;
        char nm[32];
        snprintf(nm, sizeof nm, "%s", p->g[0].name);
        fprintf(o->b, "bool %sp%d(struct rctx *ctx) { return race_when(ctx, %d); }\n", nm, k,
                when_base + k);
    }
    o->nwhen += nwhen;
    o->res_base += p->nres;
}

/* Renames P's graphs to <tag><letter> and predicates to <tag>ap<k>. */
static void rename_prog(rprog *p, const char *tag)
{
    for (int gi = 0; gi < p->ng; gi++) {
        rgraph *g = &p->g[gi];
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i].when[0]) {
                char w[24];
                snprintf(w, sizeof w, "%.8sap%.8s", tag, g->nodes[i].when + 1);
                memcpy(g->nodes[i].when, w, sizeof w);
            }
        char nm[24];
        snprintf(nm, sizeof nm, "%s%c", tag, 'a' + gi);
        memcpy(g->name, nm, sizeof nm);
    }
}

/* The negative control: w and u both write ra and are unordered, but u
 * says it writes rb (in a subgraph when the language has them). */
static const char bad_v2[] =
    "resource ra, rb;\n"
    "graph ebada(struct rctx *) { task w writes ra; task s run ebadb; task z after w, s; }\n"
    "graph ebadb(struct rctx *) { task u writes rb; }\n";
static const char bad_v1[] =
    "resource ra, rb;\n"
    "graph ebada(struct rctx *) { task w writes ra; task u writes rb; task z after w, u; }\n";

int main(int argc, char **argv)
{
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "v1") == 0)) {
        fprintf(stderr, "usage: race_e2e_gen OUTDIR SEED N [v1]\n");
        return 2;
    }
    int v1 = argc == 5;
    const char *dir = argv[1];
    unsigned long long seed = strtoull(argv[2], NULL, 0);
    int n = atoi(argv[3]);
    static rprog p, real;
    out o = {0};
    char *body = NULL;
    size_t blen = 0;
    o.b = open_memstream(&body, &blen);
    fprintf(o.b, "/* race_e2e_bodies.c: written by race_e2e_gen %s %s %s. */\n"
                 "#include \"race_e2e.h\"\n", argv[1], argv[2], argv[3]);
    for (int k = 0; k < n; k++) {
        rng r = {seed * 1000003ULL + (uint64_t)k};
        rgen_opts opt = {.max_top = 10, .subgraphs = !v1, .prev = !v1, .race_free = 1,
                         .max_flat = 12};
        do /* big enough to be worth running */
            gen_race_prog(&p, &r, &opt);
        while (p.g[0].n < 6);
        char tag[16], name[64], header[64];
        snprintf(tag, sizeof tag, "e%d", k);
        rename_prog(&p, tag);
        snprintf(p.include, sizeof p.include, "race_e2e.h");
        p.hide_access = v1;
        size_t len;
        char *src = print_race_prog(&p, &r, &len);
        snprintf(name, sizeof name, "race_e2e_%d.dag", k);
        snprintf(header, sizeof header, "race_e2e_%d.h", k);
        write_text(dir, name, src);
        free(src);
        emit(&o, &p, &p, header, 0, &r);
    }
    char err[200];
    if (parse_race_prog(v1 ? bad_v1 : bad_v2, &p, err, sizeof err) != 0) {
        fprintf(stderr, "race_e2e_gen: negative control: %s\n", err);
        return 1;
    }
    snprintf(p.include, sizeof p.include, "race_e2e.h");
    p.hide_access = v1;
    real = p;
    for (int gi = 0; gi < p.ng; gi++)
        for (int i = 0; i < p.g[gi].n; i++)
            if (strcmp(p.g[gi].nodes[i].name, "u") == 0)
                real.g[gi].nodes[i].writes = 1u; /* u really writes ra */
    rng r = {seed};
    size_t len;
    char *src = print_race_prog(&p, &r, &len);
    write_text(dir, "race_e2e_bad.dag", src);
    free(src);
    /* The control as it really is, which dagc must reject (meson.build). */
    src = print_race_prog(&real, &r, &len);
    write_text(dir, "race_e2e_bad_honest.dag", src);
    free(src);
    emit(&o, &p, &real, "race_e2e_bad.h", 1, &r);
    fprintf(o.b, "\nconst race_task race_tasks[] = {\n");
    for (int f = 0; f < o.nfid; f++)
        fprintf(o.b, "    TASK_%d,\n", f);
    fprintf(o.b, "};\nconst int race_ntasks = %d, race_nres = %d;\n", o.nfid, o.res_base);
    fprintf(o.b, "const race_graph race_graphs[] = {\n%s};\nconst int race_ngraphs = %d;\n",
            o.graphs, o.ngraphs);
    fclose(o.b);
    write_text(dir, "race_e2e_bodies.c", body);
    free(body);
    return 0;
}
