/*
 * cli_build.c - the options build systems rely on: the depfile's targets
 * (-MT, and every output by default with the C source first, as Ninja
 * checks the first one), and the C++ back end's file names (--cxx).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spawn.h"

static const char *dagc(void)
{
    const char *p = getenv("DAGC");
    cr_assert_not_null(p, "DAGC must be set");
    return p;
}

static void put(const char *dir, const char *name, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static char *get(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path, NULL);
}

#define RUN(r, cwd, ...) do { \
        char *argv_[] = {(char *)dagc(), __VA_ARGS__, NULL}; \
        cr_assert_eq(spawn_capture(cwd, argv_, &(r)), 0); \
    } while (0)

static const char *simple = "include \"ctx.h\";\ngraph f(struct ctx *) { task a; }\n";

Test(cli_build, depfile_targets_every_output_source_first)
{
    char *tmp = make_temp_dir();
    put(tmp, "f.dag", simple);
    put(tmp, "ctx.h", "struct ctx { int x; };\n");
    char g[1100];
    snprintf(g, sizeof g, "%s/g", tmp);
    cr_assert_eq(mkdir(g, 0700), 0);
    spawn_result r;
    RUN(r, tmp, "f.dag", "--h", "g/f.h", "--c", "g/f.c", "--dot", "f.dot", "-M", "f.d");
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *dep = get(tmp, "f.d");
    cr_assert_not_null(dep);
    cr_expect_str_eq(dep, "g/f.c g/f.h f.dot: f.dag \\\n  ctx.h\n");
    free(dep);
    spawn_free(&r);
    remove_dir(g);
    remove_dir(tmp);
    free(tmp);
}

Test(cli_build, mt_names_the_targets)
{
    char *tmp = make_temp_dir();
    put(tmp, "f.dag", simple);
    spawn_result r;
    /* Repeatable, in order, make-escaped; -MTX spelling too. */
    RUN(r, tmp, "f.dag", "-o", ".", "-M", "f.d", "-MT", "out/f.cpp", "-MTa b", "-MT", "$x");
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *dep = get(tmp, "f.d");
    cr_assert_not_null(dep);
    cr_expect_str_eq(dep, "out/f.cpp a\\ b $$x: f.dag\n");
    free(dep);
    spawn_free(&r);
    /* -MT without -M has nothing to name. */
    RUN(r, tmp, "f.dag", "-MT", "x");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "-MT names the depfile's targets: it needs -M FILE") != NULL, "%s", r.err);
    spawn_free(&r);
    RUN(r, tmp, "f.dag", "-M", "f.d", "-MT");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "option '-MT' needs an argument") != NULL, "%s", r.err);
    spawn_free(&r);
    /* -M with a value glued on is still the depfile, not -MT. */
    RUN(r, tmp, "f.dag", "--check", "-Mx.d");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "--check writes nothing") != NULL, "%s", r.err);
    spawn_free(&r);
    remove_dir(tmp);
    free(tmp);
}
