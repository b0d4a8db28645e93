/*
 * robust.c - hostile input never crashes the front end: seeded random byte
 * strings and random token soups (thousands of each) must compile to either
 * success or at least one error diagnostic, and the back ends must accept
 * whatever compiled. A crash or hang fails the test (Criterion isolates it).
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "emit_dot.h"
#include "gen.h"
#include "stats.h"

static void check_one(const char *buf, size_t len, int *nok, int *nerr)
{
    char *diag = NULL;
    size_t dlen = 0;
    FILE *df = open_memstream(&diag, &dlen);
    dagc_opts o = {.diag_out = df};
    ir_program *p = NULL;
    int rc = dagc_compile_memory("fuzz.dag", buf, len, &o, &p);
    fclose(df);
    if (rc == DAGC_OK) {
        cr_assert_not_null(p);
        FILE *sink = fopen("/dev/null", "w");
        dg_dot_opts dopt = {1, NULL};
        cr_assert_eq(dg_emit_dot(sink, p, &dopt), 0);
        dg_print_stats(sink, p);
        fclose(sink);
        dagc_program_free(p);
        (*nok)++;
    } else {
        cr_assert_eq(rc, DAGC_EINPUT, "unexpected status %d", rc);
        cr_assert_null(p);
        cr_assert(strstr(diag, "error:") != NULL, "failed without an error message for:\n%.*s",
                  (int)len, buf);
        (*nerr)++;
    }
    free(diag);
}

Test(robust, random_bytes, .timeout = 120)
{
    int cases = scaled(3000), ok = 0, err = 0;
    rng r = {12345};
    char buf[512];
    for (int c = 0; c < cases; c++) {
        size_t len = rng_below(&r, sizeof buf);
        /* Mostly printable ASCII (so some input goes past the lexer), with
         * any byte, NUL included, mixed in. */
        for (size_t i = 0; i < len; i++) {
            uint32_t k = rng_below(&r, 10);
            buf[i] = k < 7 ? (char)(0x20 + rng_below(&r, 95)) : k < 8 ? '\n' : (char)rng_below(&r, 256);
        }
        check_one(buf, len, &ok, &err);
    }
    cr_assert_eq(ok + err, cases);
}

static const char *const soup[] = {
    "graph", "task", "gate", "include", "after", "on", "main", "hot", "fiber",
    "parallel", "grain", "call", "cost", "when", "and", "or", "a", "b", "c", "g",
    "x_1", "int", "__r", "_Q", "0", "1", "256", "4294967296", "1ms", "2.5us", "3s",
    "9x", "1.", "\"s.h\"", "\"bad\\q\"", "\"open", "{", "}", "(", ")", ";", ",", "=",
    "/*", "*/", "//", "\n", "@", "\xc3\xa9", "\xef\xbb\xbf", "g_run", "a_count",
};

Test(robust, token_soup, .timeout = 120)
{
    int cases = scaled(4000), ok = 0, err = 0;
    rng r = {987654321};
    char buf[4096];
    for (int c = 0; c < cases; c++) {
        size_t len = 0;
        /* Half the cases start like a real graph so the soup reaches sema. */
        if (c % 2) len += (size_t)snprintf(buf, sizeof buf, "graph g { task a; ");
        int ntok = (int)rng_below(&r, 80);
        for (int t = 0; t < ntok; t++) {
            const char *s = soup[rng_below(&r, sizeof soup / sizeof *soup)];
            size_t l = strlen(s);
            if (len + l + 2 >= sizeof buf) break;
            memcpy(buf + len, s, l);
            len += l;
            if (rng_below(&r, 4)) buf[len++] = ' ';
        }
        if (c % 2 && len + 2 < sizeof buf) buf[len++] = '}';
        check_one(buf, len, &ok, &err);
    }
    cr_assert_eq(ok + err, cases);
}

Test(robust, mutated_valid_programs, .timeout = 120)
{
    static const char base[] =
        "include \"game.h\";\n"
        "graph frame(struct game *) {\n"
        "    task input on main cost 150us;\n"
        "    task physics after input cost 2ms;\n"
        "    task ai after input hot;\n"
        "    task audio hot fiber;\n"
        "    gate sim = physics and ai;\n"
        "    task particles after sim parallel grain 256;\n"
        "    task shadows after sim or ai when shadows_on;\n"
        "    task render after particles, shadows on main;\n"
        "    task present after render, audio on main call swap;\n"
        "}\n";
    int cases = scaled(3000), ok = 0, err = 0;
    rng r = {4242};
    char buf[sizeof base + 64];
    for (int c = 0; c < cases; c++) {
        size_t len = sizeof base - 1;
        memcpy(buf, base, len);
        int muts = 1 + (int)rng_below(&r, 4);
        for (int m = 0; m < muts; m++) {
            size_t at = rng_below(&r, (uint32_t)len);
            switch (rng_below(&r, 3)) {
            case 0: buf[at] = (char)(0x20 + rng_below(&r, 95)); break;   /* replace */
            case 1: memmove(buf + at, buf + at + 1, len - at - 1); len--; break; /* delete */
            default:
                if (len + 1 < sizeof buf) {                             /* duplicate */
                    memmove(buf + at + 1, buf + at, len - at);
                    len++;
                }
            }
        }
        check_one(buf, len, &ok, &err);
    }
    cr_assert_eq(ok + err, cases);
    cr_assert_gt(ok, 0, "some mutations stay valid");
    cr_assert_gt(err, 0, "most mutations are errors");
}

Test(robust, limits)
{
    int ok = 0, err = 0;
    /* Deep parentheses: within the limit compiles, past it is an error. */
    size_t n = 256;
    char *b = malloc(4 * n + 64);
    size_t l = (size_t)sprintf(b, "graph g { task a; task b after ");
    for (size_t i = 0; i < n; i++) b[l++] = '(';
    b[l++] = 'a';
    for (size_t i = 0; i < n; i++) b[l++] = ')';
    l += (size_t)sprintf(b + l, "; }");
    check_one(b, l, &ok, &err);
    cr_assert_eq(ok, 1);
    free(b);
    n = 100000;
    b = malloc(2 * n + 64);
    l = (size_t)sprintf(b, "graph g { task a after ");
    for (size_t i = 0; i < n; i++) b[l++] = '(';
    check_one(b, l, &ok, &err);
    cr_assert_eq(err, 1);
    /* A very long chain of `and` stays flat (no deep recursion). */
    l = (size_t)sprintf(b, "graph g { task a; task b after a");
    for (size_t i = 0; i < 20000 && l + 8 < 2 * n; i++) l += (size_t)sprintf(b + l, " and a");
    l += (size_t)sprintf(b + l, "; }");
    check_one(b, l, &ok, &err);
    cr_assert_eq(ok, 2);
    free(b);
}
