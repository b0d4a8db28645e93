/* test_json.c - dagc's strict JSON reader (dagc/json.c): what it accepts,
 * what it refuses and where it says the error is (suite unit). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "json.h"

static dg_json *parse(dg_arena *a, const char *text, char *err, size_t n)
{
    return dg_json_parse(a, "t.json", text, strlen(text), NULL, err, n);
}

Test(json, accepts_values)
{
    dg_arena a;
    dg_arena_init(&a);
    char err[256] = "";
    dg_json *v = parse(&a, "\xEF\xBB\xBF {\"a\": [1, -2.5e3, true, false, null], \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"o\": {}}", err, sizeof err);
    cr_assert_not_null(v, "%s", err);
    cr_assert_eq(v->kind, DG_JSON_OBJ);
    const dg_json *arr = dg_json_get(v, "a");
    cr_assert(arr && arr->kind == DG_JSON_ARR && arr->n == 5);
    cr_assert_float_eq(arr->items[1]->num, -2500.0, 1e-9);
    cr_assert(arr->items[2]->kind == DG_JSON_BOOL && arr->items[2]->b == 1);
    cr_assert(arr->items[4]->kind == DG_JSON_NULL);
    cr_assert_str_eq(dg_json_get(v, "s")->str, "x\xC3\xA9\xF0\x9F\x98\x80\n");
    cr_assert_eq(dg_json_get(v, "o")->n, 0);
    cr_assert_null(dg_json_get(v, "missing"));
    dg_arena_free(&a);
}

static void refuses(const char *text, const char *where_what)
{
    dg_arena a;
    dg_arena_init(&a);
    char err[256] = "";
    cr_expect_null(parse(&a, text, err, sizeof err), "accepted: %s", text);
    cr_expect(strstr(err, where_what) != NULL, "for %s: got '%s', want '%s'", text, err, where_what);
    dg_arena_free(&a);
}

Test(json, refuses_what_is_not_strict)
{
    refuses("[1, 2,]", "t.json:1:7: trailing comma before ']'");
    refuses("{\"a\": 1,}", "t.json:1:9: trailing comma before '}'");
    refuses("[01]", "t.json:1:2: numbers may not have leading zeros");
    refuses("[1.]", "expected a digit after the decimal point");
    refuses("[1e]", "expected a digit in the exponent");
    refuses("[1e999]", "number out of range");
    refuses("// c\n[1]", "t.json:1:1: expected a value, found '/'");
    refuses("[\"a\tb\"]", "control character");
    refuses("[\"\\x\"]", "invalid escape '\\x'");
    refuses("[\"\\ud800\"]", "must be followed by a low one");
    refuses("[\"\\udc00\"]", "lone low surrogate");
    refuses("[\"\\u0000\"]", "\\u0000 in a string is not supported");
    refuses("[\"abc", "t.json:1:2: unterminated string");
    refuses("{\"a\" 1}", "expected ':' after a member name");
    refuses("{1: 2}", "expected a member name");
    refuses("[1 2]", "expected ',' or ']'");
    refuses("[tru]", "expected a value");
    refuses("[1]\n x", "t.json:2:2: unexpected 'x' after the JSON value");
    refuses("", "expected a value, found the end of the file");
}

Test(json, bounded_nesting)
{
    char deep[DG_JSON_MAX_DEPTH + 3];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = 0;
    refuses(deep, "nesting deeper than");
}

static int count_each(void *user, const dg_json *e, char *err, size_t n)
{
    (void)err;
    (void)n;
    int *c = user;
    if (e->kind == DG_JSON_NUM && e->num == 3) {
        snprintf(err, n, "three is refused");
        return -1;
    }
    (*c)++;
    return 0;
}

Test(json, streams_one_member)
{
    dg_arena a;
    dg_arena_init(&a);
    char err[256] = "";
    int c = 0;
    dg_json_stream s = {"ev", count_each, &c};
    const char *ok = "{\"x\": [9], \"ev\": [1, 2, {\"k\": [4]}], \"y\": 1}";
    dg_json *v = dg_json_parse(&a, "t.json", ok, strlen(ok), &s, err, sizeof err);
    cr_assert_not_null(v, "%s", err);
    cr_assert_eq(c, 3);
    cr_assert_eq(dg_json_get(v, "ev")->n, 0);        /* streamed, not kept */
    cr_assert_eq(dg_json_get(v, "x")->n, 1);         /* kept */
    const char *bad = "{\"ev\": [1,\n 3]}";
    cr_assert_null(dg_json_parse(&a, "t.json", bad, strlen(bad), &s, err, sizeof err));
    cr_assert_str_eq(err, "t.json:2:2: three is refused");
    dg_arena_free(&a);
}
