/*
 * suggest.c - spelling suggestions: the capped edit distance that "did you
 * mean" hints rank names by (util.h).
 *
 * A suggestion compares one name with every name of its kind, so a graph of
 * 100,000 names pays for each unknown one 100,000 times (issue 36). Each
 * comparison is kept small: names whose lengths differ by more than the
 * distance still of interest are skipped unread; the prefix and suffix two
 * names share are stripped (they change no edit distance, and generated
 * names share long ones); what is left goes through a Levenshtein table
 * only along its diagonal band (a cell further off it costs more than the
 * cap), row by row, stopping as soon as a row holds nothing under the cap.
 * The cap shrinks to one below the best distance found. And a budget of
 * table cells bounds one suggestion whatever the names: past it the search
 * stops and keeps the best found so far.
 */
#include "util.h"

#include <stdint.h>
#include <string.h>

/* Longer names get no suggestion (and cost nothing). */
#define MAXLEN 64

/* DG_SUGGEST_BUDGET (util.h), the table cells one suggestion may spend,
 * is some milliseconds: the longest names cost at most 64 x 7 cells each,
 * so a search over 18,000 of them fits entirely, and one over names shorter
 * than these or sharing a prefix or suffix with the one looked for fits
 * many more. */

/* The distance between s (m bytes) and t (n bytes), or cap + 1 when it is
 * more than cap; adds the cells computed to *cells. */
static unsigned banded(const char *s, size_t m, const char *t, size_t n, unsigned cap,
                       uint64_t *cells)
{
    /* Shared prefix and suffix: not part of any cheapest edit. */
    while (m && n && *s == *t) s++, t++, m--, n--;
    while (m && n && s[m - 1] == t[n - 1]) m--, n--;
    size_t d = m > n ? m - n : n - m;
    if (d > cap) return cap + 1;
    if (!m || !n) return (unsigned)(m + n);
    unsigned big = cap + 1, ra[MAXLEN + 1], rb[MAXLEN + 1], *prev = ra, *cur = rb;
    for (size_t j = 0; j <= n; j++) prev[j] = j <= cap ? (unsigned)j : big;
    for (size_t i = 1; i <= m; i++) {
        /* Row i: the cells with |i - j| <= cap. Cell (i - 1, hi) was set
         * to big by the row before when it was past that row's band. */
        size_t lo = i > cap ? i - cap : 1, hi = i + cap < n ? i + cap : n;
        unsigned rowmin = cur[lo - 1] = lo == 1 && i <= cap ? (unsigned)i : big;
        for (size_t j = lo; j <= hi; j++) {
            unsigned v = prev[j - 1] + (s[i - 1] != t[j - 1]);
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (v > big) v = big;
            cur[j] = v;
            if (v < rowmin) rowmin = v;
        }
        if (hi < n) cur[hi + 1] = big;
        *cells += hi - lo + 1;
        if (rowmin > cap) return big;
        unsigned *x = prev;
        prev = cur;
        cur = x;
    }
    return prev[n];
}

unsigned dg_edit_distance(const char *a, const char *b, unsigned cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > MAXLEN || lb > MAXLEN) return cap + 1; /* long names: no suggestion */
    uint64_t cells = 0;
    return banded(a, la, b, lb, cap, &cells);
}

/* The closest of n candidate names, for "did you mean": the first of those
 * at the smallest distance, within a cap that grows with the name's length,
 * and never one that replaces every letter ('x' for 'a'). */
const char *dg_suggest(const char *name, const char *const *cands, size_t n)
{
    uint64_t cells = 0;
    return dg_suggest_counted(name, cands, n, &cells);
}

const char *dg_suggest_counted(const char *name, const char *const *cands, size_t n,
                               uint64_t *cells)
{
    size_t len = strlen(name);
    if (len > MAXLEN) return NULL;
    unsigned cap = len <= 2 ? 1 : len <= 5 ? 2 : 3;
    unsigned best = cap + 1;
    const char *bestname = NULL;
    uint64_t spent = 0;
    for (size_t i = 0; i < n && best > 0 && spent < DG_SUGGEST_BUDGET; i++) {
        if (!cands[i]) continue;
        unsigned c = best - 1 < cap ? best - 1 : cap;
        /* The length first, unread past what could still be close enough. */
        size_t lc = 0, most = len + c + 1;
        while (lc < most && cands[i][lc]) lc++;
        if (lc > MAXLEN || (lc > len ? lc - len : len - lc) > c) continue;
        unsigned dist = banded(name, len, cands[i], lc, c, &spent);
        if (dist < best && dist < len && dist < lc) {
            best = dist;
            bestname = cands[i];
        }
    }
    *cells += spent;
    return bestname;
}
