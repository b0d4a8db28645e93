/*
 * golden_c.c - the C back end's main output against golden files, as cproc
 * keeps .qbe files beside its tests: for every tests/compiler/golden_c/
 * NAME.dag, `dagc -o TMP NAME.dag` must succeed without a diagnostic and
 * write TMP/NAME.h and TMP/NAME.c equal, byte for byte, to NAME.h and NAME.c
 * beside the input; the source must then compile warning-free with every C
 * compiler the build found (-std=c11 -Wall -Wextra -Wpedantic -Werror,
 * against runtime/include and the headers beside the input). A case with
 * NAME.costs (a costs file) or NAME.trace.json (a libdagrt trace) beside it
 * is compiled with `--costs` that file: the tables' measured costs.
 *
 * DAGC_UPDATE_GOLDEN=1 rewrites the expected files instead (then review
 * the diff by hand: the golden files are the specification).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dagc_run.h"

static void write_file(const char *path, const char *s, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    cr_assert_eq(fwrite(s, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* Compares one output with its golden file (or rewrites the golden file).
 * Returns 1 when they are equal. */
static int same_as_golden(const char *name, const char *ext, const char *dir, const char *tmp,
                          int update)
{
    char got_path[1200], want_path[1200];
    snprintf(got_path, sizeof got_path, "%s/%s%s", tmp, name, ext);
    snprintf(want_path, sizeof want_path, "%s/%s%s", dir, name, ext);
    size_t glen = 0, wlen = 0;
    char *got = slurp(got_path, &glen);
    if (!got) {
        cr_log_error("golden_c %s: dagc wrote no %s%s", name, name, ext);
        return 0;
    }
    if (update) write_file(want_path, got, glen);
    char *want = slurp(want_path, &wlen);
    int ok = want && wlen == glen && memcmp(want, got, glen) == 0;
    if (!ok)
        cr_log_error("golden_c %s: %s%s differs from the golden file\n--- expected\n%s--- actual\n%s",
                     name, name, ext, want ? want : "(missing file)\n", got);
    free(want);
    free(got);
    return ok;
}

/* Compiles TMP/NAME.c with cc; returns 1 when it succeeded without a word. */
static int compiles(const char *cc, const char *name, const char *dir, const char *tmp,
                    const char *rt_include)
{
    char src[1200], obj[1200], inc_rt[1200], inc_dir[1200], inc_tmp[1200];
    snprintf(src, sizeof src, "%s/%s.c", tmp, name);
    snprintf(obj, sizeof obj, "%s/%s.o", tmp, name);
    snprintf(inc_rt, sizeof inc_rt, "-I%s", rt_include);
    snprintf(inc_dir, sizeof inc_dir, "-I%s", dir);
    snprintf(inc_tmp, sizeof inc_tmp, "-I%s", tmp);
    char *argv[] = {(char *)cc, "-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Werror",
                    inc_rt, inc_dir, inc_tmp, "-c", src, "-o", obj, NULL};
    spawn_result r;
    cr_assert_eq(spawn_capture(NULL, argv, &r), 0);
    int ok = r.status == 0 && r.err[0] == '\0';
    if (!ok)
        cr_log_error("golden_c %s: %s failed (exit %d):\n%s%s", name, cc, r.status, r.out, r.err);
    spawn_free(&r);
    unlink(obj);
    return ok;
}

Test(golden_c, cases, .timeout = 240)
{
    const char *dagc = getenv("DAGC"), *dir = getenv("GOLDEN_C_DIR");
    const char *ccs = getenv("DAGC_TEST_CCS"), *rt_include = getenv("DAGRT_INCLUDE_DIR");
    cr_assert(dagc && dir && ccs && rt_include,
              "DAGC, GOLDEN_C_DIR, DAGC_TEST_CCS and DAGRT_INCLUDE_DIR must be set (meson does)");
    cr_assert(ccs[0], "no C compiler found to compile the golden C with");
    int update = getenv("DAGC_UPDATE_GOLDEN") && atoi(getenv("DAGC_UPDATE_GOLDEN"));
    size_t n;
    char **cases = list_cases(dir, &n);
    cr_assert_geq(n, 3, "expected the golden C cases in %s", dir);
    size_t failed = 0, compiled = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = cases[i];
        char *tmp = make_temp_dir();
        cr_assert_not_null(tmp);
        char file[600];
        snprintf(file, sizeof file, "%s.dag", name);
        char costs[1200], cpath[1800];
        char *argv[] = {(char *)dagc, "-o", tmp, file, NULL, NULL, NULL};
        for (int k = 0; k < 2; k++) {
            snprintf(costs, sizeof costs, "%s%s", name, k ? ".trace.json" : ".costs");
            snprintf(cpath, sizeof cpath, "%s/%s", dir, costs);
            if (access(cpath, R_OK) == 0) {
                argv[4] = "--costs";
                argv[5] = costs;
                break;
            }
        }
        spawn_result r;
        cr_assert_eq(spawn_capture(dir, argv, &r), 0);
        int ok = 1;
        if (r.status != 0 || r.err[0] || r.out[0]) {
            cr_log_error("golden_c %s: dagc exited %d\n%s%s", name, r.status, r.out, r.err);
            ok = 0;
        }
        spawn_free(&r);
        ok &= same_as_golden(name, ".h", dir, tmp, update);
        ok &= same_as_golden(name, ".c", dir, tmp, update);
        char *list = strdup(ccs);
        for (char *cc = strtok(list, ":"); cc; cc = strtok(NULL, ":")) {
            ok &= compiles(cc, name, dir, tmp, rt_include);
            compiled++;
        }
        free(list);
        failed += !ok;
        remove_dir(tmp);
        free(tmp);
    }
    cr_expect_eq(failed, 0, "%zu of %zu golden C cases failed (see the log above)", failed, n);
    cr_expect_geq(compiled, n, "every case compiled at least once");
    for (size_t i = 0; i < n; i++) free(cases[i]);
    free(cases);
}
