/* Unit tests of dagc's template engine (dagc/template.c). */
#include <criterion/criterion.h>
#include <string.h>

#include "template.h"

static char err[256];

static char *render(const char *text, const tpl_dict *d)
{
    dg_buf out = {0};
    err[0] = '\0';
    if (!tpl_render("t.tpl", text, d, &out, err, sizeof err)) {
        dg_buf_free(&out);
        return NULL;
    }
    if (!out.p)
        dg_buf_put(&out, "", 0);
    return out.p;
}

Test(template, plain_text_and_values)
{
    tpl_dict *d = tpl_dict_new();
    tpl_set(d, "name", "frame");
    tpl_setf(d, "n", "%d", 42);
    char *s = render("graph {{name}} has {{ n }} nodes{{!ignored}}.", d);
    cr_assert_str_eq(s, "graph frame has 42 nodes.");
    free(s);
    s = render("", d);
    cr_assert_str_eq(s, "");
    free(s);
    tpl_dict_free(d);
}

Test(template, sections_repeat_and_see_enclosing_values)
{
    tpl_dict *d = tpl_dict_new();
    tpl_set(d, "g", "G");
    tpl_set(tpl_add(d, "items"), "x", "a");
    tpl_set(tpl_add(d, "items"), "x", "b");
    tpl_dict *third = tpl_add(d, "items");
    tpl_set(third, "x", "c");
    tpl_set(third, "g", "H");   /* shadows the outer g */
    char *s = render("{{#items}}{{g}}_{{x}};{{/items}}", d);
    cr_assert_str_eq(s, "G_a;G_b;H_c;");
    free(s);
    tpl_dict_free(d);
}

Test(template, conditionals_and_inverted_sections)
{
    tpl_dict *d = tpl_dict_new();
    tpl_set(d, "yes", "1");
    tpl_set(d, "empty", "");
    char *s = render("[{{#yes}}Y{{/yes}}{{#empty}}E{{/empty}}{{#missing}}M{{/missing}}"
                     "{{^yes}}y{{/yes}}{{^empty}}e{{/empty}}{{^missing}}m{{/missing}}"
                     "{{^list}}L{{/list}}]", d);
    cr_assert_str_eq(s, "[YemL]");
    free(s);
    tpl_dict_free(d);
}

Test(template, standalone_block_lines_vanish)
{
    tpl_dict *d = tpl_dict_new();
    tpl_set(tpl_add(d, "l"), "v", "1");
    tpl_set(tpl_add(d, "l"), "v", "2");
    char *s = render("begin\n  {{#l}}  \n  v={{v}}\n  {{/l}}\n{{! note }}\nend {{#l}}x{{/l}}\n", d);
    cr_assert_str_eq(s, "begin\n  v=1\n  v=2\nend xx\n");
    free(s);
    tpl_dict_free(d);
}

Test(template, nested_sections)
{
    tpl_dict *d = tpl_dict_new();
    tpl_dict *g1 = tpl_add(d, "graphs");
    tpl_set(g1, "name", "a");
    tpl_set(tpl_add(g1, "nodes"), "n", "1");
    tpl_set(tpl_add(g1, "nodes"), "n", "2");
    tpl_dict *g2 = tpl_add(d, "graphs");
    tpl_set(g2, "name", "b");
    char *s = render("{{#graphs}}{{name}}:{{#nodes}}{{name}}{{n}} {{/nodes}}{{^nodes}}none{{/nodes}}|{{/graphs}}", d);
    cr_assert_str_eq(s, "a:a1 a2 |b:none|");
    free(s);
    tpl_dict_free(d);
}

Test(template, errors_name_the_line)
{
    tpl_dict *d = tpl_dict_new();
    tpl_set(tpl_add(d, "l"), "v", "1");
    cr_assert_null(render("a\n{{nope}}", d));
    cr_assert_str_eq(err, "t.tpl:2: 'nope' is not defined");
    cr_assert_null(render("{{l}}", d));
    cr_assert(strstr(err, "a list, not a value"), "%s", err);
    cr_assert_null(render("x\n\n{{#l}}", d));
    cr_assert_str_eq(err, "t.tpl:3: section 'l' is never closed");
    cr_assert_null(render("{{/l}}", d));
    cr_assert(strstr(err, "closes no section"), "%s", err);
    cr_assert_null(render("{{#l}}\n{{/m}}", d));
    cr_assert_str_eq(err, "t.tpl:2: {{/m}} closes section 'l' opened at line 1");
    cr_assert_null(render("a {{b", d));
    cr_assert_str_eq(err, "t.tpl:1: unterminated tag");
    cr_assert_null(render("{{}}", d));
    cr_assert(strstr(err, "empty tag"), "%s", err);
    cr_assert_null(render("{{a-b}}", d));
    cr_assert(strstr(err, "bad character"), "%s", err);
    tpl_dict_free(d);
}

/* Lazy lists: items made on demand, each in a dictionary of its own that
 * sees the enclosing values, with nested lists of its own. */
static void fill_item(void *ctx, size_t i, tpl_dict *item)
{
    int *calls = ctx;
    (*calls)++;
    tpl_setf(item, "i", "%zu", i);
    if (i % 2) tpl_set(tpl_add(item, "odd"), "x", "o");
}

Test(template, lazy_lists_are_filled_per_item)
{
    tpl_dict *d = tpl_dict_new();
    int calls = 0;
    tpl_set(d, "g", "G");
    tpl_add_lazy(d, "items", 3, fill_item, &calls);
    tpl_add_lazy(d, "none", 0, fill_item, &calls);
    char *s = render("{{#items}}{{g}}{{i}}{{#odd}}{{x}}{{/odd}} {{/items}}|{{^none}}empty{{/none}}"
                     "{{#none}}never{{/none}}|{{#items}}{{i}}{{/items}}", d);
    cr_assert_str_eq(s, "G0 G1o G2 |empty|012");
    cr_assert_eq(calls, 6, "filled once per item per rendering");
    free(s);
    cr_assert_null(render("{{items}}", d));
    cr_assert(strstr(err, "a list, not a value"), "%s", err);
    tpl_dict_free(d);
}
