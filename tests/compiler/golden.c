/*
 * golden.c - the compiler's one golden runner, for the Linux dagc and for
 * dagc.exe under Wine (scripts/windows.sh): the rules are the same, only the
 * command that runs dagc and the spelling of the paths it is given differ.
 *
 * golden/cases, one test per tests/compiler/golden/NAME.dag: runs dagc and
 * compares its exit status, stdout and stderr (exact text, positions
 * included) with NAME.expected, and its DOT output with NAME.dot. Every DOT
 * output is also rendered by Graphviz (`dot -Tsvg`), which must succeed
 * without a word on stderr. A failing run must leave no file behind, a
 * successful one no temporary. A case may start with a line `// args: ...`
 * (default `--dot @DOT@`); @DOT@ and @TMP@ name files in a fresh temporary
 * directory. DAGC_UPDATE_GOLDEN=1 rewrites the expected files instead (then
 * review the diff by hand: the golden files are the specification).
 *
 * The environment (meson sets it for the Linux build, scripts/windows.sh
 * for dagc.exe): DAGC, GOLDEN_DIR, GOLDEN_C_DIR, DOT; DAGC_WRAPPER, words
 * put before DAGC (absolute paths: `/usr/bin/timeout 60 /usr/bin/wine`);
 * GOLDEN_PATHS=windows spells the paths given to dagc as Windows paths
 * (Wine maps the Unix root to drive Z:) and runs the windows/ tests, which
 * are skipped otherwise: dagc.exe on backslashed and drive-letter paths,
 * and its outputs replaced all or nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dagc_run.h"

/* ---- The dagc command and its paths ---------------------------------- */

static int windows_paths(void)
{
    const char *p = getenv("GOLDEN_PATHS");
    return p && strcmp(p, "windows") == 0;
}

/* PATH as dagc is given it: unchanged, or Z:\... with backslashes
 * (malloc'd). */
static char *dagc_path(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 3);
    cr_assert_not_null(p);
    if (!windows_paths()) {
        memcpy(p, path, n + 1);
        return p;
    }
    p[0] = 'Z';
    p[1] = ':';
    for (size_t i = 0; i <= n; i++) p[i + 2] = path[i] == '/' ? '\\' : path[i];
    return p;
}

/* The separator dagc's own paths take: what a case appends to a
 * directory given through dagc_path. */
static const char *sep(void)
{
    return windows_paths() ? "\\" : "/";
}

/* Runs $DAGC_WRAPPER $DAGC ARGS... in CWD into R. Under a wrapper (Wine) a
 * run is repeated once if the wrapper itself hung (timeout's 124) or
 * crashed: under load Wine now and then faults in a thread of its own at
 * start-up, or hangs starting its debugger. The repeat is logged, and a
 * second failure stands. */
static void run_dagc(const char *cwd, char *const args[], spawn_result *r)
{
    char *argv[80];
    int argc = 0;
    const char *wrap_env = getenv("DAGC_WRAPPER");
    char *wrap = strdup(wrap_env ? wrap_env : "");
    for (char *w = strtok(wrap, " "); w && argc < 8; w = strtok(NULL, " ")) argv[argc++] = w;
    int wrapped = argc > 0;
    argv[argc++] = (char *)dagc();
    for (int i = 0; args[i] && argc < 79; i++) argv[argc++] = args[i];
    argv[argc] = NULL;
    for (int attempt = 1;; attempt++) {
        cr_assert_eq(spawn_capture(cwd, argv, r), 0, "cannot run %s", argv[0]);
        int wrapper_failed = r->status == 124 || strstr(r->err, "wine: Unhandled") != NULL;
        if (!wrapped || !wrapper_failed || attempt == 2) break;
        cr_log_warn("repeated after a failure of the wrapper (%s): %s", wrap_env,
                    r->status == 124 ? "hung" : "crashed");
        spawn_free(r);
    }
    free(wrap);
}

/* NAME in DIR holds no temporary of dagc's output layer (NAME.tmp-...). */
static int has_temporary(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d))) found |= strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return found;
}

static void write_file(const char *path, const char *s)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(s, f);
    fclose(f);
}

/* ---- The cases, listed for Criterion's parameters -------------------- */

/* A case's name; a fixed array, because Criterion hands parameters from
 * its runner to each test's process in its own shared memory. */
struct golden_case {
    char name[128];
};

static void free_cases(struct criterion_test_params *p)
{
    cr_free(p->params);
}

/* The NAME.dag cases of $ENV's directory as parameters (none if it is not
 * set or cannot be read: golden/count says so). */
static struct criterion_test_params cases_of(const char *env)
{
    const char *dir = getenv(env);
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) return cr_make_param_array(struct golden_case, NULL, 0, NULL);
    closedir(d);
    size_t n;
    char **names = list_cases(dir, &n);
    struct golden_case *v = cr_malloc(sizeof *v * (n ? n : 1));
    for (size_t i = 0; i < n; i++) {
        snprintf(v[i].name, sizeof v[i].name, "%s", names[i]);
        free(names[i]);
    }
    free(names);
    return cr_make_param_array(struct golden_case, v, n, free_cases);
}

/* @DOT@ and @TMP@ in a case's argument WORD, for the temporary directory
 * TMP as dagc is given it (malloc'd). */
static char *subst(const char *word, const char *tmp)
{
    char buf[1200];
    if (strcmp(word, "@DOT@") == 0) snprintf(buf, sizeof buf, "%s%sout.dot", tmp, sep());
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

/* ---- golden/: the golden files --------------------------------------- */

/* The cases are there, and enough of them write DOT (each case's DOT
 * output must match its NAME.dot, so each of these was rendered). */
Test(golden, count)
{
    const char *dir = getenv("GOLDEN_DIR");
    cr_assert(dir && getenv("DAGC") && getenv("DOT"),
              "DAGC, GOLDEN_DIR and DOT must be set (meson or scripts/windows.sh does)");
    size_t n, dots = 0;
    char **cases = list_cases(dir, &n);
    for (size_t i = 0; i < n; i++) {
        char *path = at(dir, cases[i]);
        char dot[1200];
        snprintf(dot, sizeof dot, "%s.dot", path);
        dots += access(dot, R_OK) == 0;
        free(path);
        free(cases[i]);
    }
    free(cases);
    cr_expect_geq(n, 30, "expected the golden cases in %s, found %zu", dir, n);
    cr_expect_geq(dots, 10, "expected at least 10 cases with DOT output, found %zu", dots);
}

ParameterizedTestParameters(golden, cases)
{
    return cases_of("GOLDEN_DIR");
}

ParameterizedTest(struct golden_case *c, golden, cases, .timeout = 180)
{
    const char *dir = getenv("GOLDEN_DIR"), *dot = getenv("DOT");
    cr_assert(dir && dot, "GOLDEN_DIR and DOT must be set");
    const char *name = c->name;
    int update = getenv("DAGC_UPDATE_GOLDEN") && atoi(getenv("DAGC_UPDATE_GOLDEN"));
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.dag", dir, name);
    char *src = slurp(path, NULL);
    cr_assert_not_null(src, "cannot read %s", path);
    char *tmp = make_temp_dir();
    cr_assert_not_null(tmp);
    char *dtmp = dagc_path(tmp);

    char *args[64];
    int argc = 0;
    const char *given = strncmp(src, "// args:", 8) == 0 ? src + 8 : NULL;
    if (given) {
        char line[512];
        size_t l = strcspn(given, "\n");
        snprintf(line, sizeof line, "%.*s", (int)l, given);
        for (char *w = strtok(line, " "); w && argc < 60; w = strtok(NULL, " "))
            args[argc++] = subst(w, dtmp);
    } else {
        args[argc++] = strdup("--dot");
        args[argc++] = subst("@DOT@", dtmp);
    }
    char file[600];
    snprintf(file, sizeof file, "%s.dag", name);
    args[argc++] = strdup(file);
    args[argc] = NULL;

    spawn_result r;
    run_dagc(dir, args, &r);
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
    cr_expect(expected && strcmp(expected, actual) == 0,
              "golden %s: output differs\n--- expected\n%s--- actual\n%s", name,
              expected ? expected : "(missing file)\n", actual);
    char *dot_exp = slurp(dot_path, NULL);
    cr_expect((dot_exp == NULL) == (dot_out == NULL) &&
                  (!dot_exp || strcmp(dot_exp, dot_out) == 0),
              "golden %s: DOT output differs from %s.dot", name, name);
    if (dot_out) {
        char *why = NULL;
        cr_expect_eq(render(dot, out_dot, tmp, &why), 0,
                     "golden %s: dot -Tsvg failed or warned: %s", name, why ? why : "");
        free(why);
    }
    /* All or nothing: a failing run leaves no file at all, a successful
     * one no temporary beside its outputs. */
    if (r.status != 0)
        cr_expect_eq(count_entries(tmp), 0, "golden %s: exit %d but left %d file(s) behind",
                     name, r.status, count_entries(tmp));
    else
        cr_expect(!has_temporary(tmp), "golden %s: a temporary was left behind", name);
    free(dot_exp);
    free(expected);
    free(dot_out);
    free(actual);
    spawn_free(&r);
    for (int k = 0; k < argc; k++) free(args[k]);
    remove_dir(tmp);
    free(dtmp);
    free(tmp);
    free(src);
}

/* ---- windows/: dagc.exe on Windows paths ----------------------------- */

static void windows_only(void)
{
    if (!windows_paths()) cr_skip_test("dagc.exe's cases (GOLDEN_PATHS=windows, scripts/windows.sh)");
}

/* TEXT with every FROM replaced by TO (malloc'd). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t nf = strlen(from), nt = strlen(to), n = 0;
    for (const char *p = text; (p = strstr(p, from)); p += nf) n++;
    char *out = malloc(strlen(text) + n * nt + 1), *o = out;
    cr_assert_not_null(out);
    for (const char *p = text, *q; ; p = q + nf) {
        q = strstr(p, from);
        size_t l = q ? (size_t)(q - p) : strlen(p);
        memcpy(o, p, l);
        o += l;
        if (!q) break;
        memcpy(o, to, nt);
        o += nt;
    }
    *o = 0;
    return out;
}

ParameterizedTestParameters(windows, golden_c)
{
    return cases_of("GOLDEN_C_DIR");
}

/* The golden_c cases given as golden_c\NAME.dag from tests\compiler into
 * an absolute Windows -o directory: the C and header byte for byte as on
 * Linux, the generated comment naming the input as given (the only
 * difference allowed, "paths aside"), a costs file beside a case given
 * with `--costs` as golden_c.c does. */
ParameterizedTest(struct golden_case *c, windows, golden_c, .timeout = 180)
{
    windows_only();
    const char *gc = getenv("GOLDEN_C_DIR");
    cr_assert_not_null(gc, "GOLDEN_C_DIR must be set");
    char given[300], base[300], parent[1200];
    snprintf(given, sizeof given, "golden_c\\%s.dag", c->name);
    snprintf(base, sizeof base, "%s.dag", c->name);
    snprintf(parent, sizeof parent, "%s/..", gc);
    char *tmp = make_temp_dir(), *dtmp = dagc_path(tmp);
    /* NAME.costs or NAME.trace.json beside it: `--costs` that file, as
     * golden_c.c gives it on Linux (the tables' measured costs). */
    char costs[300] = "", probe[1500];
    for (int k = 0; k < 2 && !costs[0]; k++) {
        const char *ext = k ? ".trace.json" : ".costs";
        snprintf(probe, sizeof probe, "%s/%s%s", gc, c->name, ext);
        FILE *f = fopen(probe, "rb");
        if (f) {
            fclose(f);
            snprintf(costs, sizeof costs, "golden_c\\%s%s", c->name, ext);
        }
    }
    spawn_result r;
    if (costs[0])
        run_dagc(parent, (char *[]){"-o", dtmp, "--costs", costs, given, NULL}, &r);
    else
        run_dagc(parent, (char *[]){"-o", dtmp, given, NULL}, &r);
    cr_expect_eq(r.status, 0, "%s: exit %d: %s", given, r.status, r.err);
    static const char *const exts[] = {".c", ".h"};
    for (int i = 0; i < 2; i++) {
        char file[300];
        snprintf(file, sizeof file, "%s%s", c->name, exts[i]);
        char *want = get(gc, file), *got = get(tmp, file);
        cr_assert_not_null(want, "no golden %s", file);
        char *text = got ? replace_all(got, given, base) : NULL;
        cr_expect(text && strcmp(text, want) == 0, "%s differs from golden_c", file);
        free(text);
        free(got);
        free(want);
    }
    spawn_free(&r);
    remove_dir(tmp);
    free(dtmp);
    free(tmp);
}

/* A depfile for a `src\f.dag` input finds the include beside it and keeps
 * the backslashes unescaped. */
Test(windows, depfile_backslashes, .timeout = 180)
{
    windows_only();
    char *tmp = make_temp_dir(), *src = at(tmp, "src");
    cr_assert_eq(mkdir(src, 0700), 0);
    put(src, "game.h", "/* header */\n");
    put(src, "f.dag", "include \"game.h\";\ninclude \"elsewhere.h\";\ngraph f { task a; }\n");
    spawn_result r;
    run_dagc(tmp, (char *[]){"--dot", "f.dot", "-M", "f.d", "src\\f.dag", NULL}, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    EXPECT_FILE(tmp, "f.d", "f.dot: src\\f.dag \\\n  src\\game.h\n");
    spawn_free(&r);
    remove_dir(tmp);
    free(src);
    free(tmp);
}

/* dagc --dot over an existing output that holds "old bytes": INPUT's run
 * exits STATUS and leaves no temporary; the output then holds the golden
 * WANT_DOT's text, or (NULL) the old bytes. */
static void over_existing(const char *input, int status, const char *want_dot)
{
    windows_only();
    const char *dir = getenv("GOLDEN_DIR");
    cr_assert_not_null(dir);
    char *tmp = make_temp_dir(), *out = at(tmp, "out.dot"), *dout = dagc_path(out);
    char *want = want_dot ? get(dir, want_dot) : strdup("old bytes\n");
    cr_assert_not_null(want);
    put(tmp, "out.dot", "old bytes\n");
    spawn_result r;
    run_dagc(dir, (char *[]){"--dot", dout, (char *)input, NULL}, &r);
    cr_expect_eq(r.status, status, "%s", r.err);
    EXPECT_FILE(tmp, "out.dot", want, "%s: out.dot is not what it should be", input);
    cr_expect(!has_temporary(tmp), "%s: a temporary was left behind", input);
    spawn_free(&r);
    remove_dir(tmp);
    free(want);
    free(dout);
    free(out);
    free(tmp);
}

/* An existing output is replaced: the old bytes gone. */
Test(windows, replace_existing, .timeout = 180)
{
    over_existing("ok_comments.dag", 0, "ok_comments.dot");
}

/* A failing run leaves an existing output as it was. */
Test(windows, failure_keeps_existing, .timeout = 180)
{
    over_existing("err_cycle.dag", 1, NULL);
}

/* A scratch directory for the import cases: lib/physics.dag and a second
 * file with the same content, lib/physics2.dag; inc/audio.dag. */
static char *import_dir(void)
{
    const char *dir = getenv("GOLDEN_DIR");
    cr_assert_not_null(dir);
    char *tmp = make_temp_dir(), *lib = at(tmp, "lib"), *inc = at(tmp, "inc");
    cr_assert_eq(mkdir(lib, 0700), 0);
    cr_assert_eq(mkdir(inc, 0700), 0);
    char *phys = get(dir, "lib/physics.dag");
    cr_assert_not_null(phys);
    put(lib, "physics.dag", phys);
    put(lib, "physics2.dag", phys);
    put(inc, "audio.dag", "graph audio { task mix; }\n");
    free(phys);
    free(inc);
    free(lib);
    return tmp;
}

/* One file under two spellings (a backslash, other letter case) is loaded
 * once; the input given as an absolute Windows path. */
Test(windows, import_once_per_file, .timeout = 180)
{
    windows_only();
    char *tmp = import_dir(), *once = at(tmp, "once.dag"), *donce = dagc_path(once);
    put(tmp, "once.dag",
        "import \"lib\\\\physics.dag\";\nimport \"LIB/Physics.DAG\";\ngraph g { task t; }\n");
    spawn_result r;
    run_dagc(tmp, (char *[]){"--check", donce, NULL}, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    remove_dir(tmp);
    free(donce);
    free(once);
    free(tmp);
}

/* Another file with the same content is not the same file: its graph is
 * defined twice, and the diagnostics name both with '/', as on Linux. */
Test(windows, import_two_files, .timeout = 180)
{
    windows_only();
    char *tmp = import_dir();
    put(tmp, "dup.dag",
        "import \"lib\\\\physics.dag\";\nimport \"lib/physics2.dag\";\ngraph g { task t; }\n");
    spawn_result r;
    run_dagc(tmp, (char *[]){"--check", "dup.dag", NULL}, &r);
    cr_expect_eq(r.status, 1, "%s", r.err);
    cr_expect(strstr(r.err, "graph 'physics' is defined twice") != NULL, "%s", r.err);
    /* (after the line that names the importer) */
    cr_expect(strncmp(r.err, "In file imported from dup.dag:2:\nlib/physics2.dag:", 50) == 0, "%s", r.err);
    cr_expect(strstr(r.err, "lib/physics.dag:6:7: note") != NULL, "%s", r.err);
    spawn_free(&r);
    remove_dir(tmp);
    free(tmp);
}

/* -I as an absolute Windows path. */
Test(windows, import_dir_windows_path, .timeout = 180)
{
    windows_only();
    char *tmp = import_dir(), *inc = at(tmp, "inc"), *dinc = dagc_path(inc);
    put(tmp, "useinc.dag", "import \"audio.dag\";\ngraph h { task t; }\n");
    spawn_result r;
    run_dagc(tmp, (char *[]){"-I", dinc, "--check", "useinc.dag", NULL}, &r);
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    remove_dir(tmp);
    free(dinc);
    free(inc);
    free(tmp);
}
