/*
 * race_ref_cases.c - the race tests' brute-force reference (race_ref.c) on
 * hand-made graphs whose races are known from the contract, and its compact
 * exploration against the literal one (every (completed, running) state) on
 * seeded random small graphs. These need no dagc: they test the test.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "race_model.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* R's races, sorted, one per line (malloc'd). */
static char *races_text(const rresult *r)
{
    char **v = calloc((size_t)r->nraces + 1, sizeof *v);
    for (int i = 0; i < r->nraces; i++) {
        v[i] = malloc(256);
        ref_race_text(r, &r->races[i], v[i], 256);
    }
    qsort(v, (size_t)r->nraces, sizeof *v, cmp_str);
    size_t len = 0;
    char *out = NULL;
    FILE *f = open_memstream(&out, &len);
    for (int i = 0; i < r->nraces; i++) {
        fprintf(f, "%s\n", v[i]);
        free(v[i]);
    }
    fclose(f);
    free(v);
    return out;
}

/* The reference's races of graph TOP of SRC. */
static char *ref_text(const char *src, const char *top)
{
    static rprog p;
    char err[200];
    cr_assert_eq(parse_race_prog(src, &p, err, sizeof err), 0, "parse: %s\n%s", err, src);
    int gi = race_graph_index(&p, top);
    cr_assert_geq(gi, 0);
    rresult *r = malloc(sizeof *r);
    cr_assert_eq(ref_races(&p, gi, r), 0);
    char *out = races_text(r);
    free(r);
    return out;
}

static void check(const char *src, const char *top, const char *want)
{
    char *got = ref_text(src, top);
    cr_expect_str_eq(got, want, "graph %s of\n%s\ngot:\n%s\nwant:\n%s", top, src, got, want);
    free(got);
}

Test(race_ref, unordered_writers)
{
    check("resource r; graph g { task a writes r; task b writes r; }", "g",
          "pipe 'a' 'b' r both\n"
          "pipe 'b' 'a' r both\n"
          "race 'a' 'b' r both\n");
}

Test(race_ref, readers_never_race)
{
    check("resource r; graph g { task a reads r; task b reads r; }", "g", "");
}

Test(race_ref, one_writer)
{
    check("resource r; graph g { task a reads r; task b writes r; task c; }", "g",
          "pipe 'a' 'b' r w=b\n"
          "pipe 'b' 'a' r w=b\n"
          "race 'a' 'b' r w=b\n");
}

Test(race_ref, ordered_in_frame_not_across)
{
    /* b of frame N may overlap a of N+1: a only waits for frame N's a. */
    check("resource r; graph g { task a writes r; task b after a writes r; }", "g",
          "pipe 'b' 'a' r both\n");
    /* prev b orders them across frames too. */
    check("resource r; graph g { task a after prev b writes r; task b after a writes r; }", "g",
          "");
}

Test(race_ref, or_join_subtleties)
{
    /* Every input of the OR is a or after a: ordered. */
    check("resource r; graph g { task a writes r; task b after a;"
          " task c after (a or b) writes r; task d after a or prev a; }", "g",
          "pipe 'c' 'a' r both\n");
    /* d is not after a: the OR can fire on d. */
    check("resource r; graph g { task a writes r; task d;"
          " task c after (a or d) reads r; }", "g",
          "pipe 'a' 'c' r w=a\n"
          "pipe 'c' 'a' r w=a\n"
          "race 'a' 'c' r w=a\n");
    /* a or (a and d): both inputs need a. */
    check("resource r; graph g { task a writes r; task d;"
          " task c after a or (a and d) writes r; }", "g",
          "pipe 'c' 'a' r both\n");
    /* Outside a pipeline `prev` holds at once: c is a root in one frame,
     * but in a pipeline waits for a or the previous frame's b. */
    check("resource r; graph g { task a writes r; task b after a;"
          " task c after a or prev b writes r; }", "g",
          "pipe 'c' 'a' r both\n"
          "race 'a' 'c' r both\n");
}

Test(race_ref, gates_pass_ordering)
{
    check("resource r; graph g { task a writes r; task b; gate j = a and b;"
          " gate o = b or j; task c after j writes r; task d after o writes r; }", "g",
          "pipe 'a' 'd' r both\n"
          "pipe 'c' 'a' r both\n"
          "pipe 'c' 'd' r both\n"
          "pipe 'd' 'a' r both\n"
          "pipe 'd' 'c' r both\n"
          "race 'a' 'd' r both\n"
          "race 'c' 'd' r both\n");
}

Test(race_ref, when_still_counts)
{
    check("resource r; graph g { task a writes r when p; task b reads r when q; }", "g",
          "pipe 'a' 'b' r w=a\n"
          "pipe 'b' 'a' r w=a\n"
          "race 'a' 'b' r w=a\n");
}

Test(race_ref, subgraph_tasks_by_path)
{
    const char *src =
        "resource r, s;\n"
        "graph sub(struct c *) { task s0 writes r; task s1 after s0 reads s; }\n"
        "graph top(struct c *) {\n"
        "  task t0 writes r, s;\n"
        "  task x run sub when p;\n"
        "  task t1 after x writes r;\n"
        "}\n";
    check(src, "top",
          "pipe 't0' 't1' r both\n"
          "pipe 't0' 'x.s0' r both\n"
          "pipe 't0' 'x.s1' s w=t0\n"
          "pipe 't1' 't0' r both\n"
          "pipe 't1' 'x.s0' r both\n"
          "pipe 'x.s0' 't0' r both\n"
          "pipe 'x.s1' 't0' s w=t0\n"
          "race 't0' 't1' r both\n"
          "race 't0' 'x.s0' r both\n"
          "race 't0' 'x.s1' s w=t0\n");
    check(src, "sub", "");
}

Test(race_ref, subgraph_roots_wait_for_the_node)
{
    check("resource r;\n"
          "graph sub { task s0; task s1 after s0 writes r; }\n"
          "graph top { task t writes r; task x after t run sub; task z after x writes r; }\n",
          "top",
          "pipe 'x.s1' 't' r both\n"
          "pipe 'z' 't' r both\n"
          "pipe 'z' 'x.s1' r both\n");
}

Test(race_ref, nested_and_twice)
{
    const char *src =
        "resource r;\n"
        "graph h { task c0 writes r; }\n"
        "graph g { task b0 run h; task b1 after b0; }\n"
        "graph top { task a0 run g; task a1 writes r; task a2 after a1 run h; }\n";
    check(src, "top",
          "pipe 'a0.b0.c0' 'a1' r both\n"
          "pipe 'a0.b0.c0' 'a2.c0' r both\n"
          "pipe 'a1' 'a0.b0.c0' r both\n"
          "pipe 'a2.c0' 'a0.b0.c0' r both\n"
          "pipe 'a2.c0' 'a1' r both\n"
          "race 'a0.b0.c0' 'a1' r both\n"
          "race 'a0.b0.c0' 'a2.c0' r both\n");
}

Test(race_ref, prev_inside_a_subgraph_is_per_instance)
{
    /* In each instance s1 waits for the previous frame's s0 of the same
     * instance (so no 'y.s0' 'y.s1' pair), but x of the next frame only
     * waits for its own previous tasks, not for y. */
    check("resource r;\n"
          "graph sub { task s0 writes r; task s1 after s0, prev s0 reads r; }\n"
          "graph top { task x run sub; task y after x run sub; }\n",
          "top",
          "pipe 'x.s1' 'x.s0' r w=x.s0\n"
          "pipe 'y.s0' 'x.s0' r both\n"
          "pipe 'y.s0' 'x.s1' r w=y.s0\n"
          "pipe 'y.s1' 'x.s0' r w=x.s0\n"
          "pipe 'y.s1' 'y.s0' r w=y.s0\n");
}

/* ---- the compact exploration against the literal one */

Test(race_ref, compact_equals_literal, .timeout = 120)
{
    static rprog p;
    int compared = 0;
    for (int c = 0; c < scaled(300); c++) {
        rng r = {0xc0ffeeULL + (uint64_t)c * 7919};
        rgen_opts o = {.max_top = 6, .subgraphs = c % 3 != 0, .prev = c % 2, .max_flat = 7,
                       .known_bugs = 3, .sub_races = c % 5 == 0, .prev_of_runs = c % 7 < 3};
        gen_race_prog(&p, &r, &o);
        for (int gi = 0; gi < p.ng; gi++) {
            rresult *res = malloc(sizeof *res);
            cr_assert_eq(ref_races(&p, gi, res), 0);
            uint64_t conc[RM_MAX_FLAT] = {0}, cross[RM_MAX_FLAT] = {0};
            if (ref_literal(&res->f, conc, cross) == 0) {
                compared++;
                for (int t = 0; t < res->f.n; t++) {
                    cr_assert_eq(conc[t], res->conc[t], "case %d graph %d task %s: in-frame", c,
                                 gi, res->f.name[t]);
                    cr_assert_eq(cross[t], res->cross[t], "case %d graph %d task %s: across", c,
                                 gi, res->f.name[t]);
                }
            }
            free(res);
        }
    }
    cr_assert_gt(compared, scaled(300) / 2, "only %d graphs small enough", compared);
}

/* The printed text means what the generator built: parsing it back gives
 * the same races (and the subgraphs have none, as promised). */
Test(race_ref, print_parse_round_trip, .timeout = 120)
{
    static rprog p, q;
    for (int c = 0; c < scaled(200); c++) {
        rng r = {0xabcdefULL + (uint64_t)c};
        rgen_opts o = {.max_top = 10, .subgraphs = 1, .prev = 1, .race_free = c % 4 == 0,
                       .max_flat = 12, .known_bugs = 3, .prev_of_runs = c % 2};
        gen_race_prog(&p, &r, &o);
        size_t len;
        char *src = print_race_prog(&p, &r, &len);
        char err[200];
        cr_assert_eq(parse_race_prog(src, &q, err, sizeof err), 0, "%s\n%s", err, src);
        rresult *a = malloc(sizeof *a), *b = malloc(sizeof *b);
        for (int gi = 0; gi < p.ng; gi++) {
            cr_assert_eq(ref_races(&p, gi, a), 0);
            cr_assert_eq(ref_races(&q, race_graph_index(&q, p.g[gi].name), b), 0);
            char *x = races_text(a), *y = races_text(b);
            cr_assert_str_eq(x, y, "case %d graph %s\n%s", c, p.g[gi].name, src);
            free(x);
            free(y);
            if (gi > 0)
                cr_assert_eq(a->nraces, 0, "subgraph %s races on its own\n%s", p.g[gi].name, src);
            if (gi == 0 && o.race_free)
                for (int i = 0; i < a->nraces; i++)
                    cr_assert(a->races[i].cross, "race-free graph races\n%s", src);
        }
        free(a);
        free(b);
        free(src);
    }
}
