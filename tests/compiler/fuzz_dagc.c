/*
 * fuzz_dagc.c - libFuzzer target for the whole compiler: source, imports,
 * lexer, parser, sema (subgraphs, races), IR, and (for inputs that compile)
 * the DOT, stats and C back ends. Diagnostics are printed to /dev/null so
 * their formatting (source lines, carets, windows) is exercised too.
 *
 * One input is several files: the bytes up to the first line
 * "//@file NAME" are fuzz.dag, each such line starts the file NAME (at most
 * 8). They live in an in-memory file system, which imports search (with
 * -I inc), so the fuzzer reaches imports, cycles and subgraphs across files
 * without touching the disk.
 *
 * Build: meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined
 *        (CC=clang); seed corpus: tests/compiler/golden/ (see docs/language.md).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"
#include "emit_c.h"
#include "emit_dot.h"
#include "import.h"
#include "stats.h"

#define MAX_FILES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    if (!sink) sink = fopen("/dev/null", "w");
    static const char marker[] = "//@file ";
    const char *p = (const char *)data, *end = p + size;
    dagc_memfile files[MAX_FILES];
    char names[MAX_FILES][64];
    size_t nf = 0;
    const char *main_end = end;
    for (const char *q = p; q < end && nf < MAX_FILES;) {
        const char *m = memchr(q, '/', (size_t)(end - q));
        if (!m) break;
        if ((m == p || m[-1] == '\n') && (size_t)(end - m) >= sizeof marker - 1 &&
            memcmp(m, marker, sizeof marker - 1) == 0) {
            if (nf == 0) main_end = m;
            else files[nf - 1].len = (size_t)(m - files[nf - 1].data);
            const char *nm = m + sizeof marker - 1;
            const char *nl = memchr(nm, '\n', (size_t)(end - nm));
            size_t len = (size_t)((nl ? nl : end) - nm);
            if (len >= sizeof names[0]) len = sizeof names[0] - 1;
            memcpy(names[nf], nm, len);
            names[nf][len] = 0;
            files[nf].path = names[nf];
            files[nf].data = nl ? nl + 1 : end;
            files[nf].len = (size_t)(end - files[nf].data);
            nf++;
            q = nl ? nl + 1 : end;
            continue;
        }
        q = m + 1;
    }
    static const char *const dirs[] = {"inc"};
    dagc_opts o = {.diag_out = sink, .werror = (int)(size & 1), .import_dirs = dirs,
                   .nimport_dirs = 1, .no_pipeline_race = (int)((size >> 1) & 1),
                   .mem = files, .nmem = nf};
    ir_program *prog = NULL;
    if (dagc_compile_memory("fuzz.dag", p, (size_t)(main_end - p), &o, &prog) == DAGC_OK) {
        dg_dot_opts dopt = {.legend = 1};
        dg_emit_dot(sink, prog, &dopt);
        dg_print_stats(sink, prog);
        emit_c_templates t;
        emit_c_builtin_templates(&t);
        dg_buf h = {0}, c = {0};
        char err[256];
        emit_c(prog, "fuzz.h", "fuzz.c", &t, &h, &c, err, sizeof err);
        dg_buf_free(&h);
        dg_buf_free(&c);
        dagc_program_free(prog);
    }
    return 0;
}
