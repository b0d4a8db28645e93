/*
 * suggest.c - spelling suggestions: the capped edit distance that "did you
 * mean" hints rank names by (util.h).
 */
#include "util.h"

#include <string.h>

unsigned dg_edit_distance(const char *a, const char *b, unsigned cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return cap + 1; /* long names: no suggestion */
    if ((la > lb ? la - lb : lb - la) > cap) return cap + 1;
    unsigned row[65];
    for (size_t j = 0; j <= lb; j++) row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0], best;
        row[0] = (unsigned)i;
        best = row[0];
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned v = diag + (a[i - 1] != b[j - 1]);
            if (row[j - 1] + 1 < v) v = row[j - 1] + 1;
            if (up + 1 < v) v = up + 1;
            row[j] = v;
            diag = up;
            if (v < best) best = v;
        }
        if (best > cap) return cap + 1;
    }
    return row[lb] > cap ? cap + 1 : row[lb];
}

/* The closest of n candidate names, for "did you mean". */
const char *dg_suggest(const char *name, const char *const *cands, size_t n)
{
    size_t len = strlen(name);
    unsigned cap = len <= 2 ? 1 : len <= 5 ? 2 : 3;
    unsigned best = cap + 1;
    const char *bestname = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!cands[i]) continue;
        unsigned dist = dg_edit_distance(name, cands[i], best - 1 < cap ? best - 1 : cap);
        /* Replacing every letter is no suggestion ('x' for 'a'). */
        if (dist < best && dist < len && dist < strlen(cands[i])) {
            best = dist;
            bestname = cands[i];
        }
    }
    return bestname;
}
