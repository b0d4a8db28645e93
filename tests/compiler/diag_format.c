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
        "{\"format\":\"dagc-diagnostics\",\"version\":2,\"diagnostics\":[\n"
        "{\"severity\":\"error\",\"message\":\"'ai' and 'physics' may run at the same time\",\"flag\":null,"
        "\"file\":\"a.dag\",\"line\":3,\"column\":10,\"end_line\":3,\"end_column\":11,"
        "\"notes\":[{\"message\":\"the other access is here\",\"file\":\"a.dag\",\"line\":2,\"column\":5,"
        "\"end_line\":2,\"end_column\":6}],"
        "\"hint\":\"add 'after physics' to task 'ai'; or order them through a gate\",\"fixits\":[]},\n"
        "{\"severity\":\"warning\",\"message\":\"gate 'x' is never waited for\",\"flag\":null,"
        "\"file\":\"a.dag\",\"line\":7,\"column\":1,\"end_line\":7,\"end_column\":2,\"notes\":[],"
        "\"hint\":null,\"fixits\":[]},\n"
        "{\"severity\":\"error\",\"message\":\"cannot write 'out.c'\",\"flag\":null,"
        "\"file\":null,\"line\":null,\"column\":null,\"end_line\":null,\"end_column\":null,"
        "\"notes\":[],\"hint\":null,\"fixits\":[]}\n"
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
        "{\"format\":\"dagc-diagnostics\",\"version\":2,\"diagnostics\":[\n"
        "{\"severity\":\"error\",\"message\":\"quote \\\" tab \\t nl \\n ctl \\u0001 del \\u007f\",\"flag\":null,"
        "\"file\":\"dir\\\\\\\"q\\\".dag\",\"line\":1,\"column\":1,\"end_line\":1,\"end_column\":2,"
        "\"notes\":[],\"hint\":null,\"fixits\":[]},\n"
        "{\"severity\":\"error\",\"message\":\"bad \\ufffd utf8 \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd ok \xe2\x82\xac\",\"flag\":null,"
        "\"file\":\"caf\xc3\xa9.dag\",\"line\":1,\"column\":2,\"end_line\":1,\"end_column\":3,"
        "\"notes\":[],\"hint\":null,\"fixits\":[]}\n"
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
    cr_expect_str_eq(buf, "{\"format\":\"dagc-diagnostics\",\"version\":2,\"diagnostics\":[]}\n");
    free(buf);
}

/* Two files, b.dag imported by a.dag at line 2: ranges come from the
 * source text, the flag from the message, fix-its from dg_fixit, and a
 * diagnostic in b.dag names the import that loaded it. */
static void two_files(dg_source *a, dg_source *b)
{
    const char *ta = "// a\nimport \"b.dag\";\ngraph g { task physics after input; }\n";
    const char *tb = "resource bodies;\ngraph h { task x reads bodeis; }\n";
    dg_source_from_memory(a, "a.dag", ta, strlen(ta));
    dg_source_from_memory(b, "b.dag", tb, strlen(tb));
    a->next = b;
    b->importer = a;
    b->import_line = 2;
    b->import_col = 8;
}

static void report_ranges(dg_diag *d)
{
    dg_error(d, at("a.dag", 3, 30), "unknown name 'input'; did you mean 'inputs'?");
    dg_fixit_replace(d, at("a.dag", 3, 30), "inputs");
    dg_warning(d, at("a.dag", 3, 16), "'physics' races [-Wpipeline-race]");
    dg_note(d, at("a.dag", 2, 8), "a string");
    dg_fixit_insert_after(d, at("a.dag", 3, 16), " call physics_task");
    dg_error(d, at("b.dag", 2, 24), "unknown resource 'bodeis'");
}

Test(diag_format, json_ranges_flags_fixits_and_imports)
{
    dg_source a, b;
    two_files(&a, &b);
    capture c;
    capture_open(&c, DG_DIAG_JSON);
    c.d.src = &a;
    report_ranges(&c.d);
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf,
        "{\"format\":\"dagc-diagnostics\",\"version\":2,\"diagnostics\":[\n"
        "{\"severity\":\"error\",\"message\":\"unknown name 'input'; did you mean 'inputs'?\",\"flag\":null,"
        "\"file\":\"a.dag\",\"line\":3,\"column\":30,\"end_line\":3,\"end_column\":35,\"notes\":[],"
        "\"hint\":null,\"fixits\":[{\"file\":\"a.dag\",\"line\":3,\"column\":30,\"end_line\":3,"
        "\"end_column\":35,\"text\":\"inputs\"}]},\n"
        "{\"severity\":\"warning\",\"message\":\"'physics' races [-Wpipeline-race]\",\"flag\":\"-Wpipeline-race\","
        "\"file\":\"a.dag\",\"line\":3,\"column\":16,\"end_line\":3,\"end_column\":23,"
        "\"notes\":[{\"message\":\"a string\",\"file\":\"a.dag\",\"line\":2,\"column\":8,\"end_line\":2,\"end_column\":15}],"
        "\"hint\":null,\"fixits\":[{\"file\":\"a.dag\",\"line\":3,\"column\":23,\"end_line\":3,"
        "\"end_column\":23,\"text\":\" call physics_task\"}]},\n"
        "{\"severity\":\"error\",\"message\":\"unknown resource 'bodeis'\",\"flag\":null,"
        "\"file\":\"b.dag\",\"line\":2,\"column\":24,\"end_line\":2,\"end_column\":30,"
        "\"notes\":[{\"message\":\"in file imported from a.dag:2\",\"file\":\"a.dag\",\"line\":2,\"column\":8,"
        "\"end_line\":2,\"end_column\":15}],\"hint\":null,\"fixits\":[]}\n"
        "]}\n");
    free(buf);
    dg_source_free(&a);
    dg_source_free(&b);
}

Test(diag_format, text_shows_imports_and_no_fixits)
{
    dg_source a, b;
    two_files(&a, &b);
    capture c;
    capture_open(&c, DG_DIAG_TEXT);
    c.d.src = &a;
    report_ranges(&c.d);
    char *buf = capture_close(&c);
    cr_expect_str_eq(buf,
        "a.dag:3:30: error: unknown name 'input'; did you mean 'inputs'?\n"
        "graph g { task physics after input; }\n"
        "                             ^\n"
        "a.dag:3:16: warning: 'physics' races [-Wpipeline-race]\n"
        "graph g { task physics after input; }\n"
        "               ^\n"
        "a.dag:2:8: note: a string\n"
        "import \"b.dag\";\n"
        "       ^\n"
        "In file imported from a.dag:2:\n"
        "b.dag:2:24: error: unknown resource 'bodeis'\n"
        "graph h { task x reads bodeis; }\n"
        "                       ^\n");
    free(buf);
    dg_source_free(&a);
    dg_source_free(&b);
}

Test(diag_format, json_flag_survives_werror)
{
    capture c;
    capture_open(&c, DG_DIAG_JSON);
    c.d.werror = 1;
    dg_warning(&c.d, at("a.dag", 1, 1), "x and y race [-Wpipeline-race]");
    dg_warning(&c.d, at("a.dag", 1, 1), "gate 'g' is never waited for");
    char *buf = capture_close(&c);
    cr_expect(strstr(buf, "\"message\":\"x and y race [-Wpipeline-race] [-Werror]\",\"flag\":\"-Wpipeline-race\"") != NULL,
              "%s", buf);
    cr_expect(strstr(buf, "\"message\":\"gate 'g' is never waited for [-Werror]\",\"flag\":null") != NULL,
              "%s", buf);
    free(buf);
}
