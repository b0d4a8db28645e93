/*
 * outset.c - the output set's commit (dagc/output.c) with a rename made to
 * fail at each position in turn: every file replaced before it gets its old
 * bytes back, a file created before it is removed, and nothing (no
 * temporary, no kept copy) is left behind. Without a failure, every output
 * is replaced and the kept copies are gone.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output.h"
#include "spawn.h"

static char *at(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* a (exists), b (missing), c (exists): replaced, created, replaced. */
static int commit_with_failure_at(const char *tmp, int fail_at, char *err, size_t errsz)
{
    char *p[3] = {at(tmp, "a"), at(tmp, "b"), at(tmp, "c")};
    put(p[0], "OLD A\n");
    unlink(p[1]);
    put(p[2], "OLD C\n");
    dg_outset s;
    dg_outset_init(&s, NULL, 0);
    s.fail_rename_at = fail_at;
    const char *text[3] = {"NEW A\n", "NEW B\n", "NEW C\n"};
    for (int i = 0; i < 3; i++) {
        FILE *f = dg_outset_add(&s, p[i], err, errsz);
        cr_assert_not_null(f, "%s", err);
        fputs(text[i], f);
        cr_assert_eq(dg_outset_finish(&s, err, errsz), 0, "%s", err);
    }
    int rc = dg_outset_commit(&s, err, errsz);
    for (int i = 0; i < 3; i++) free(p[i]);
    return rc;
}

static char *get(const char *dir, const char *name)
{
    char *p = at(dir, name);
    char *s = slurp(p, NULL);
    free(p);
    return s;
}

Test(outset, a_failed_rename_puts_everything_back)
{
    for (int fail_at = 1; fail_at <= 3; fail_at++) {
        char *tmp = make_temp_dir();
        char err[512] = "";
        cr_expect_eq(commit_with_failure_at(tmp, fail_at, err, sizeof err), -1);
        cr_expect(strstr(err, "Input/output error") != NULL, "%s", err);
        char *a = get(tmp, "a"), *b = get(tmp, "b"), *c = get(tmp, "c");
        cr_expect_str_eq(a, "OLD A\n", "failure at rename %d", fail_at);
        cr_expect_null(b, "failure at rename %d: b was created", fail_at);
        cr_expect_str_eq(c, "OLD C\n", "failure at rename %d", fail_at);
        cr_expect_eq(count_entries(tmp), 2, "failure at rename %d: leftovers", fail_at);
        free(a); free(b); free(c);
        remove_dir(tmp);
        free(tmp);
    }
}

Test(outset, a_commit_replaces_everything)
{
    char *tmp = make_temp_dir();
    char err[512] = "";
    cr_assert_eq(commit_with_failure_at(tmp, 0, err, sizeof err), 0, "%s", err);
    char *a = get(tmp, "a"), *b = get(tmp, "b"), *c = get(tmp, "c");
    cr_expect_str_eq(a, "NEW A\n");
    cr_expect_str_eq(b, "NEW B\n");
    cr_expect_str_eq(c, "NEW C\n");
    cr_expect_eq(count_entries(tmp), 3, "no temporary or kept copy left");
    free(a); free(b); free(c);
    remove_dir(tmp);
    free(tmp);
}

Test(outset, abort_touches_nothing)
{
    char *tmp = make_temp_dir();
    char *p = at(tmp, "a");
    put(p, "OLD\n");
    dg_outset s;
    dg_outset_init(&s, NULL, 0);
    char err[512];
    FILE *f = dg_outset_add(&s, p, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    fputs("NEW\n", f);
    cr_expect_eq(count_entries(tmp), 2, "the temporary exists while writing");
    dg_outset_abort(&s);
    char *a = slurp(p, NULL);
    cr_expect_str_eq(a, "OLD\n");
    cr_expect_eq(count_entries(tmp), 1);
    free(a);
    free(p);
    remove_dir(tmp);
    free(tmp);
}

/* Issue 24 item 2: an output whose bytes do not change keeps its file (same
 * inode, same modification time) while the others in the set are replaced;
 * a failed rename still puts the changed ones back. */
static void stat_of(const char *path, struct stat *st)
{
    cr_assert_eq(stat(path, st), 0, "%s", path);
}

static int commit_two(const char *pa, const char *ta, const char *pb, const char *tb, int fail_at)
{
    dg_outset s;
    dg_outset_init(&s, NULL, 0);
    s.fail_rename_at = fail_at;
    char err[512] = "";
    const char *p[2] = {pa, pb}, *t[2] = {ta, tb};
    for (int i = 0; i < 2; i++) {
        FILE *f = dg_outset_add(&s, p[i], err, sizeof err);
        cr_assert_not_null(f, "%s", err);
        fputs(t[i], f);
        cr_assert_eq(dg_outset_finish(&s, err, sizeof err), 0, "%s", err);
    }
    return dg_outset_commit(&s, err, sizeof err);
}

Test(outset, unchanged_bytes_leave_the_file_untouched)
{
    char *tmp = make_temp_dir();
    char *a = at(tmp, "a"), *b = at(tmp, "b");
    put(a, "SAME\n");
    put(b, "OLD B\n");
    /* Back-date both, so that a rewrite shows in the modification time
     * whatever the file system's resolution. */
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    cr_assert_eq(utimensat(AT_FDCWD, a, old, 0), 0);
    cr_assert_eq(utimensat(AT_FDCWD, b, old, 0), 0);
    struct stat sa0, sb0, sa1, sb1;
    stat_of(a, &sa0);
    stat_of(b, &sb0);
    cr_assert_eq(commit_two(a, "SAME\n", b, "NEW B\n", 0), 0);
    stat_of(a, &sa1);
    stat_of(b, &sb1);
    cr_expect_eq(sa1.st_ino, sa0.st_ino, "the unchanged output was renamed over");
    cr_expect_eq(sa1.st_mtime, sa0.st_mtime, "the unchanged output was rewritten");
    cr_expect_neq(sb1.st_ino, sb0.st_ino, "the changed output was not replaced");
    char *gb = slurp(b, NULL);
    cr_expect_str_eq(gb, "NEW B\n");
    free(gb);
    cr_expect_eq(count_entries(tmp), 2, "no temporary left");

    /* The rename of the changed one fails: it gets its old bytes back, the
     * unchanged one is still the same file. */
    cr_assert_eq(commit_two(a, "SAME\n", b, "NEWER B\n", 1), -1);
    stat_of(a, &sa1);
    cr_expect_eq(sa1.st_ino, sa0.st_ino);
    gb = slurp(b, NULL);
    cr_expect_str_eq(gb, "NEW B\n");
    free(gb);
    cr_expect_eq(count_entries(tmp), 2, "no temporary left");
    free(a);
    free(b);
    remove_dir(tmp);
    free(tmp);
}

/* Issue 25 item 6, made deterministic: another run's commit moves the file
 * this run saw as "x.dot" to the name "x.c" (as its renames and the reuse
 * of a freed inode by its next temporary do) between this run's two adds.
 * Two names, two outputs: no "same output file" error, and both commit. */
Test(outset, identities_taken_at_two_moments_are_not_one_output)
{
    char *tmp = make_temp_dir();
    char *dot = at(tmp, "x.dot"), *c = at(tmp, "x.c");
    put(dot, "OLD DOT\n");
    dg_outset s;
    dg_outset_init(&s, NULL, 0);
    char err[512] = "";
    FILE *f = dg_outset_add(&s, dot, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    fputs("NEW DOT\n", f);
    cr_assert_eq(dg_outset_finish(&s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(rename(dot, c), 0);
    f = dg_outset_add(&s, c, err, sizeof err);
    cr_assert_not_null(f, "%s", err);
    fputs("NEW C\n", f);
    cr_assert_eq(dg_outset_finish(&s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dg_outset_commit(&s, err, sizeof err), 0, "%s", err);
    char *gd = slurp(dot, NULL), *gc = slurp(c, NULL);
    cr_expect_str_eq(gd, "NEW DOT\n");
    cr_expect_str_eq(gc, "NEW C\n");
    free(gd);
    free(gc);
    cr_expect_eq(count_entries(tmp), 2, "no temporary left");
    free(dot);
    free(c);
    remove_dir(tmp);
    free(tmp);
}

/* One entry under two spellings (the directory through "." and through a
 * symlink) is still one output. */
Test(outset, one_entry_under_two_spellings_is_one_output)
{
    char *tmp = make_temp_dir();
    char *a = at(tmp, "a"), *dotted = at(tmp, "./a"), *lnkdir = at(tmp, "d"), *via = at(tmp, "d/a");
    cr_assert_eq(symlink(".", lnkdir), 0);
    const char *second[] = {dotted, via};
    for (int i = 0; i < 2; i++) {
        dg_outset s;
        dg_outset_init(&s, NULL, 0);
        char err[512] = "";
        cr_assert_not_null(dg_outset_add(&s, a, err, sizeof err), "%s", err);
        cr_assert_eq(dg_outset_finish(&s, err, sizeof err), 0, "%s", err);
        cr_expect_null(dg_outset_add(&s, second[i], err, sizeof err), "%s", second[i]);
        cr_expect(strstr(err, "name the same output file") != NULL, "%s", err);
        dg_outset_abort(&s);
    }
    free(a);
    free(dotted);
    free(lnkdir);
    free(via);
    remove_dir(tmp);
    free(tmp);
}
