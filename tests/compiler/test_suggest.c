/* test_suggest.c - "did you mean" (dagc/suggest.c) as a unit (suite unit):
 * the capped edit distance against a plain Levenshtein table, the choice of
 * a suggestion against the rule it documents (the first name at the
 * smallest distance within the cap, never one replacing every letter), on
 * seeded random names; and its work on 100,000 names sharing a 56-character
 * prefix (issue 36: each unknown name used to compare every name in full,
 * 64 x 64 cells), bounded by the names and by DG_SUGGEST_BUDGET. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The whole table, no shortcut. */
static unsigned levenshtein(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    unsigned row[300];
    for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j], v = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            if (up + 1 < v) v = up + 1;
            row[j] = v;
            diag = up;
        }
    }
    return row[lb];
}

static unsigned capped(const char *a, const char *b, unsigned cap)
{
    if (strlen(a) > 64 || strlen(b) > 64) return cap + 1;
    unsigned d = levenshtein(a, b);
    return d > cap ? cap + 1 : d;
}

/* The rule dg_suggest documents, checked name by name in full. */
static const char *reference(const char *name, const char *const *cands, size_t n)
{
    size_t len = strlen(name);
    unsigned cap = len <= 2 ? 1 : len <= 5 ? 2 : 3, best = cap + 1;
    const char *bestname = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        unsigned d = capped(name, cands[i], cap);
        if (d < best && d < len && d < strlen(cands[i])) {
            best = d;
            bestname = cands[i];
        }
    }
    return bestname;
}

static uint64_t rng = 88172645463325252ull;
static unsigned next(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A random name over a small alphabet (so that near misses are common),
 * from a shared prefix, a middle and a shared suffix. */
static void random_name(char *out, const char *pre, const char *suf, unsigned maxmid)
{
    static const char abc[] = "abcx_1";
    size_t k = strlen(pre);
    memcpy(out, pre, k);
    unsigned m = next(maxmid + 1);
    for (unsigned i = 0; i < m; i++) out[k++] = abc[next(sizeof abc - 1)];
    strcpy(out + k, suf);
}

/* A copy of s with up to e random edits. */
static void mutate(char *out, const char *s, unsigned e)
{
    strcpy(out, s);
    for (unsigned k = next(e + 1); k > 0; k--) {
        size_t n = strlen(out), at = n ? next((unsigned)n + 1) : 0;
        switch (next(3)) {
        case 0: /* insert */
            if (n < 80) {
                memmove(out + at + 1, out + at, n - at + 1);
                out[at] = "abx"[next(3)];
            }
            break;
        case 1: /* delete */
            if (at < n) memmove(out + at, out + at + 1, n - at);
            break;
        default: /* replace */
            if (at < n) out[at] = "ab_"[next(3)];
            break;
        }
    }
}

static const char *const prefixes[] = {"", "p", "physics_", "shared_prefix_shared_prefix_shared_prefix_shared_prefix_"};
static const char *const suffixes[] = {"", "s", "_task"};

Test(suggest, distance_is_levenshtein_capped)
{
    char a[128], b[128];
    for (int it = 0; it < 200000; it++) {
        random_name(a, prefixes[next(4)], suffixes[next(3)], 12);
        if (next(2)) mutate(b, a, 4);
        else random_name(b, prefixes[next(4)], suffixes[next(3)], 12);
        unsigned cap = next(6);
        cr_assert_eq(dg_edit_distance(a, b, cap), capped(a, b, cap), "'%s' '%s' cap %u: %u, not %u",
                     a, b, cap, dg_edit_distance(a, b, cap), capped(a, b, cap));
    }
    /* Past 64 bytes: never close, even to itself. */
    char l[80];
    memset(l, 'a', 65);
    l[65] = 0;
    cr_assert_eq(dg_edit_distance(l, l, 3), 4u);
    cr_assert_eq(dg_edit_distance("", "", 0), 0u);
    cr_assert_eq(dg_edit_distance("abc", "", 3), 3u);
    cr_assert_eq(dg_edit_distance("kitten", "sitting", 3), 3u);
    cr_assert_eq(dg_edit_distance("kitten", "sitting", 2), 3u);
}

Test(suggest, same_choice_as_the_rule)
{
    enum { N = 60 };
    static char names[N][128];
    const char *cands[N];
    char look[128];
    for (int it = 0; it < 3000; it++) {
        const char *pre = prefixes[next(4)], *suf = suffixes[next(3)];
        size_t n = 1 + next(N);
        for (size_t i = 0; i < n; i++) {
            random_name(names[i], pre, suf, 6);
            cands[i] = next(20) ? names[i] : NULL;
        }
        mutate(look, names[next((unsigned)n)], 3);
        const char *got = dg_suggest(look, cands, n), *want = reference(look, cands, n);
        cr_assert(got == want, "'%s': '%s', not '%s'", look, got ? got : "(none)",
                  want ? want : "(none)");
    }
    const char *frame[] = {"input", "physics", "ai", "render", NULL, "audio"};
    cr_assert_str_eq(dg_suggest("phisics", frame, 6), "physics");
    cr_assert_str_eq(dg_suggest("rendr", frame, 6), "render");
    cr_assert_null(dg_suggest("x", frame, 6));     /* 'ai' would replace every letter */
    cr_assert_null(dg_suggest("network", frame, 6));
}

/* 100,000 names of 63 bytes sharing 56, each unknown name one edit from one
 * of them: the right one is found, and each search reads well under one row
 * of the table per name (the full table is 64 x 64 cells). */
Test(suggest, shared_prefix_at_scale)
{
    enum { N = 100000 };
    const char *pre = prefixes[3];
    cr_assert_eq(strlen(pre), 56u);
    char *buf = malloc((size_t)N * 64);
    const char **cands = malloc(N * sizeof *cands);
    for (size_t i = 0; i < N; i++) {
        snprintf(buf + i * 64, 64, "%st%06zu", pre, i);
        cands[i] = buf + i * 64;
    }
    for (int k = 0; k < 20; k++) {
        size_t target = (size_t)(k + 1) * N / 21;
        char look[80];
        snprintf(look, sizeof look, "%sx", cands[target]);
        uint64_t cells = 0;
        const char *got = dg_suggest_counted(look, cands, N, &cells);
        cr_assert(got == cands[target], "'%s': '%s'", look, got ? got : "(none)");
        cr_assert_lt(cells, (uint64_t)N * 8, "'%s': %llu cells", look, (unsigned long long)cells);
    }
    free(cands);
    free(buf);
}

/* The worst the band allows: names of 64 bytes that differ from the one
 * looked for at both ends and once in the middle (no prefix or suffix to
 * strip, and no row over the cap before the middle): the search stops at
 * the budget, and still suggests the best name it saw. */
Test(suggest, budget_bounds_the_worst_case)
{
    enum { N = 100000 };
    char *buf = malloc((size_t)N * 72);
    const char **cands = malloc(N * sizeof *cands);
    for (size_t i = 0; i < N; i++) {
        char *s = buf + i * 72;
        memset(s, 'm', 64);
        s[64] = 0;
        s[0] = 'a';
        s[63] = 'z';
        s[30 + i % 30] = 'b';
        cands[i] = s;
    }
    char look[72];
    memset(look, 'm', 64);
    look[64] = 0;
    look[0] = 'q';
    look[63] = 'y';
    uint64_t cells = 0;
    const char *got = dg_suggest_counted(look, cands, N, &cells);
    cr_assert(got == cands[0], "%s", got ? got : "(none)");
    cr_assert_lt(cells, DG_SUGGEST_BUDGET + 64 * 8, "%llu cells", (unsigned long long)cells);
    cr_assert_gt(cells, DG_SUGGEST_BUDGET / 2, "%llu cells", (unsigned long long)cells);
    free(cands);
    free(buf);
}
