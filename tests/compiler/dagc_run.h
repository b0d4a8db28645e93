/*
 * dagc_run.h - what the Criterion tests that drive the dagc binary share:
 * the binary ($DAGC), writing and reading files in a scratch directory,
 * RUN (dagc with arguments, output captured) and the checks on a run
 * (RUN_EXPECT_ERR) and a file (EXPECT_FILE), and the sorted list of a
 * directory's NAME.dag cases. Included by one test file per executable;
 * static inline, so a file that uses only some of it builds warning-free.
 */
#ifndef DAGC_TEST_DAGC_RUN_H
#define DAGC_TEST_DAGC_RUN_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spawn.h"

static inline const char *dagc(void)
{
    const char *p = getenv("DAGC");
    cr_assert_not_null(p, "DAGC must be set");
    return p;
}

/* DIR/NAME (malloc'd). */
static inline char *at(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    cr_assert_not_null(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static inline void put(const char *dir, const char *name, const char *text)
{
    char *path = at(dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    free(path);
}

/* DIR/NAME's text (malloc'd); NULL if missing. */
static inline char *get(const char *dir, const char *name)
{
    char *path = at(dir, name);
    char *s = slurp(path, NULL);
    free(path);
    return s;
}

/* Runs dagc with the given arguments in CWD (NULL: unchanged) into the
 * spawn_result R. */
#define RUN(r, cwd, ...) do { \
        char *argv_[] = {(char *)dagc(), __VA_ARGS__, NULL}; \
        cr_assert_eq(spawn_capture(cwd, argv_, &(r)), 0); \
    } while (0)

/* Runs dagc like RUN and expects exit STATUS with WANT in its stderr. */
#define RUN_EXPECT_ERR(cwd_, status_, want_, ...) do { \
        spawn_result er_; \
        RUN(er_, cwd_, __VA_ARGS__); \
        cr_expect_eq(er_.status, (status_), "%s", er_.err); \
        cr_expect(strstr(er_.err, (want_)) != NULL, "%s", er_.err); \
        spawn_free(&er_); \
    } while (0)

/* Expects DIR/NAME to exist and hold exactly WANT (then, optionally, the
 * failure message and its arguments). */
#define EXPECT_FILE(dir_, name_, ...) do { \
        char *got_ = get(dir_, name_); \
        cr_assert_not_null(got_, "no %s", name_); \
        cr_expect_str_eq(got_, __VA_ARGS__); \
        free(got_); \
    } while (0)

static inline int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The NAMEs of DIR's NAME.dag files, sorted (malloc'd, as is each name). */
static inline char **list_cases(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".dag") != 0) continue;
        if (*n == cap) v = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof *v);
        v[(*n)++] = strndup(e->d_name, l - 4);
    }
    closedir(d);
    qsort(v, *n, sizeof *v, cmp_str);
    return v;
}

#endif
