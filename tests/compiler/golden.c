/*
 * golden.c - runs dagc over every tests/compiler/golden/NAME.dag and compares
 * its exit status, stdout and stderr (exact text, positions included) with
 * NAME.expected, and its DOT output with NAME.dot. Every DOT output is also
 * rendered by Graphviz (`dot -Tsvg`), which must succeed without a word on
 * stderr. A failing run must leave no file behind.
 *
 * A case may start with a line `// args: ...` (default `--dot @DOT@`); @DOT@
 * and @TMP@ name files in a fresh temporary directory.
 * DAGC_UPDATE_GOLDEN=1 rewrites the expected files instead (then review the
 * diff by hand: the golden files are the specification).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dagc_run.h"

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(s, f);
    fclose(f);
}

static char *subst(const char *word, const char *tmp)
{
    char buf[1200];
    if (strcmp(word, "@DOT@") == 0) snprintf(buf, sizeof buf, "%s/out.dot", tmp);
    else if (strncmp(word, "@TMP@", 5) == 0) snprintf(buf, sizeof buf, "%s%s", tmp, word + 5);
    else snprintf(buf, sizeof buf, "%s", word);
    return strdup(buf);
}

/* Renders DOT with Graphviz; returns 0 when it printed nothing and succeeded. */
static int render(const char *dot, const char *dotfile, const char *tmp, char **why)
{
    char svg[1200];
    snprintf(svg, sizeof svg, "%s/render.svg", tmp);
    char *argv[] = {(char *)dot, "-Tsvg", (char *)dotfile, "-o", svg, NULL};
    spawn_result r;
    if (spawn_capture(NULL, argv, &r) != 0) return -1;
    int bad = r.status != 0 || r.err[0] != 0;
    if (bad) *why = strdup(r.err);
    spawn_free(&r);
    unlink(svg);
    return bad ? -1 : 0;
}

Test(golden, cases, .timeout = 120)
{
    const char *dagc = getenv("DAGC"), *dir = getenv("GOLDEN_DIR"), *dot = getenv("DOT");
    cr_assert(dagc && dir && dot, "DAGC, GOLDEN_DIR and DOT must be set (meson does)");
    int update = getenv("DAGC_UPDATE_GOLDEN") && atoi(getenv("DAGC_UPDATE_GOLDEN"));
    size_t n;
    char **cases = list_cases(dir, &n);
    cr_assert_geq(n, 30, "expected the golden cases in %s", dir);
    size_t failed = 0, rendered = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = cases[i];
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.dag", dir, name);
        char *src = slurp(path, NULL);
        cr_assert_not_null(src);
        char *tmp = make_temp_dir();
        cr_assert_not_null(tmp);

        /* Arguments. */
        char *argv[64];
        int argc = 0;
        argv[argc++] = (char *)dagc;
        const char *args = strncmp(src, "// args:", 8) == 0 ? src + 8 : NULL;
        if (args) {
            char line[512];
            size_t l = strcspn(args, "\n");
            snprintf(line, sizeof line, "%.*s", (int)l, args);
            for (char *w = strtok(line, " "); w && argc < 60; w = strtok(NULL, " "))
                argv[argc++] = subst(w, tmp);
        } else {
            argv[argc++] = strdup("--dot");
            argv[argc++] = subst("@DOT@", tmp);
        }
        char file[600];
        snprintf(file, sizeof file, "%s.dag", name);
        argv[argc++] = file;
        argv[argc] = NULL;

        spawn_result r;
        cr_assert_eq(spawn_capture(dir, argv, &r), 0);
        size_t alen = strlen(r.out) + strlen(r.err) + 64;
        char *actual = malloc(alen);
        snprintf(actual, alen, "exit %d\n--- stdout\n%s--- stderr\n%s", r.status, r.out, r.err);

        char exp_path[1200], dot_path[1200], out_dot[1200];
        snprintf(exp_path, sizeof exp_path, "%s/%s.expected", dir, name);
        snprintf(dot_path, sizeof dot_path, "%s/%s.dot", dir, name);
        snprintf(out_dot, sizeof out_dot, "%s/out.dot", tmp);
        char *dot_out = slurp(out_dot, NULL);

        if (update) {
            write_file(exp_path, actual);
            if (dot_out) write_file(dot_path, dot_out);
            else unlink(dot_path);
        }
        char *expected = slurp(exp_path, NULL);
        int ok = 1;
        if (!expected || strcmp(expected, actual) != 0) {
            cr_log_error("golden %s: output differs\n--- expected\n%s--- actual\n%s", name,
                         expected ? expected : "(missing file)\n", actual);
            ok = 0;
        }
        char *dot_exp = slurp(dot_path, NULL);
        if ((dot_exp == NULL) != (dot_out == NULL) ||
            (dot_exp && strcmp(dot_exp, dot_out) != 0)) {
            cr_log_error("golden %s: DOT output differs from %s.dot", name, name);
            ok = 0;
        }
        if (dot_out) {
            char *why = NULL;
            if (render(dot, out_dot, tmp, &why) != 0) {
                cr_log_error("golden %s: dot -Tsvg failed or warned: %s", name, why ? why : "");
                ok = 0;
            }
            free(why);
            rendered++;
        }
        /* All or nothing: a failing run leaves no file at all. */
        if (r.status != 0 && count_entries(tmp) != 0) {
            cr_log_error("golden %s: exit %d but left %d file(s) behind", name, r.status,
                         count_entries(tmp));
            ok = 0;
        }
        failed += !ok;
        free(dot_exp);
        free(expected);
        free(dot_out);
        free(actual);
        spawn_free(&r);
        for (int k = 1; k < argc - 1; k++) free(argv[k]);
        remove_dir(tmp);
        free(tmp);
        free(src);
    }
    cr_expect_eq(failed, 0, "%zu of %zu golden cases failed (see the log above)", failed, n);
    cr_expect_geq(rendered, 10, "expected at least 10 DOT outputs rendered, got %zu", rendered);
    for (size_t i = 0; i < n; i++) free(cases[i]);
    free(cases);
}
