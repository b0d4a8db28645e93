/*
 * v2.c - the .dag v2 front end through the library: imports from an
 * in-memory file system (load order, each file once, -I order, cycles),
 * the list of loaded files the program exposes, the flattened IR of `run`
 * nodes (names, C functions, order, the exit that waits for everything),
 * and the depfile of the dagc binary listing every import.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "import.h"
#include "ir.h"
#include "spawn.h"

static int compile(const char *main_src, const dagc_memfile *fs, size_t n,
                   const char *const *dirs, size_t ndirs, ir_program **p, char **diag)
{
    size_t len = 0;
    FILE *f = open_memstream(diag, &len);
    dagc_opts o = {.diag_out = f, .max_errors = -1, .import_dirs = dirs, .nimport_dirs = ndirs,
                   .mem = fs, .nmem = n};
    int rc = dagc_compile_memory("main.dag", main_src, strlen(main_src), &o, p);
    fclose(f);
    return rc;
}

#define MF(path, text) {path, text, sizeof text - 1}

Test(v2, imports_load_order_and_once)
{
    static const dagc_memfile fs[] = {
        MF("a.dag", "import \"sub/b.dag\";\ngraph ga { task t; }\n"),
        MF("sub/b.dag", "resource r;\ngraph gb { task u reads r; }\n"),
        MF("c.dag", "import \"./sub/../sub/b.dag\";\n"),
    };
    ir_program *p;
    char *diag;
    int rc = compile("import \"a.dag\";\nimport \"c.dag\";\nimport \"a.dag\";\n"
                     "graph m { task x reads r; }\n", fs, 3, NULL, 0, &p, &diag);
    cr_assert_eq(rc, DAGC_OK, "%s", diag);
    cr_assert_eq(p->nfiles, 4);
    cr_expect_str_eq(p->files[0], "main.dag");
    cr_expect_str_eq(p->files[1], "a.dag");
    cr_expect_str_eq(p->files[2], "sub/b.dag");
    cr_expect_str_eq(p->files[3], "c.dag");
    /* Imported graphs are not emitted again; their resources are shared. */
    cr_expect_eq(p->ngraphs, 1);
    cr_expect_str_eq(p->graphs[0].name, "m");
    cr_expect_eq(p->nresources, 1);
    dagc_program_free(p);
    free(diag);
}

Test(v2, import_dirs_in_order_after_the_importer)
{
    static const dagc_memfile fs[] = {
        MF("x/lib.dag", "graph from_x { task t; }\n"),
        MF("y/lib.dag", "graph from_y { task t; }\n"),
        MF("y/only.dag", "graph only_y { task t; }\n"),
        MF("here.dag", "graph here { task t; }\n"),
    };
    static const char *const dirs[] = {"x", "y"};
    ir_program *p;
    char *diag;
    int rc = compile("import \"lib.dag\";\nimport \"only.dag\";\nimport \"here.dag\";\n"
                     "graph m { task a run from_x; task b run only_y; task c run here; }\n",
                     fs, 4, dirs, 2, &p, &diag);
    cr_assert_eq(rc, DAGC_OK, "%s", diag);
    cr_expect_str_eq(p->files[1], "x/lib.dag");
    cr_expect_str_eq(p->files[2], "y/only.dag");
    cr_expect_str_eq(p->files[3], "here.dag");
    dagc_program_free(p);
    free(diag);
}

Test(v2, import_cycle_and_missing_are_errors_in_the_importing_file)
{
    static const dagc_memfile fs[] = {
        MF("a.dag", "import \"b.dag\";\n"),
        MF("b.dag", "\n  import \"a.dag\";\n"),
    };
    ir_program *p;
    char *diag;
    int rc = compile("import \"a.dag\";\nimport \"gone.dag\";\ngraph m { task x; }\n", fs, 2,
                     NULL, 0, &p, &diag);
    cr_assert_eq(rc, DAGC_EINPUT);
    cr_expect_null(p);
    cr_expect(strstr(diag, "b.dag:2:10: error: import cycle: 'a.dag', which imports 'b.dag', "
                           "which imports 'a.dag'"), "%s", diag);
    cr_expect(strstr(diag, "main.dag:2:8: error: cannot import 'gone.dag'"), "%s", diag);
    free(diag);
}

Test(v2, single_file_without_options)
{
    static const char src[] = "graph g { task a; task b after a; }\n";
    ir_program *p;
    FILE *null = fopen("/dev/null", "w");
    dagc_opts o = {.diag_out = null};
    cr_assert_eq(dagc_compile_memory("g.dag", src, sizeof src - 1, &o, &p), DAGC_OK);
    cr_expect_eq(p->nfiles, 1);
    cr_expect_str_eq(p->files[0], "g.dag");
    dagc_program_free(p);
    fclose(null);
}

static uint32_t find(const ir_graph *g, const char *name)
{
    for (uint32_t i = 0; i < g->nnodes; i++)
        if (strcmp(g->nodes[i].name, name) == 0) return i;
    cr_assert_fail("no node '%s'", name);
    return 0;
}

/* Is a an ancestor of b (a path of pred edges)? */
static int reaches(const ir_graph *g, uint32_t a, uint32_t b)
{
    if (a == b) return 1;
    for (uint32_t k = 0; k < g->nodes[b].npred; k++)
        if (g->nodes[b].pred[k] >= a && reaches(g, a, g->nodes[b].pred[k])) return 1;
    return 0;
}

Test(v2, run_nodes_are_flattened)
{
    static const dagc_memfile fs[] = {
        MF("phys.dag", "graph physics(struct w *) {\n"
                       "  task broad; task narrow after broad or prev integrate;\n"
                       "  task integrate after broad, narrow;\n"
                       "  task late;  // another sink\n"
                       "}\n"),
        MF("outer.dag", "import \"phys.dag\";\n"
                        "graph outer(struct w *) { task pre; task p after pre run physics; }\n"),
    };
    ir_program *p;
    char *diag;
    int rc = compile("import \"outer.dag\";\n"
                     "graph frame(struct  w*) {\n"
                     "  task input;\n"
                     "  task o after input run outer when go;\n"
                     "  task render after o, prev o;\n"
                     "}\n", fs, 2, NULL, 0, &p, &diag);
    cr_assert_eq(rc, DAGC_OK, "%s", diag);
    cr_assert_eq(p->ngraphs, 1);
    const ir_graph *g = &p->graphs[0];
    cr_expect_eq(g->nsubs, 2);
    cr_expect_str_eq(g->subs[0].name, "o");
    cr_expect_str_eq(g->subs[0].graph, "outer");
    cr_expect_str_eq(g->subs[1].name, "o.p");
    cr_expect_eq(g->subs[1].parent, 0);
    uint32_t in = find(g, "input"), o = find(g, "o"), integ = find(g, "o.p.integrate");
    uint32_t late = find(g, "o.p.late"), narrow = find(g, "o.p.narrow"), r = find(g, "render");
    /* The same C functions as the graphs on their own; `when` on the run
     * node reaches every task inside. */
    cr_expect_str_eq(g->nodes[integ].func, "physics_integrate");
    cr_expect_str_eq(g->nodes[find(g, "o.pre")].func, "outer_pre");
    cr_expect_str_eq(g->nodes[late].when, "go");
    cr_expect(g->nodes[o].flags & IR_F_RUN);
    /* Topological order, mirrored lists. */
    for (uint32_t i = 0; i < g->nnodes; i++)
        for (uint32_t k = 0; k < g->nodes[i].npred; k++) {
            uint32_t q = g->nodes[i].pred[k];
            cr_assert_lt(q, i);
            int found = 0;
            for (uint32_t s = 0; s < g->nodes[q].nsucc; s++) found |= g->nodes[q].succ[s] == i;
            cr_assert(found);
        }
    /* The run node's dependants wait for every node inside, also a second
     * sink and the inputs of an OR. */
    cr_expect(reaches(g, in, o));
    cr_expect(reaches(g, late, r));
    cr_expect(reaches(g, integ, r));
    cr_expect(reaches(g, narrow, r));
    /* prev inside the subgraph stays inside its copy; prev of a run node is
     * its exit. */
    cr_assert_eq(g->nodes[narrow].nprev, 1);
    cr_expect_eq(g->nodes[narrow].prev[0], integ);
    cr_assert_eq(g->nodes[r].nprev, 1);
    cr_expect_eq(g->nodes[r].prev[0], g->subs[0].exit);
    dagc_program_free(p);
    free(diag);
}

Test(v2, depfile_lists_every_import)
{
    const char *dagc = getenv("DAGC"), *dir = getenv("GOLDEN_DIR");
    cr_assert(dagc && dir, "DAGC and GOLDEN_DIR must be set (meson does)");
    char *tmp = make_temp_dir();
    char dep[1200], dot[1200];
    snprintf(dep, sizeof dep, "%s/out.d", tmp);
    snprintf(dot, sizeof dot, "%s/out.dot", tmp);
    char *argv[] = {(char *)dagc, "-I", "lib/inc", "--dot", dot, "-M", dep, "ok_import_dirs.dag", NULL};
    spawn_result r;
    cr_assert_eq(spawn_capture(dir, argv, &r), 0);
    cr_assert_eq(r.status, 0, "%s", r.err);
    char *d = slurp(dep, NULL);
    cr_assert_not_null(d);
    cr_expect(strstr(d, " ok_import_dirs.dag"), "%s", d);
    cr_expect(strstr(d, "lib/physics.dag"), "%s", d);
    cr_expect(strstr(d, "lib/anim.dag"), "%s", d);
    cr_expect(strstr(d, "lib/inc/audio.dag"), "%s", d);
    /* physics is imported twice (directly and by anim): listed once. */
    cr_expect_null(strstr(strstr(d, "lib/physics.dag") + 1, "lib/physics.dag"), "%s", d);
    free(d);
    spawn_free(&r);
    remove_dir(tmp);
    free(tmp);
}
