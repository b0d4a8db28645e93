/*
 * fuzz_dagc.c - libFuzzer target for the whole compiler: source, lexer,
 * parser, sema, IR, and (for inputs that compile) the DOT, stats and C back
 * ends. Diagnostics are printed to /dev/null so their formatting (source
 * lines, carets, windows) is exercised too.
 *
 * Build: meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined
 *        (CC=clang); seed corpus: tests/compiler/golden/ (see docs/language.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "driver.h"
#include "emit_c.h"
#include "emit_dot.h"
#include "stats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    dagc_opts o = {.diag_out = sink, .werror = (int)(size & 1)};
    ir_program *p = NULL;
    if (dagc_compile_memory("fuzz.dag", (const char *)data, size, &o, &p) == DAGC_OK) {
        dg_dot_opts dopt = {1};
        dg_emit_dot(sink, p, &dopt);
        dg_print_stats(sink, p);
        emit_c_templates t;
        emit_c_builtin_templates(&t);
        dg_buf h = {0}, c = {0};
        char err[256];
        emit_c(p, "fuzz.h", "fuzz.c", &t, &h, &c, err, sizeof err);
        dg_buf_free(&h);
        dg_buf_free(&c);
        dagc_program_free(p);
    }
    return 0;
}
