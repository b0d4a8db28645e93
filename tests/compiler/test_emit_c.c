#define _POSIX_C_SOURCE 200809L /* mkdtemp, popen */
/* Unit tests of dagc's C back end with hand-built IR: the header declares
 * exactly the contract's prototypes, the source compiles warning-free with
 * every C compiler the build found, and output is byte-for-byte stable. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit_c.h"

/* input(main) -> physics, ai(hot); audio(fiber) root; gate sim = physics and ai;
 * parts(parallel grain 64) after sim; stream after physics or ai (OR);
 * shadows after sim when shadows_on; present after parts, shadows, audio,
 * stream on main call swap. */
static const uint32_t p_phys[] = {0}, p_ai[] = {0}, p_sim[] = {1, 2}, p_parts[] = {4},
                      p_stream[] = {1, 2}, p_shadow[] = {4}, p_present[] = {3, 5, 6, 7};
static const uint32_t s_input[] = {1, 2}, s_phys[] = {4, 6}, s_ai[] = {4, 6}, s_audio[] = {8},
                      s_sim[] = {5, 7}, s_parts[] = {8}, s_stream[] = {8}, s_shadow[] = {8};
static const ir_node nodes[] = {
    {IR_TASK, IR_JOIN_AND, IR_F_MAIN, "input", "frame_input", NULL, 0, 0, {0}, NULL, 0, s_input, 2, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_COST, "physics", "frame_physics", NULL, 0, 2000000, {0}, p_phys, 1, s_phys, 2, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_HOT, "ai", "frame_ai", NULL, 0, 0, {0}, p_ai, 1, s_ai, 2, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_HOT | IR_F_FIBER, "audio", "frame_audio", NULL, 0, 0, {0}, NULL, 0, s_audio, 1, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_GATE, IR_JOIN_AND, 0, "sim", NULL, NULL, 0, 0, {0}, p_sim, 2, s_sim, 2, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_PARALLEL | IR_F_GRAIN, "parts", "frame_parts", NULL, 64, 0, {0}, p_parts, 1, s_parts, 1, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_OR, 0, "stream", "frame_stream", NULL, 0, 0, {0}, p_stream, 2, s_stream, 1, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_WHEN, "shadows", "frame_shadows", "shadows_on", 0, 0, {0}, p_shadow, 1, s_shadow, 1, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    {IR_TASK, IR_JOIN_AND, IR_F_MAIN | IR_F_CALL, "present", "swap", NULL, 0, 0, {0}, p_present, 4, NULL, 0, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
};
static const ir_graph graphs[] = {
    {"frame", "struct game *", {0}, nodes, 9, 12, NULL, 0, 0},
};
static const char *const includes[] = {"game.h", "<stdio.h>"};
static const ir_program prog = {"frame.dag", includes, 2, graphs, 1, NULL, 0, NULL, 0, NULL, 0};

static void emit(const ir_program *p, dg_buf *h, dg_buf *c)
{
    emit_c_templates t;
    emit_c_builtin_templates(&t);
    char err[256] = "";
    memset(h, 0, sizeof *h);
    memset(c, 0, sizeof *c);
    cr_assert(emit_c(p, "frame.h", "frame.c", &t, h, c, err, sizeof err), "%s", err);
}

/* The prototypes the header declares, one per line, in order. */
static void protos(const char *h, dg_buf *out)
{
    for (const char *line = h; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t n = nl ? (size_t)(nl - line) : strlen(line);
        if (n && line[n - 1] == ';' && strncmp(line, "#", 1) != 0) {
            dg_buf_put(out, line, n);
            dg_buf_puts(out, "\n");
        }
        line = nl ? nl + 1 : NULL;
    }
}

Test(emit_c, header_declares_exactly_the_contract)
{
    dg_buf h, c;
    emit(&prog, &h, &c);
    dg_buf p = {0};
    protos(h.p, &p);
    cr_assert_str_eq(p.p,
        "struct game;\n"
        "void frame_input(struct game *ctx);\n"
        "void frame_physics(struct game *ctx);\n"
        "void frame_ai(struct game *ctx);\n"
        "void frame_audio(struct game *ctx);\n"
        "void frame_parts(struct game *ctx, size_t begin, size_t end);\n"
        "size_t frame_parts_count(struct game *ctx);\n"
        "void frame_stream(struct game *ctx);\n"
        "void frame_shadows(struct game *ctx);\n"
        "bool shadows_on(struct game *ctx);\n"
        "void swap(struct game *ctx);\n"
        "int frame_run(dagrt *rt, struct game *ctx);\n"
        "    dagrt_graph_state state;\n"
        "    dagrt_node_state nodes[9];\n"
        "    union { unsigned char bytes[sizeof(struct game *)]; void *p; long long ll; "
        "long double ld; void (*fp)(void); } ctx;\n"
        "} frame_instance_t;\n"
        "int frame_instance_init(frame_instance_t *inst);\n"
        "int frame_instance_run(dagrt *rt, frame_instance_t *inst, struct game *ctx);\n"
        "int frame_instance_start(dagrt *rt, frame_instance_t *inst, struct game *ctx);\n"
        "int frame_instance_wait(dagrt *rt, frame_instance_t *inst);\n"
        "    dagrt_pipeline pipe;\n"
        "    frame_instance_t frames[DAGRT_MAX_IN_FLIGHT];\n"
        "} frame_pipeline_t;\n"
        "int frame_pipeline_init(frame_pipeline_t *p, unsigned depth);\n"
        "int frame_pipeline_submit(dagrt *rt, frame_pipeline_t *p, struct game *ctx);\n"
        "int frame_pipeline_drain(dagrt *rt, frame_pipeline_t *p);\n");
    /* Includes: dagrt.h first, then the .dag's includes in order. */
    const char *a = strstr(h.p, "#include \"dagrt.h\"");
    const char *b = strstr(h.p, "#include \"game.h\"");
    const char *s = strstr(h.p, "#include <stdio.h>");
    cr_assert(a && b && s && a < b && b < s, "%s", h.p);
    dg_buf_free(&p);
    dg_buf_free(&h);
    dg_buf_free(&c);
}

Test(emit_c, tables_match_the_ir)
{
    dg_buf h, c;
    emit(&prog, &h, &c);
    cr_assert(strstr(c.p, "[6] = { .name = \"stream\", .kind = DAGRT_NODE_TASK, .join = DAGRT_JOIN_OR"), "%s", c.p);
    cr_assert(strstr(c.p, ".flags = DAGRT_NODE_HOT | DAGRT_NODE_FIBER,"), "%s", c.p);
    cr_assert(strstr(c.p, ".npred = 4, .succ_first = 12, .nsucc = 0"), "%s", c.p);
    cr_assert(strstr(c.p, ".nsucc = 2, .grain = 64") == NULL);
    cr_assert(strstr(c.p, ".npred = 1, .succ_first = 9, .nsucc = 1, .grain = 64"), "%s", c.p);
    cr_assert(strstr(c.p, "    1, 2, /* input [0] */\n"), "%s", c.p);
    cr_assert(strstr(c.p, "typedef struct game *frame__dagc_ctx;"), "%s", c.p);
    cr_assert(strstr(c.p, "return shadows_on(*(frame__dagc_ctx *)ctx);"), "%s", c.p);
    cr_assert(strstr(c.p, "swap(*(frame__dagc_ctx *)ctx);"), "%s", c.p);
    dg_buf_free(&h);
    dg_buf_free(&c);
}

Test(emit_c, deterministic)
{
    dg_buf h1, c1, h2, c2;
    emit(&prog, &h1, &c1);
    emit(&prog, &h2, &c2);
    cr_assert_eq(h1.len, h2.len);
    cr_assert_eq(c1.len, c2.len);
    cr_assert(memcmp(h1.p, h2.p, h1.len) == 0);
    cr_assert(memcmp(c1.p, c2.p, c1.len) == 0);
    dg_buf_free(&h1); dg_buf_free(&c1); dg_buf_free(&h2); dg_buf_free(&c2);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Compiles the emitted C, plus a file implementing every prototype, with
 * each compiler the build found, as strictly as the contract says. */
Test(emit_c, compiles_warning_free)
{
    dg_buf h, c;
    emit(&prog, &h, &c);
    char dir[] = "/tmp/dagc-emit-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[512], cmd[4096];
    snprintf(path, sizeof path, "%s/frame.h", dir); write_file(path, h.p);
    snprintf(path, sizeof path, "%s/frame.c", dir); write_file(path, c.p);
    snprintf(path, sizeof path, "%s/game.h", dir);
    write_file(path, "struct game { int frame; };\n");
    snprintf(path, sizeof path, "%s/impl.c", dir);
    write_file(path,
        "#include \"frame.h\"\n"
        "void frame_input(struct game *g) { g->frame++; }\n"
        "void frame_physics(struct game *g) { (void)g; }\n"
        "void frame_ai(struct game *g) { (void)g; }\n"
        "void frame_audio(struct game *g) { (void)g; }\n"
        "void frame_parts(struct game *g, size_t b, size_t e) { (void)g; (void)b; (void)e; }\n"
        "size_t frame_parts_count(struct game *g) { (void)g; return 10; }\n"
        "void frame_stream(struct game *g) { (void)g; }\n"
        "void frame_shadows(struct game *g) { (void)g; }\n"
        "bool shadows_on(struct game *g) { return g->frame % 2 == 0; }\n"
        "void swap(struct game *g) { (void)g; }\n");
    const char *ccs = getenv("DAGC_TEST_CCS");
    cr_assert_not_null(ccs, "meson passes the C compilers in DAGC_TEST_CCS");
    char list[1024];
    snprintf(list, sizeof list, "%s", ccs);
    int tried = 0;
    for (char *cc = strtok(list, ":"); cc; cc = strtok(NULL, ":")) {
        if (!*cc)
            continue;
        snprintf(cmd, sizeof cmd,
                 "cd %s && %s -std=c11 -Wall -Wextra -Wpedantic -Werror -I%s -c frame.c impl.c 2>&1",
                 dir, cc, DAGRT_INCLUDE_DIR);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        char out[8192];
        size_t n = fread(out, 1, sizeof out - 1, p);
        out[n] = '\0';
        int rc = pclose(p);
        cr_assert_eq(rc, 0, "%s failed:\n%s", cmd, out);
        tried++;
    }
    cr_assert_gt(tried, 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    dg_buf_free(&h);
    dg_buf_free(&c);
}

Test(emit_c, void_context_and_no_edges)
{
    static const ir_node one[] = {
        {IR_TASK, IR_JOIN_AND, 0, "only", "g_only", NULL, 0, 0, {0}, NULL, 0, NULL, 0, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    };
    static const ir_graph g[] = {{"g", "void *", {0}, one, 1, 0, NULL, 0, 0}};
    static const ir_program p = {"g.dag", NULL, 0, g, 1, NULL, 0, NULL, 0, NULL, 0};
    dg_buf h, c;
    emit(&p, &h, &c);
    cr_assert(strstr(h.p, "void g_only(void *ctx);\n"), "%s", h.p);
    cr_assert(strstr(h.p, "int g_run(dagrt *rt, void *ctx);\n"), "%s", h.p);
    cr_assert(strstr(c.p, "UINT32_MAX"), "%s", c.p);
    dg_buf_free(&h);
    dg_buf_free(&c);
}

Test(emit_c, custom_templates_from_a_directory)
{
    char dir[] = "/tmp/dagc-tpl-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/header.h.tpl", dir);
    write_file(path, "{{#graphs}}H {{name}}{{/graphs}}\n");
    snprintf(path, sizeof path, "%s/source.c.tpl", dir);
    write_file(path, "{{#graphs}}{{#nodes}}{{name}} {{/nodes}}{{/graphs}}\n");
    emit_c_templates t;
    char err[256];
    cr_assert(emit_c_load_templates(dir, &t, err, sizeof err), "%s", err);
    dg_buf h = {0}, c = {0};
    cr_assert(emit_c(&prog, "frame.h", "frame.c", &t, &h, &c, err, sizeof err), "%s", err);
    cr_assert_str_eq(h.p, "H frame\n");
    cr_assert_str_eq(c.p, "input physics ai audio sim parts stream shadows present \n");
    emit_c_free_templates(&t);
    dg_buf_free(&h);
    dg_buf_free(&c);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not(emit_c_load_templates("/nonexistent-dir", &t, err, sizeof err));
    cr_assert(strstr(err, "/nonexistent-dir/header.h.tpl"), "%s", err);
}

/* Context types are C type names: the generated declarations put the
 * parameter name inside the declarator, and the code never converts the
 * context to void * (ISO C has no such conversion for function pointers). */
Test(emit_c, context_types_are_declarators)
{
    static const ir_node one[] = {
        {IR_TASK, IR_JOIN_AND, 0, "a", "fp_a", NULL, 0, 0, {0}, NULL, 0, NULL, 0, NULL, 0, NULL, 0, UINT32_MAX, NULL, 0},
    };
    static const struct { const char *ctype, *param; } cases[] = {
        {"void (*)(int, const char *)", "void (*ctx)(int, const char *)"},
        {"struct game *", "struct game *ctx"},
        {"const struct world *", "const struct world *ctx"},
        {"char *const", "char *const ctx"},
        {"int (*)[4]", "int (*ctx)[4]"},
        {"unsigned long", "unsigned long ctx"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ir_graph g[] = {{"fp", cases[i].ctype, {0}, one, 1, 0, NULL, 0, 0}};
        ir_program p = {"fp.dag", NULL, 0, g, 1, NULL, 0, NULL, 0, NULL, 0};
        dg_buf h, c;
        emit(&p, &h, &c);
        char want[128];
        snprintf(want, sizeof want, "void fp_a(%s);", cases[i].param);
        cr_assert(strstr(h.p, want), "want %s in\n%s", want, h.p);
        if (i == 0) {
            char dir[] = "/tmp/dagc-ctype-XXXXXX";
            cr_assert_not_null(mkdtemp(dir));
            char path[512], cmd[2048];
            snprintf(path, sizeof path, "%s/frame.h", dir); write_file(path, h.p);
            snprintf(path, sizeof path, "%s/frame.c", dir); write_file(path, c.p);
            snprintf(path, sizeof path, "%s/impl.c", dir);
            write_file(path, "#include \"frame.h\"\nvoid fp_a(void (*f)(int, const char *)) { f(1, \"x\"); }\n");
            const char *ccs = getenv("DAGC_TEST_CCS");
            cr_assert_not_null(ccs);
            char list[1024];
            snprintf(list, sizeof list, "%s", ccs);
            for (char *cc = strtok(list, ":"); cc; cc = strtok(NULL, ":")) {
                snprintf(cmd, sizeof cmd,
                         "cd %s && %s -std=c11 -Wall -Wextra -Wpedantic -Werror -I%s -c frame.c impl.c",
                         dir, cc, DAGRT_INCLUDE_DIR);
                cr_assert_eq(system(cmd), 0, "%s", cmd);
            }
            snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
            cr_assert_eq(system(cmd), 0);
        }
        dg_buf_free(&h);
        dg_buf_free(&c);
    }
}
