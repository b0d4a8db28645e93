/*
 * main.c - the dagc command line (docs/language.md, "The command line").
 *
 * Exit status: 0 ok, 1 errors in the input, 2 usage or I/O errors.
 * Options are one table: add a row and a case in apply_option().
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "driver.h"
#include "lsp.h"
#include "emit_c.h"
#include "emit_dot.h"
#include "ir.h"
#include "os.h"
#include "output.h"
#include "profile.h"
#include "stats.h"
#include "util.h"

#ifndef DAGC_VERSION
#define DAGC_VERSION "0.0.0"
#endif

enum opt_id {
    OPT_OUTDIR, OPT_C, OPT_H, OPT_DOT, OPT_CHECK, OPT_STATS, OPT_DEPFILE,
    OPT_WERROR, OPT_VERSION, OPT_HELP, OPT_TEMPLATES, OPT_IMPORT_DIR, OPT_NO_PIPELINE_RACE,
    OPT_PROFILE, OPT_MT, OPT_DIAG_FORMAT, OPT_CXX, OPT_REWRITE, OPT_LSP, OPT_COSTS, OPT_COSTS_OUT, OPT_STATS_FORMAT,
};

static const struct option_row {
    const char *name;
    int has_arg;
    enum opt_id id;
    const char *arg;
    const char *help;
} option_table[] = {
    {"-o", 1, OPT_OUTDIR, "DIR", "write DIR/STEM.h and DIR/STEM.c (default DIR: .)"},
    {"--c", 1, OPT_C, "FILE", "write the C source to FILE"},
    {"--h", 1, OPT_H, "FILE", "write the C header to FILE"},
    {"--dot", 1, OPT_DOT, "FILE", "write Graphviz DOT to FILE ('-': standard output); with only --dot, no C"},
    {"--check", 0, OPT_CHECK, NULL, "parse and check only; write nothing"},
    {"--stats", 0, OPT_STATS, NULL, "print nodes, edges, depth, width, total cost, critical path"},
    {"--stats-format", 1, OPT_STATS_FORMAT, "F", "how --stats prints: text, or json (one document on standard output)"},
    {"--profile", 1, OPT_PROFILE, "TRACE", "with --dot/--stats: measured times from a libdagrt trace (docs/runtime.md)"},
    {"--costs", 1, OPT_COSTS, "PROFILE", "costs for the tables, --stats and --dot from a libdagrt trace (medians) or a costs file; they override `cost` clauses"},
    {"--costs-out", 1, OPT_COSTS_OUT, "FILE", "with --profile: write the trace's medians as a costs file for --costs ('-': standard output)"},
    {"-M", 1, OPT_DEPFILE, "FILE", "write a make-style depfile (the .dag file and the includes it finds)"},
    {"-MT", 1, OPT_MT, "TARGET", "name TARGET as the depfile's target (repeatable; default: every output, the C source first)"},
    {"--rewrite-unchanged", 0, OPT_REWRITE, NULL, "replace an output even when its bytes are unchanged (for make, which has no restat; default: left untouched)"},
    {"-I", 1, OPT_IMPORT_DIR, "DIR", "also look for imported .dag files in DIR (repeatable, in order)"},
    {"-Werror", 0, OPT_WERROR, NULL, "treat warnings as errors"},
    {"-Wno-pipeline-race", 0, OPT_NO_PIPELINE_RACE, NULL, "no warnings for races across consecutive frames of a pipeline"},
    {"--cxx", 0, OPT_CXX, NULL, "emit the source as C++ (STEM.cpp): the context may be any C++ type"},
    {"--templates", 1, OPT_TEMPLATES, "DIR", "emit C through DIR/header.h.tpl and DIR/source.c.tpl (source.cpp.tpl with --cxx) instead of the built-in templates"},
    {"--diagnostics-format", 1, OPT_DIAG_FORMAT, "F", "text (default: FILE:LINE:COL: error: ...) or json (one document on stderr)"},
    {"--lsp", 0, OPT_LSP, NULL, "serve the Language Server Protocol on standard input and output (alone; also `dagc lsp`)"},
    {"--version", 0, OPT_VERSION, NULL, "print the version and exit"},
    {"--help", 0, OPT_HELP, NULL, "print this help and exit"},
};

#define MAX_MT 16

typedef struct cli {
    const char *input;
    const char *mt[MAX_MT];  /* -MT targets, in order */
    size_t nmt;
    const char *outdir, *c_path, *h_path, *dot_path, *depfile, *templates, *profile;
    const char *costs, *costs_out;
    int check, stats, stats_json, werror, no_pipeline_race, cxx, rewrite;
    int diag_format;         /* dg_diag_format */
    const char *import_dirs[64]; /* -I, in order */
    size_t nimport_dirs;
} cli;

static void usage(FILE *o)
{
    fputs("usage: dagc [options] FILE.dag     (FILE.dag '-': standard input)\n\noptions:\n", o);
    int width = 0; /* the longest "NAME ARG", so the help texts line up */
    for (size_t i = 0; i < sizeof option_table / sizeof *option_table; i++) {
        const struct option_row *r = &option_table[i];
        int w = (int)(strlen(r->name) + (r->arg ? 1 + strlen(r->arg) : 0));
        if (w > width) width = w;
    }
    for (size_t i = 0; i < sizeof option_table / sizeof *option_table; i++) {
        const struct option_row *r = &option_table[i];
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        fprintf(o, "  %-*s %s\n", width, left, r->help);
    }
    fputs("\nexit status: 0 ok, 1 errors in the input, 2 usage or I/O errors\n", o);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("dagc: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\n(dagc --help lists the options)\n", stderr);
    return DAGC_EUSAGE;
}

/* Returns -1 to go on, or an exit status. */
static int apply_option(cli *c, enum opt_id id, const char *arg)
{
    switch (id) {
    case OPT_OUTDIR: c->outdir = arg; break;
    case OPT_C: c->c_path = arg; break;
    case OPT_H: c->h_path = arg; break;
    case OPT_DOT: c->dot_path = arg; break;
    case OPT_CHECK: c->check = 1; break;
    case OPT_STATS: c->stats = 1; break;
    case OPT_REWRITE: c->rewrite = 1; break;
    case OPT_DEPFILE: c->depfile = arg; break;
    case OPT_WERROR: c->werror = 1; break;
    case OPT_IMPORT_DIR:
        if (c->nimport_dirs == sizeof c->import_dirs / sizeof *c->import_dirs)
            return usage_error("%s", "too many -I options (the limit is 64)");
        c->import_dirs[c->nimport_dirs++] = arg;
        break;
    case OPT_NO_PIPELINE_RACE: c->no_pipeline_race = 1; break;
    case OPT_TEMPLATES: c->templates = arg; break;
    case OPT_PROFILE: c->profile = arg; break;
    case OPT_COSTS: c->costs = arg; break;
    case OPT_STATS_FORMAT:
        if (strcmp(arg, "text") == 0) c->stats_json = 0;
        else if (strcmp(arg, "json") == 0) c->stats_json = 1;
        else return usage_error("unknown stats format '%s' (expected text or json)", arg);
        break;
    case OPT_COSTS_OUT: c->costs_out = arg; break;
    case OPT_CXX: c->cxx = 1; break;
    case OPT_MT:
        if (c->nmt == MAX_MT) return usage_error("too many -MT targets (the limit is %s)", "16");
        c->mt[c->nmt++] = arg;
        break;
    case OPT_DIAG_FORMAT:
        if (strcmp(arg, "text") == 0) c->diag_format = DG_DIAG_TEXT;
        else if (strcmp(arg, "json") == 0) c->diag_format = DG_DIAG_JSON;
        else return usage_error("unknown diagnostics format '%s' (expected text or json)", arg);
        break;
    case OPT_LSP: return usage_error("%s", "--lsp takes no other option or file (settings come from the editor)");
    case OPT_VERSION: printf("dagc %s (.dag language version 2)\n", DAGC_VERSION); return 0;
    case OPT_HELP: usage(stdout); return 0;
    }
    return -1;
}

static int parse_args(cli *c, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (c->input) return usage_error("more than one input file ('%s')", a);
            c->input = a;
            continue;
        }
        /* The exact name first; else the longest name that prefixes it:
         * --dot=FILE, and -oDIR / -MFILE / -MTTARGET spellings. */
        const struct option_row *row = NULL;
        const char *val = NULL;
        size_t best = 0;
        for (size_t k = 0; k < sizeof option_table / sizeof *option_table; k++) {
            const struct option_row *r = &option_table[k];
            size_t n = strlen(r->name);
            if (strcmp(a, r->name) == 0) {
                row = r;
                val = NULL;
                break;
            }
            if (r->has_arg && n > best && strncmp(a, r->name, n) == 0 &&
                ((a[1] == '-' && a[n] == '=') || a[1] != '-')) {
                row = r;
                best = n;
                val = a + n + (a[n] == '=');
            }
        }
        if (!row) return usage_error("unknown option '%s'", a);
        if (row->has_arg && !val) {
            if (i + 1 >= argc) return usage_error("option '%s' needs an argument", a);
            val = argv[++i];
        }
        if (row->has_arg && !*val) return usage_error("option '%s' needs a non-empty argument", a);
        int rc = apply_option(c, row->id, val);
        if (rc >= 0) return rc;
    }
    if (!c->input) return usage_error("%s", "no input file");
    if (c->profile && !c->dot_path && !c->stats && !c->costs_out)
        return usage_error("%s", "--profile needs --dot, --stats or --costs-out (what to show the measured times in)");
    if (c->stats_json && !c->stats)
        return usage_error("%s", "--stats-format needs --stats");
    if (c->stats_json && c->profile)
        return usage_error("%s", "--stats-format json does not show a profile yet: use --stats --profile as text");
    if (c->costs_out && !c->profile)
        return usage_error("%s", "--costs-out writes a trace's medians: it needs --profile TRACE");
    if (c->check && (c->costs || c->costs_out))
        return usage_error("%s", "--check writes nothing: it cannot be combined with --costs or --costs-out");
    if (c->check && (c->outdir || c->c_path || c->h_path || c->dot_path || c->depfile || c->templates || c->cxx))
        return usage_error("%s", "--check writes nothing: it cannot be combined with -o, --c, --h, --dot, --cxx, --templates or -M");
    if (c->nmt && !c->depfile) return usage_error("%s", "-MT names the depfile's targets: it needs -M FILE");
    return -1;
}

/* A depfile name as gcc -MD writes it (libcpp's mkdeps.cc), which GNU make
 * and ninja both read back: a space or tab gets a backslash, and every
 * backslash right before it is doubled (make reads 2N+1 backslashes and a
 * space as N backslashes and a space); '#' gets a backslash, '$' is '$$';
 * any other backslash is itself, a Windows separator included. */
static void dep_path(FILE *o, const char *p)
{
    size_t run = 0; /* backslashes just written */
    for (; *p; p++) {
        if (*p == ' ' || *p == '\t') {
            for (size_t k = 0; k <= run; k++) fputc('\\', o);
        } else if (*p == '#') {
            fputc('\\', o);
        } else if (*p == '$') {
            fputc('$', o);
        }
        run = *p == '\\' ? run + 1 : 0;
        fputc(*p, o);
    }
}

/* The includes that exist relative to the .dag file's directory (the
 * current one for standard input), as paths: the depfile lists them, and
 * outputs may not overwrite them. Includes are C headers for the generated
 * code; others come from the C compiler's search path, which its own
 * depfile covers. The paths are malloc'd, the array too. */
static char **found_includes(const char *input, const ir_program *p, size_t *n)
{
    char **v = dg_xcalloc(p->nincludes + 1, sizeof *v);
    *n = 0;
    size_t dirlen = strcmp(input, "-") == 0 ? 0 : (size_t)(dg_path_base(input) - input);
    for (size_t i = 0; i < p->nincludes; i++) {
        const char *inc = p->includes[i];
        size_t len = dirlen + strlen(inc) + 1;
        char *path = dg_xmalloc(len);
        if (dg_path_is_abs(inc)) snprintf(path, len, "%s", inc);
        else snprintf(path, len, "%.*s%s", (int)dirlen, input, inc);
        if (dg_os_exists(path)) v[(*n)++] = path;
        else free(path);
    }
    return v;
}

static void write_depfile(FILE *o, const cli *c, const ir_program *p, char *const *incs,
                          size_t nincs, const char *const *targets, size_t ntargets)
{
    /* -MT names the targets; by default every output is one, the C source
     * first: Ninja wants the first target to be the rule's first output,
     * which the usual rules (CMake's OUTPUT, Meson's output:) make the .c. */
    if (c->nmt) {
        targets = c->mt;
        ntargets = c->nmt;
    }
    for (size_t i = 0; i < ntargets; i++) {
        if (i) fputc(' ', o);
        dep_path(o, targets[i]);
    }
    fputs(":", o);
    /* Standard input is no file make could check. */
    if (strcmp(c->input, "-") != 0) {
        fputc(' ', o);
        dep_path(o, c->input);
    }
    for (size_t i = 1; i < p->nfiles; i++) { /* every imported .dag file */
        fputs(" \\\n  ", o);
        dep_path(o, p->files[i]);
    }
    for (size_t i = 0; i < nincs; i++) {
        fputs(" \\\n  ", o);
        dep_path(o, incs[i]);
    }
    /* --costs: a new profile re-plans without touching the .dag. */
    if (c->costs && strcmp(c->costs, "-") != 0) {
        fputs(" \\\n  ", o);
        dep_path(o, c->costs);
    }
    fputc('\n', o);
}

/* dir/stem + ext, where stem is the input's base name without .dag. */
static char *stem_path(const char *dir, const char *input, const char *ext)
{
    const char *base;
    size_t n = dg_path_stem(input, &base);
    size_t len = strlen(dir) + 1 + n + strlen(ext) + 1;
    char *s = dg_xmalloc(len);
    snprintf(s, len, "%s/%.*s%s", dir, (int)n, base, ext);
    return s;
}

/* "x/y.c" -> "x/y.h" (the other file of the pair, beside this one). */
static char *sibling(const char *path, const char *ext)
{
    const char *base = dg_path_base(path);
    const char *dot = strrchr(base, '.');
    size_t n = dot ? (size_t)(dot - path) : strlen(path);
    char *s = dg_xmalloc(n + strlen(ext) + 1);
    snprintf(s, n + strlen(ext) + 1, "%.*s%s", (int)n, path, ext);
    return s;
}

static char *owned_paths[2];

/* Writes one whole buffer as an output of the set. */
static int put_output(dg_outset *outs, const char *path, const dg_buf *b, char *err, size_t errsz)
{
    FILE *f = dg_outset_add(outs, path, err, errsz);
    if (!f) return -1;
    if (b->len) (void)fwrite(b->p, 1, b->len, f); /* errors: dg_outset_finish */
    return dg_outset_finish(outs, err, errsz);
}

/* Renders the header and source (through the built-in templates, or those
 * in --templates DIR) and writes both to outputs of the set; nothing is
 * renamed into place until main commits the set. Paths: -o DIR gives
 * DIR/STEM.h and DIR/STEM.c; --c/--h override one each; given only one of
 * them, the other goes beside it. The source includes the header by its
 * base name. */
static int emit_c_files(const cli *c, const ir_program *p, dg_outset *outs,
                        const char **targets, size_t *ntargets, char *err, size_t errsz)
{
    const char *dir = c->outdir ? c->outdir : ".";
    const char *cp = c->c_path, *hp = c->h_path;
    if (!cp && !hp) {
        cp = owned_paths[0] = stem_path(dir, c->input, c->cxx ? ".cpp" : ".c");
        hp = owned_paths[1] = stem_path(dir, c->input, ".h");
    } else if (!cp) {
        const char *ext = c->cxx ? ".cpp" : ".c";
        cp = owned_paths[0] = c->outdir ? stem_path(dir, c->input, ext) : sibling(hp, ext);
    } else if (!hp) {
        hp = owned_paths[1] = c->outdir ? stem_path(dir, c->input, ".h") : sibling(cp, ".h");
    }
    if (strcmp(cp, "-") == 0 || strcmp(hp, "-") == 0) {
        snprintf(err, errsz, "the C outputs must be files ('-' is only for --dot)");
        return -1;
    }
    if (strcmp(cp, hp) == 0) {
        snprintf(err, errsz, "--c and --h name the same file '%s'", cp);
        return -1;
    }
    emit_c_templates t;
    if (c->templates) {
        if (!(c->cxx ? emit_cxx_load_templates : emit_c_load_templates)(c->templates, &t, err, errsz))
            return -1;
    } else if (c->cxx) {
        emit_cxx_builtin_templates(&t);
    } else {
        emit_c_builtin_templates(&t);
    }
    const char *hbase = dg_path_base(hp);
    const char *cbase = dg_path_base(cp);
    dg_buf h = {0}, src = {0};
    char terr[400];
    int rc = -1;
    if (!emit_c(p, hbase, cbase, &t, &h, &src, terr, sizeof terr)) {
        snprintf(err, errsz, "template %s", terr);
        goto out;
    }
    if (put_output(outs, hp, &h, err, errsz) != 0) goto out;
    if (put_output(outs, cp, &src, err, errsz) != 0) goto out;
    targets[(*ntargets)++] = cp;
    targets[(*ntargets)++] = hp;
    rc = 0;
out:
    dg_buf_free(&h);
    dg_buf_free(&src);
    if (c->templates) emit_c_free_templates(&t);
    return rc;
}

/* Standard output is checked like any output: a failed write (a full
 * disk, a closed pipe) is an I/O error, never a silent exit 0. A run that
 * failed already said why. */
static int finish_stdout(int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0;
    if ((bad || ferror(stdout)) && rc == DAGC_OK) {
        fprintf(stderr, "dagc: error: cannot write to standard output: %s\n",
                strerror(errno ? errno : EIO));
        return DAGC_EUSAGE;
    }
    return bad || ferror(stdout) ? DAGC_EUSAGE : rc;
}

int main(int argc, char **argv)
{
    dg_os_binary_stdio();
    /* The language server takes the streams and nothing else. */
    if (argc == 2 && (strcmp(argv[1], "--lsp") == 0 || strcmp(argv[1], "lsp") == 0))
        return dg_lsp_main(stdin, stdout);
    cli c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(&c, argc, argv);
    if (rc >= 0) return finish_stdout(rc);

    /* C output is the default action when nothing else was asked for. */
    int want_c = c.outdir || c.c_path || c.h_path || c.templates || c.cxx ||
                 (!c.dot_path && !c.check && !c.stats && !c.costs_out);

    dagc_opts o;
    memset(&o, 0, sizeof o);
    o.diag_out = stderr;
    o.werror = c.werror;
    o.import_dirs = c.import_dirs;
    o.nimport_dirs = c.nimport_dirs;
    o.no_pipeline_race = c.no_pipeline_race;
    o.c_output = want_c && !c.cxx;
    o.color = dg_os_is_terminal(stderr) && !getenv("NO_COLOR");
    o.diag_format = c.diag_format;
    ir_program *p = NULL;
    rc = dagc_compile_file(c.input, &o, &p);
    if (rc != DAGC_OK) return rc;

    /* The trace is input too: read it before anything is written. */
    dg_profile prof = {0};
    if (c.profile) {
        dg_buf perr = {0};
        rc = dg_profile_load(c.profile, p, &prof, &perr);
        if (rc != DAGC_OK) {
            /* Through the sink: in the JSON document too. */
            dg_buf_putc(&perr, 0);
            for (char *l = perr.p, *nl; l; l = nl) {
                nl = strchr(l, '\n');
                if (nl) *nl++ = 0;
                dg_error_plain(dagc_program_diag(p), "%s", l);
            }
            dg_buf_free(&perr);
            dagc_program_free(p);
            return finish_stdout(rc);
        }
        dg_buf_free(&perr);
    }

    /* Costs (--costs): read before anything is written; they override
     * the declared ones for every output. */
    dg_costs costs = {0};
    if (c.costs) {
        dg_buf cerr = {0};
        rc = dg_costs_load(c.costs, p, &costs, &cerr);
        if (rc != DAGC_OK) {
            dg_buf_putc(&cerr, 0);
            for (char *l = cerr.p, *nl; l && *l; l = nl) {
                nl = strchr(l, '\n');
                if (nl) *nl++ = 0;
                dg_error_plain(dagc_program_diag(p), "%s", l);
            }
            dg_buf_free(&cerr);
            dg_profile_free(&prof);
            dagc_program_free(p);
            return finish_stdout(rc);
        }
        dg_buf_free(&cerr);
        dg_costs_apply(p, &costs);
    }

    char err[1200];
    if (c.stats) {
        if (c.stats_json) dg_print_stats_json(stdout, p);
        else dg_print_stats(stdout, p);
        if (c.profile) dg_profile_print_stats(stdout, p, &prof);
        /* Before any output is committed: a run that cannot say its stats
         * writes nothing. */
        if (finish_stdout(0) != 0) {
            dg_profile_free(&prof);
            dagc_program_free(p);
            return DAGC_EUSAGE;
        }
    }

    /* The files read (the .dag files and the includes found beside them):
     * no output may overwrite one of them. */
    size_t nfiles, nincs;
    const char *const *files = dagc_program_files(p, &nfiles);
    char **incs = found_includes(c.input, p, &nincs);
    const char **inputs = dg_xcalloc(nfiles + nincs + 3, sizeof *inputs);
    for (size_t i = 0; i < nfiles; i++) inputs[i] = files[i];
    for (size_t i = 0; i < nincs; i++) inputs[nfiles + i] = incs[i];
    size_t ninputs = nfiles + nincs;
    if (c.profile) inputs[ninputs++] = c.profile;   /* the trace is read too */
    if (c.costs) inputs[ninputs++] = c.costs;       /* and the costs */

    /* Every output is written and flushed first; the set then replaces
     * them all, or none (output.h). */
    dg_outset outs;
    dg_outset_init(&outs, inputs, ninputs);
    outs.rewrite_unchanged = c.rewrite;
    const char *targets[5];
    size_t ntargets = 0;
    int status = DAGC_OK;

    if (c.dot_path) {
        FILE *f = dg_outset_add(&outs, c.dot_path, err, sizeof err);
        if (!f) goto io_error;
        dg_dot_opts dopt = {1, c.profile ? &prof : NULL};
        (void)dg_emit_dot(f, p, &dopt); /* a write error shows in finish */
        if (dg_outset_finish(&outs, err, sizeof err) != 0) goto io_error;
    }

    if (c.costs_out) {
        FILE *f = dg_outset_add(&outs, c.costs_out, err, sizeof err);
        if (!f) goto io_error;
        dg_costs measured;
        dg_costs_from_profile(&prof, p, &measured);
        dg_costs_write(f, p, &measured);
        dg_costs_free(&measured);
        if (dg_outset_finish(&outs, err, sizeof err) != 0) goto io_error;
    }

    if (want_c) {
        /* ---- C output (the C back end, dagc/emit_c.c) ---- */
        if (emit_c_files(&c, p, &outs, targets, &ntargets, err, sizeof err) != 0)
            goto io_error;
    }

    if (c.dot_path && strcmp(c.dot_path, "-") != 0) targets[ntargets++] = c.dot_path;
    if (c.costs_out && strcmp(c.costs_out, "-") != 0) targets[ntargets++] = c.costs_out;

    if (c.depfile) {
        FILE *f = dg_outset_add(&outs, c.depfile, err, sizeof err);
        if (!f) goto io_error;
        if (ntargets == 0) targets[ntargets++] = c.input; /* nothing written: name the input */
        write_depfile(f, &c, p, incs, nincs, targets, ntargets);
        if (dg_outset_finish(&outs, err, sizeof err) != 0) goto io_error;
    }

    if (dg_outset_commit(&outs, err, sizeof err) != 0) goto io_error;
    goto done;

io_error:
    dg_error_plain(dagc_program_diag(p), "%s", err);
    status = DAGC_EUSAGE;
    dg_outset_abort(&outs);
done:
    for (size_t i = 0; i < nincs; i++) free(incs[i]);
    free(incs);
    free(inputs);
    free(owned_paths[0]);
    free(owned_paths[1]);
    dg_profile_free(&prof);
    dg_costs_free(&costs);
    dagc_program_free(p);
    return finish_stdout(status);
}
