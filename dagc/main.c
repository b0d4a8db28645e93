/*
 * main.c - the dagc command line (docs/language.md, "Command line").
 *
 * Exit status: 0 ok, 1 errors in the input, 2 usage or I/O errors.
 * Options are one table: add a row and a case in apply_option().
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "emit_c.h"
#include "emit_dot.h"
#include "ir.h"
#include "output.h"
#include "stats.h"

#ifndef DAGC_VERSION
#define DAGC_VERSION "0.0.0"
#endif

enum opt_id {
    OPT_OUTDIR, OPT_C, OPT_H, OPT_DOT, OPT_CHECK, OPT_STATS, OPT_DEPFILE,
    OPT_WERROR, OPT_VERSION, OPT_HELP, OPT_TEMPLATES, OPT_IMPORT_DIR, OPT_NO_PIPELINE_RACE,
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
    {"-M", 1, OPT_DEPFILE, "FILE", "write a make-style depfile (the .dag file and the includes it finds)"},
    {"-I", 1, OPT_IMPORT_DIR, "DIR", "also look for imported .dag files in DIR (repeatable, in order)"},
    {"-Werror", 0, OPT_WERROR, NULL, "treat warnings as errors"},
    {"-Wno-pipeline-race", 0, OPT_NO_PIPELINE_RACE, NULL, "no warnings for races across consecutive frames of a pipeline"},
    {"--templates", 1, OPT_TEMPLATES, "DIR", "emit C through DIR/header.h.tpl and DIR/source.c.tpl instead of the built-in templates"},
    {"--version", 0, OPT_VERSION, NULL, "print the version and exit"},
    {"--help", 0, OPT_HELP, NULL, "print this help and exit"},
};

typedef struct cli {
    const char *input;
    const char *outdir, *c_path, *h_path, *dot_path, *depfile, *templates;
    int check, stats, werror, no_pipeline_race;
    const char **import_dirs;
    size_t nimport_dirs;
} cli;

static void usage(FILE *o)
{
    fputs("usage: dagc [options] FILE.dag\n\noptions:\n", o);
    for (size_t i = 0; i < sizeof option_table / sizeof *option_table; i++) {
        const struct option_row *r = &option_table[i];
        char left[40];
        snprintf(left, sizeof left, "%s%s%s", r->name, r->arg ? " " : "", r->arg ? r->arg : "");
        fprintf(o, "  %-14s %s\n", left, r->help);
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
    case OPT_DEPFILE: c->depfile = arg; break;
    case OPT_WERROR: c->werror = 1; break;
    case OPT_IMPORT_DIR:
        c->import_dirs = realloc(c->import_dirs, (c->nimport_dirs + 1) * sizeof *c->import_dirs);
        if (!c->import_dirs) return usage_error("%s", "out of memory");
        c->import_dirs[c->nimport_dirs++] = arg;
        break;
    case OPT_NO_PIPELINE_RACE: c->no_pipeline_race = 1; break;
    case OPT_TEMPLATES: c->templates = arg; break;
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
        const struct option_row *row = NULL;
        const char *val = NULL;
        for (size_t k = 0; k < sizeof option_table / sizeof *option_table; k++) {
            const struct option_row *r = &option_table[k];
            size_t n = strlen(r->name);
            if (strcmp(a, r->name) == 0) {
                row = r;
                break;
            }
            /* --dot=FILE and -oDIR / -MFILE spellings. */
            if (r->has_arg && strncmp(a, r->name, n) == 0 &&
                ((a[1] == '-' && a[n] == '=') || (a[1] != '-' && n == 2))) {
                row = r;
                val = a + n + (a[n] == '=');
                break;
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
    if (c->check && (c->outdir || c->c_path || c->h_path || c->dot_path || c->depfile || c->templates))
        return usage_error("%s", "--check writes nothing: it cannot be combined with -o, --c, --h, --dot, --templates or -M");
    return -1;
}

/* Make-style escaping for depfile paths. */
static void dep_path(FILE *o, const char *p)
{
    for (; *p; p++) {
        if (*p == ' ' || *p == '#' || *p == '\\') fputc('\\', o);
        if (*p == '$') fputc('$', o);
        fputc(*p, o);
    }
}

static void write_depfile(FILE *o, const cli *c, const ir_program *p,
                          const char *const *targets, size_t ntargets)
{
    for (size_t i = 0; i < ntargets; i++) {
        if (i) fputc(' ', o);
        dep_path(o, targets[i]);
    }
    fputs(":", o);
    fputc(' ', o);
    dep_path(o, c->input);
    for (size_t i = 1; i < p->nfiles; i++) { /* (v2) every imported .dag file */
        fputs(" \\\n  ", o);
        dep_path(o, p->files[i]);
    }
    /* Includes are C headers for the generated code; those found beside the
     * .dag file are dependencies too (others come from the C compiler's
     * search path, which its own depfile covers). */
    const char *slash = strrchr(c->input, '/');
    size_t dirlen = slash ? (size_t)(slash - c->input) + 1 : 0;
    for (size_t i = 0; i < p->nincludes; i++) {
        const char *inc = p->includes[i];
        size_t n = dirlen + strlen(inc) + 1;
        char *path = malloc(n);
        if (!path) continue;
        if (inc[0] == '/') snprintf(path, n, "%s", inc);
        else snprintf(path, n, "%.*s%s", (int)dirlen, c->input, inc);
        if (access(path, F_OK) == 0) {
            fputs(" \\\n  ", o);
            dep_path(o, path);
        }
        free(path);
    }
    fputc('\n', o);
}

/* dir/stem + ext, where stem is the input's base name without .dag. */
static char *stem_path(const char *dir, const char *input, const char *ext)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".dag") == 0) n -= 4;
    size_t len = strlen(dir) + 1 + n + strlen(ext) + 1;
    char *s = malloc(len);
    if (s) snprintf(s, len, "%s/%.*s%s", dir, (int)n, base, ext);
    return s;
}

/* "x/y.c" -> "x/y.h" (the other file of the pair, beside this one). */
static char *sibling(const char *path, const char *ext)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    size_t n = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    char *s = malloc(n + strlen(ext) + 1);
    if (s) snprintf(s, n + strlen(ext) + 1, "%.*s%s", (int)n, path, ext);
    return s;
}

static char *owned_paths[2];

/* Renders the header and source (through the built-in templates, or those
 * in --templates DIR) and opens both outputs in outs[]; nothing is renamed
 * into place until main commits every output. Paths: -o DIR gives
 * DIR/STEM.h and DIR/STEM.c; --c/--h override one each; given only one of
 * them, the other goes beside it. The source includes the header by its
 * base name. */
static int emit_c_files(const cli *c, const ir_program *p, dg_outfile *outs, size_t *nout,
                        const char **targets, size_t *ntargets, char *err, size_t errsz)
{
    const char *dir = c->outdir ? c->outdir : ".";
    const char *cp = c->c_path, *hp = c->h_path;
    if (!cp && !hp) {
        cp = owned_paths[0] = stem_path(dir, c->input, ".c");
        hp = owned_paths[1] = stem_path(dir, c->input, ".h");
    } else if (!cp) {
        cp = owned_paths[0] = c->outdir ? stem_path(dir, c->input, ".c") : sibling(hp, ".c");
    } else if (!hp) {
        hp = owned_paths[1] = c->outdir ? stem_path(dir, c->input, ".h") : sibling(cp, ".h");
    }
    if (!cp || !hp) {
        snprintf(err, errsz, "out of memory");
        return -1;
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
        if (!emit_c_load_templates(c->templates, &t, err, errsz)) return -1;
    } else {
        emit_c_builtin_templates(&t);
    }
    const char *hbase = strrchr(hp, '/');
    hbase = hbase ? hbase + 1 : hp;
    const char *cbase = strrchr(cp, '/');
    cbase = cbase ? cbase + 1 : cp;
    dg_buf h = {0}, src = {0};
    char terr[400];
    int rc = -1;
    if (!emit_c(p, hbase, cbase, &t, &h, &src, terr, sizeof terr)) {
        snprintf(err, errsz, "template %s", terr);
        goto out;
    }
    const char *paths[2] = {hp, cp};
    const dg_buf *bufs[2] = {&h, &src};
    for (int i = 0; i < 2; i++) {
        dg_outfile *f = &outs[*nout];
        if (dg_out_open(f, paths[i], err, errsz) != 0) goto out;
        (*nout)++;
        if (bufs[i]->len && fwrite(bufs[i]->p, 1, bufs[i]->len, f->fp) != bufs[i]->len) {
            snprintf(err, errsz, "cannot write '%s'", paths[i]);
            goto out;
        }
        targets[(*ntargets)++] = paths[i];
    }
    rc = 0;
out:
    dg_buf_free(&h);
    dg_buf_free(&src);
    if (c->templates) emit_c_free_templates(&t);
    return rc;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(&c, argc, argv);
    if (rc >= 0) return rc;

    /* C output is the default action when nothing else was asked for. */
    int want_c = c.outdir || c.c_path || c.h_path || c.templates ||
                 (!c.dot_path && !c.check && !c.stats);

    dagc_opts o;
    memset(&o, 0, sizeof o);
    o.diag_out = stderr;
    o.werror = c.werror;
    o.import_dirs = c.import_dirs;
    o.nimport_dirs = c.nimport_dirs;
    o.no_pipeline_race = c.no_pipeline_race;
    o.color = isatty(fileno(stderr)) && !getenv("NO_COLOR");
    ir_program *p = NULL;
    rc = dagc_compile_file(c.input, &o, &p);
    if (rc != DAGC_OK) return rc;

    if (c.stats) dg_print_stats(stdout, p);

    /* Every output goes to a temporary first; all are renamed into place
     * only when all were written. */
    dg_outfile outs[4];
    const char *targets[4];
    size_t nout = 0, ntargets = 0;
    char err[600];
    int status = DAGC_OK;

    if (c.dot_path) {
        dg_outfile *f = &outs[nout];
        if (dg_out_open(f, c.dot_path, err, sizeof err) != 0) goto io_error;
        nout++;
        dg_dot_opts dopt = {1};
        if (dg_emit_dot(f->fp, p, &dopt) != 0) {
            snprintf(err, sizeof err, "cannot write '%s'", c.dot_path);
            goto io_error;
        }
        if (strcmp(c.dot_path, "-") != 0) targets[ntargets++] = c.dot_path;
    }

    if (want_c) {
        /* ---- C output (the C back end, dagc/emit_c.c) ---- */
        if (emit_c_files(&c, p, outs, &nout, targets, &ntargets, err, sizeof err) != 0)
            goto io_error;
    }

    if (c.depfile) {
        dg_outfile *f = &outs[nout];
        if (dg_out_open(f, c.depfile, err, sizeof err) != 0) goto io_error;
        nout++;
        if (ntargets == 0) targets[ntargets++] = c.input; /* nothing written: name the input */
        write_depfile(f->fp, &c, p, targets, ntargets);
    }

    for (size_t i = 0; i < nout; i++) {
        if (dg_out_commit(&outs[i], err, sizeof err) != 0) {
            for (size_t k = i + 1; k < nout; k++) dg_out_abort(&outs[k]);
            nout = 0;
            goto io_error;
        }
    }
    dagc_program_free(p);
    return DAGC_OK;

io_error:
    fprintf(stderr, "dagc: error: %s\n", err);
    status = DAGC_EUSAGE;
    for (size_t i = 0; i < nout; i++) dg_out_abort(&outs[i]);
    dagc_program_free(p);
    return status;
}
