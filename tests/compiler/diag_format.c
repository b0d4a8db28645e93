/*
 * diag_format.c - the diagnostics sink's two formats through its API:
 * notes and hints attach to the error or warning before them, in text
 * ("  hint: ...") and in JSON (each diagnostic's "notes" and "hint"); a
 * dropped error drops its notes and hint; JSON strings are escaped and a
 * byte that is not UTF-8 becomes U+FFFD, so the document always parses.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

/* A sink writing into memory: buf holds what d wrote once closed. */
typedef struct capture {
    char *buf;
    size_t len;
    FILE *f;
    dg_diag d;
} capture;

static void capture_open(capture *c, int format)
{
    c->buf = NULL;
    c->len = 0;
    c->f = open_memstream(&c->buf, &c->len);
    cr_assert_not_null(c->f);
    dg_diag_init(&c->d, c->f, NULL);
    c->d.format = format;
}

/* Finishes the diagnostics and returns what was written. */
static char *capture_close(capture *c)
{
    dg_diag_finish(&c->d);
    fclose(c->f);
    return c->buf;
}

static src_pos at(const char *file, unsigned line, unsigned col)
{
    src_pos p = {file, line, col};
    return p;
}

static void report(dg_diag *d)
{
    dg_error(d, at("a.dag", 3, 10), "'%s' and '%s' may run at the same time", "ai", "physics");
    dg_note(d, at("a.dag", 2, 5), "the other access is here");
    dg_hint(d, "add 'after %s' to task '%s'", "physics", "ai");
    dg_hint(d, "or order them through a gate");
    dg_warning(d, at("a.dag", 7, 1), "gate 'x' is never waited for");
    dg_error_plain(d, "cannot write 'out.c'");
}

Test(diag_format, text_hints_follow_their_diagnostic)
{
    capture c;
    capture_open(&c, DG_DIAG_TEXT);
    report(&c.d);
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf,
        "a.dag:3:10: error: 'ai' and 'physics' may run at the same time\n"
        "a.dag:2:5: note: the other access is here\n"
        "  hint: add 'after physics' to task 'ai'\n"
        "  hint: or order them through a gate\n"
        "a.dag:7:1: warning: gate 'x' is never waited for\n"
        "dagc: error: cannot write 'out.c'\n");
    cr_expect_eq(c.d.nerrors, 2);
    cr_expect_eq(c.d.nwarnings, 1);
    free(buf);
}

Test(diag_format, json_carries_notes_and_the_hint)
{
    capture c;
    capture_open(&c, DG_DIAG_JSON);
    report(&c.d);
    cr_expect_eq(c.len, 0, "JSON is written at the end");
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf,
        "{\"format\":\"dagc-diagnostics\",\"version\":1,\"diagnostics\":[\n"
        "{\"severity\":\"error\",\"message\":\"'ai' and 'physics' may run at the same time\","
        "\"file\":\"a.dag\",\"line\":3,\"column\":10,"
        "\"notes\":[{\"message\":\"the other access is here\",\"file\":\"a.dag\",\"line\":2,\"column\":5}],"
        "\"hint\":\"add 'after physics' to task 'ai'; or order them through a gate\"},\n"
        "{\"severity\":\"warning\",\"message\":\"gate 'x' is never waited for\","
        "\"file\":\"a.dag\",\"line\":7,\"column\":1,\"notes\":[],\"hint\":null},\n"
        "{\"severity\":\"error\",\"message\":\"cannot write 'out.c'\","
        "\"file\":null,\"line\":null,\"column\":null,\"notes\":[],\"hint\":null}\n"
        "]}\n");
    cr_expect_null(c.d.json, "finish frees what was collected");
    free(buf);
}

Test(diag_format, json_escapes)
{
    capture c;
    capture_open(&c, DG_DIAG_JSON);
    dg_error(&c.d, at("dir\\\"q\".dag", 1, 1), "quote \" tab \t nl \n ctl \x01 del \x7f");
    dg_error(&c.d, at("caf\xc3\xa9.dag", 1, 2), "bad \xc3 utf8 \xe2\x82 \xed\xa0\x80 ok \xe2\x82\xac");
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf,
        "{\"format\":\"dagc-diagnostics\",\"version\":1,\"diagnostics\":[\n"
        "{\"severity\":\"error\",\"message\":\"quote \\\" tab \\t nl \\n ctl \\u0001 del \\u007f\","
        "\"file\":\"dir\\\\\\\"q\\\".dag\",\"line\":1,\"column\":1,\"notes\":[],\"hint\":null},\n"
        "{\"severity\":\"error\",\"message\":\"bad \\ufffd utf8 \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd ok \xe2\x82\xac\","
        "\"file\":\"caf\xc3\xa9.dag\",\"line\":1,\"column\":2,\"notes\":[],\"hint\":null}\n"
        "]}\n");
    free(buf);
}

Test(diag_format, dropped_errors_drop_their_notes_and_hints)
{
    for (int fmt = DG_DIAG_TEXT; fmt <= DG_DIAG_JSON; fmt++) {
        capture c;
        capture_open(&c, fmt);
        c.d.max_errors = 1;
        dg_error(&c.d, at("a.dag", 1, 1), "first");
        dg_hint(&c.d, "kept");
        dg_error(&c.d, at("a.dag", 2, 1), "second");
        dg_note(&c.d, at("a.dag", 2, 2), "dropped note");
        dg_hint(&c.d, "dropped hint");
        char *buf = capture_close(&c);
        cr_expect(strstr(buf, "kept") != NULL, "%s", buf);
        cr_expect(strstr(buf, "too many errors") != NULL, "%s", buf);
        cr_expect(strstr(buf, "second") == NULL && strstr(buf, "dropped") == NULL, "%s", buf);
        free(buf);
    }
}

Test(diag_format, json_with_nothing_to_say)
{
    capture c;
    capture_open(&c, DG_DIAG_JSON);
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf, "{\"format\":\"dagc-diagnostics\",\"version\":1,\"diagnostics\":[]}\n");
    free(buf);
}
