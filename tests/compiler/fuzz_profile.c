/*
 * fuzz_profile.c - libFuzzer target for `--profile`'s reader: the strict
 * JSON parser (json.c) with its streamed "traceEvents" array, the trace's
 * checks and per-frame aggregation (profile.c), and, for traces it
 * accepts, what dagc shows them in: --stats' tables and the DOT labels,
 * fills and measured critical path. Output goes to /dev/null.
 *
 * One input is one trace, read against a fixed program: the contract
 * example of tests/compiler/golden/ok_profile.dag (so that its trace, a
 * seed, is accepted) and a second, smaller graph, so traces can mix the
 * graphs, name graphs and nodes the program lacks, or leave one out.
 *
 * Build: meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined
 *        (CC=clang); seeds: tests/compiler/golden/ *.trace.json (see
 *        docs/testing.md, "Fuzzing").
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "driver.h"
#include "emit_dot.h"
#include "profile.h"
#include "stats.h"

static const char program_src[] =
    "include \"game.h\";\n"
    "graph frame(struct game *) {\n"
    "    task input      on main;\n"
    "    task physics    after input                cost 2ms;\n"
    "    task animation  after input                cost 1ms;\n"
    "    task ai         after input   hot;\n"
    "    task audio      hot fiber;\n"
    "    gate sim_done = physics and animation and ai;\n"
    "    task particles  after sim_done parallel grain 256;\n"
    "    task streaming  after physics or ai;\n"
    "    task shadows    after sim_done when shadows_enabled;\n"
    "    task cull       after physics, animation;\n"
    "    task render     after cull, particles, shadows  on main;\n"
    "    task present    after render, audio        on main  call swap_buffers;\n"
    "}\n"
    "graph tick(void *) {\n"
    "    task poll;\n"
    "    task step after poll;\n"
    "    task send after step;\n"
    "}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *sink;
    static ir_program *prog;
    if (!prog) {
        sink = fopen("/dev/null", "w");
        dagc_opts o = {.diag_out = stderr};
        if (!sink || dagc_compile_memory("fuzz.dag", program_src, sizeof program_src - 1, &o,
                                         &prog) != DAGC_OK) {
            fprintf(stderr, "fuzz_profile: the fixed program does not compile\n");
            abort();
        }
    }
    dg_profile prof;
    dg_buf err = {0};
    if (dg_profile_parse("trace.json", (const char *)data, size, prog, &prof, &err) == DAGC_OK) {
        dg_profile_print_stats(sink, prog, &prof);
        dg_dot_opts dopt = {1, &prof};
        dg_emit_dot(sink, prog, &dopt);
        dg_profile_free(&prof);
    } else {
        /* A refused trace always says why. */
        if (err.len == 0) abort();
        fwrite(err.p, 1, err.len, sink);
    }
    dg_buf_free(&err);
    return 0;
}
