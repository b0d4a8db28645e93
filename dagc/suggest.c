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
