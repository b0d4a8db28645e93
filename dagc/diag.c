#include "diag.h"

#include <stdarg.h>
#include <string.h>

#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN "\033[1;36m"
#define C_GREEN "\033[1;32m"
#define C_RESET "\033[0m"

/* Lines longer than this are shown as a window around the column, so a
 * hostile one-line 64 MiB file does not flood the terminal. */
#define WINDOW 120

void dg_diag_init(dg_diag *d, FILE *out, const dg_source *src)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->src = src;
    d->max_errors = 20;
}

static void show_line(dg_diag *d, src_pos pos)
{
    if (!d->src || pos.line == 0) return;
    size_t len;
    const char *p = dg_source_line(d->src, pos.line, &len);
    size_t col = pos.col ? pos.col - 1 : 0;
    if (col > len) col = len;
    size_t b = 0, e = len;
    if (len > 2 * WINDOW) {
        b = col > WINDOW ? col - WINDOW : 0;
        e = b + 2 * WINDOW < len ? b + 2 * WINDOW : len;
    }
    FILE *o = d->out;
    if (b > 0) fputs("...", o);
    for (size_t i = b; i < e; i++) {
        unsigned char c = (unsigned char)p[i];
        /* Control bytes would garble the terminal; tabs are kept so the
         * caret line (which copies them) stays aligned. */
        fputc(c == '\t' || c >= 0x20 ? (c == 0x7f ? ' ' : c) : ' ', o);
    }
    if (e < len) fputs("...", o);
    fputc('\n', o);
    if (b > 0) fputs("   ", o);
    for (size_t i = b; i < col; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\t') fputc('\t', o);
        else if (c >= 0x80 && c < 0xC0) continue; /* UTF-8 continuation: no column */
        else fputc(' ', o);
    }
    if (d->color) fputs(C_GREEN, o);
    fputc('^', o);
    if (d->color) fputs(C_RESET, o);
    fputc('\n', o);
}

static void emit(dg_diag *d, src_pos pos, const char *kind, const char *kcolor,
                 const char *suffix, const char *fmt, va_list ap)
{
    FILE *o = d->out;
    if (!o) return;
    if (d->color) fputs(C_BOLD, o);
    if (pos.file && pos.line) fprintf(o, "%s:%u:%u: ", pos.file, pos.line, pos.col);
    else if (pos.file) fprintf(o, "%s: ", pos.file);
    else fputs("dagc: ", o);
    if (d->color) fprintf(o, "%s%s:%s" C_BOLD " ", kcolor, kind, C_RESET);
    else fprintf(o, "%s: ", kind);
    vfprintf(o, fmt, ap);
    fputs(suffix, o);
    if (d->color) fputs(C_RESET, o);
    fputc('\n', o);
    show_line(d, pos);
}

/* Decides whether the next error is shown. The limit is checked when the
 * error after the last allowed one arrives, so the last shown error keeps
 * its notes and "too many errors" only appears when something was dropped. */
static int count_error(dg_diag *d)
{
    if (!d->stop && d->max_errors && d->nerrors >= d->max_errors) {
        d->stop = 1;
        if (d->out)
            fprintf(d->out, "dagc: fatal error: too many errors (more than %d), stopping now\n",
                    d->max_errors);
    }
    if (d->stop) {
        d->muted = 1;
        return 0;
    }
    d->muted = 0;
    d->nerrors++;
    return 1;
}

void dg_error(dg_diag *d, src_pos pos, const char *fmt, ...)
{
    if (!count_error(d)) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, pos, "error", C_RED, "", fmt, ap);
    va_end(ap);
}

void dg_error_plain(dg_diag *d, const char *fmt, ...)
{
    if (!count_error(d)) return;
    va_list ap;
    va_start(ap, fmt);
    src_pos none = {0};
    emit(d, none, "error", C_RED, "", fmt, ap);
    va_end(ap);
}

void dg_warning(dg_diag *d, src_pos pos, const char *fmt, ...)
{
    va_list ap;
    if (d->werror) {
        if (!count_error(d)) return;
        va_start(ap, fmt);
        emit(d, pos, "error", C_RED, " [-Werror]", fmt, ap);
        va_end(ap);
        return;
    }
    if (d->stop) {
        d->muted = 1;
        return;
    }
    d->muted = 0;
    d->nwarnings++;
    va_start(ap, fmt);
    emit(d, pos, "warning", C_MAGENTA, "", fmt, ap);
    va_end(ap);
}

void dg_note(dg_diag *d, src_pos pos, const char *fmt, ...)
{
    if (d->muted) return;
    va_list ap;
    va_start(ap, fmt);
    emit(d, pos, "note", C_CYAN, "", fmt, ap);
    va_end(ap);
}
