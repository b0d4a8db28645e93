#include "diag.h"

#include <stdarg.h>
#include <string.h>

#include "diag_json.h"
#include "util.h"

#define C_BOLD "\033[1m"
#define C_RED "\033[1;31m"
#define C_MAGENTA "\033[1;35m"
#define C_CYAN "\033[1;36m"
#define C_GREEN "\033[1;32m"
#define C_RESET "\033[0m"

/* Lines longer than this are shown as a window around the column, so a
 * hostile one-line 64 MiB file does not flood the terminal. */
#define WINDOW 120

/* Whether diagnostics go anywhere: a stream, or (JSON) a buffer. */
#define SINK(d) ((d)->out || ((d)->json_to && (d)->format == DG_DIAG_JSON))

void dg_diag_init(dg_diag *d, FILE *out, const dg_source *src)
{
    memset(d, 0, sizeof *d);
    d->out = out;
    d->src = src;
    d->max_errors = 20;
}

/* The loaded file a position is in, or NULL. */
static const dg_source *source_of(const dg_diag *d, src_pos pos)
{
    const dg_source *s = d->src;
    while (s && pos.file && s->path != pos.file && strcmp(s->path, pos.file) != 0) s = s->next;
    return pos.file ? s : NULL;
}

static int name_byte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '.';
}

/* Where the token at pos ends (the column just past it, same line), for
 * JSON's range: a name, keyword, number or duration runs over name bytes,
 * a string to its closing quote, anything else is one byte. Without the
 * file's text the range is the one byte at pos. */
static src_pos token_end(const dg_diag *d, src_pos pos)
{
    src_pos e = pos;
    if (!pos.file || !pos.line) return e;
    const dg_source *s = source_of(d, pos);
    size_t len = 0;
    const char *p = s ? dg_source_line(s, pos.line, &len) : NULL;
    size_t i = pos.col ? pos.col - 1 : 0;
    if (!p) {
        e.col = pos.col + 1;
        return e;
    }
    if (i >= len) return e; /* at the end of the line (or of the file): empty */
    size_t j = i + 1;
    if (name_byte((unsigned char)p[i])) {
        while (j < len && name_byte((unsigned char)p[j])) j++;
    } else if (p[i] == '"') {
        while (j < len && p[j] != '"') j += p[j] == '\\' && j + 1 < len ? 2 : 1;
        if (j < len) j++;
    }
    e.col = (uint32_t)(j + 1);
    return e;
}

/* gcc's "In file included from": the imports that led to the file of a
 * diagnostic, innermost first. */
static void import_chain(dg_diag *d, dg_buf *o, src_pos pos)
{
    const dg_source *s = source_of(d, pos);
    int first = 1;
    for (int depth = 0; s && s->importer && depth < 256; s = s->importer, depth++) {
        if (d->format == DG_DIAG_JSON) {
            src_pos at = {s->importer->path, s->import_line, s->import_col};
            dg_json_import(d, at, token_end(d, at));
            continue;
        }
        dg_buf_printf(o, "%s %s:%u:\n", first ? "In file imported from" : "                 from",
                      s->importer->path, s->import_line);
        first = 0;
    }
}

/* Each diagnostic is built in memory and written with one call: stderr is
 * unbuffered, and a byte-at-a-time caret line would be a system call per
 * byte. */
static void show_line(dg_diag *d, dg_buf *o, src_pos pos)
{
    const dg_source *s = source_of(d, pos);
    if (!s || pos.line == 0) return;
    size_t len;
    const char *p = dg_source_line(s, pos.line, &len);
    size_t col = pos.col ? pos.col - 1 : 0;
    if (col > len) col = len;
    size_t b = 0, e = len;
    if (len > 2 * WINDOW) {
        b = col > WINDOW ? col - WINDOW : 0;
        e = b + 2 * WINDOW < len ? b + 2 * WINDOW : len;
    }
    if (b > 0) dg_buf_puts(o, "...");
    for (size_t i = b; i < e; i++) {
        unsigned char c = (unsigned char)p[i];
        /* Control bytes would garble the terminal; tabs are kept so the
         * caret line (which copies them) stays aligned. */
        dg_buf_putc(o, (char)(c == '\t' || c >= 0x20 ? (c == 0x7f ? ' ' : c) : ' '));
    }
    if (e < len) dg_buf_puts(o, "...");
    dg_buf_putc(o, '\n');
    if (b > 0) dg_buf_puts(o, "   ");
    for (size_t i = b; i < col; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c == '\t') dg_buf_putc(o, '\t');
        else if (c >= 0x80 && c < 0xC0) continue; /* UTF-8 continuation: no column */
        else dg_buf_putc(o, ' ');
    }
    if (d->color) dg_buf_puts(o, C_GREEN);
    dg_buf_putc(o, '^');
    if (d->color) dg_buf_puts(o, C_RESET);
    dg_buf_putc(o, '\n');
}

static void emit(dg_diag *d, src_pos pos, const char *kind, const char *kcolor,
                 const char *suffix, const char *fmt, va_list ap)
{
    if (!SINK(d)) return;
    int note = strcmp(kind, "note") == 0;
    if (d->format == DG_DIAG_JSON) {
        dg_buf m = {0};
        dg_buf_vprintf(&m, fmt, ap);
        dg_buf_puts(&m, suffix);
        if (note) {
            dg_json_note(d, pos, token_end(d, pos), m.p);
        } else {
            dg_json_diag(d, kind, pos, token_end(d, pos), m.p);
            import_chain(d, NULL, pos);
        }
        dg_buf_free(&m);
        return;
    }
    dg_buf o = {0};
    if (!note) import_chain(d, &o, pos);
    if (d->color) dg_buf_puts(&o, C_BOLD);
    if (pos.file && pos.line) dg_buf_printf(&o, "%s:%u:%u: ", pos.file, pos.line, pos.col);
    else if (pos.file) dg_buf_printf(&o, "%s: ", pos.file);
    else dg_buf_puts(&o, "dagc: ");
    if (d->color) dg_buf_printf(&o, "%s%s:%s" C_BOLD " ", kcolor, kind, C_RESET);
    else dg_buf_printf(&o, "%s: ", kind);
    dg_buf_vprintf(&o, fmt, ap);
    dg_buf_puts(&o, suffix);
    if (d->color) dg_buf_puts(&o, C_RESET);
    dg_buf_putc(&o, '\n');
    show_line(d, &o, pos);
    fwrite(o.p, 1, o.len, d->out);
    dg_buf_free(&o);
}

/* Decides whether the next error is shown. The limit is checked when the
 * error after the last allowed one arrives, so the last shown error keeps
 * its notes and "too many errors" only appears when something was dropped. */
static int count_error(dg_diag *d)
{
    if (!d->stop && d->max_errors && d->nerrors >= d->max_errors) {
        d->stop = 1;
        if (SINK(d) && d->format == DG_DIAG_JSON) {
            char m[80];
            snprintf(m, sizeof m, "too many errors (more than %d), stopping now", d->max_errors);
            src_pos none = {0};
            dg_json_diag(d, "fatal", none, none, m);
        } else if (d->out) {
            fprintf(d->out, "dagc: fatal error: too many errors (more than %d), stopping now\n",
                    d->max_errors);
        }
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

void dg_hint(dg_diag *d, const char *fmt, ...)
{
    if (d->muted || !SINK(d)) return;
    dg_buf o = {0};
    va_list ap;
    va_start(ap, fmt);
    if (d->format == DG_DIAG_JSON) {
        dg_buf_vprintf(&o, fmt, ap);
        dg_json_hint(d, o.p);
    } else {
        dg_buf_puts(&o, d->color ? "  " C_GREEN "hint:" C_RESET " " : "  hint: ");
        dg_buf_vprintf(&o, fmt, ap);
        dg_buf_putc(&o, '\n');
        fwrite(o.p, 1, o.len, d->out);
    }
    va_end(ap);
    dg_buf_free(&o);
}

void dg_fixit(dg_diag *d, src_pos start, src_pos end, const char *text)
{
    if (d->muted || !SINK(d) || d->format != DG_DIAG_JSON) return;
    dg_json_fixit(d, start, end, text);
}

void dg_fixit_replace(dg_diag *d, src_pos at, const char *text)
{
    dg_fixit(d, at, token_end(d, at), text);
}

void dg_fixit_insert_after(dg_diag *d, src_pos at, const char *text)
{
    src_pos e = token_end(d, at);
    dg_fixit(d, e, e, text);
}

/* ---- removing an operand (the redundant-dependency fix-it) ---------------- */

static int space_byte(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The keyword kw ending just before offset i (a name byte neither before
 * nor at i), or 0. */
static size_t word_before(const char *t, size_t lo, size_t i, const char *kw)
{
    size_t n = strlen(kw);
    if (i < lo + n || memcmp(t + i - n, kw, n) != 0) return 0;
    if (i - n > lo && name_byte((unsigned char)t[i - n - 1])) return 0;
    return n;
}

/* The offset of pos in s's text, or SIZE_MAX. */
static size_t offset_of(const dg_source *s, src_pos pos)
{
    if (!pos.line || pos.line > s->nlines || !pos.col) return SIZE_MAX;
    size_t end = pos.line < s->nlines ? s->lines[pos.line] : s->len;
    size_t off = s->lines[pos.line - 1] + pos.col - 1;
    return off < end ? off : SIZE_MAX;
}

/* The position of offset off of s's text (in file `file`). */
static src_pos pos_of(const dg_source *s, const char *file, size_t off)
{
    uint32_t lo = 0, hi = s->nlines; /* the last line starting at or before off */
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->lines[mid] <= off) lo = mid;
        else hi = mid;
    }
    src_pos p = {file, lo + 1, (uint32_t)(off - s->lines[lo] + 1)};
    return p;
}

int dg_fixit_remove_operand(dg_diag *d, src_pos name, int last)
{
    if (d->muted || !SINK(d) || d->format != DG_DIAG_JSON) return 0;
    const dg_source *s = source_of(d, name);
    size_t a = s ? offset_of(s, name) : SIZE_MAX;
    if (a == SIZE_MAX || !name_byte((unsigned char)s->text[a])) return 0;
    const char *t = s->text;
    size_t lo = s->start, n = s->len, b = a;
    while (b < n && name_byte((unsigned char)t[b])) b++;
    /* The operand: `prev` before the name, and parentheses around it only
     * (a '(' before and a ')' after, white space aside). */
    size_t i = a, j = b, k;
    while (i > lo && space_byte(t[i - 1])) i--;
    if ((k = word_before(t, lo, i, "prev")) && i < a) a = i - k;
    for (;;) {
        i = a, j = b;
        while (i > lo && space_byte(t[i - 1])) i--;
        while (j < n && space_byte(t[j])) j++;
        if (i > lo && t[i - 1] == '(' && j < n && t[j] == ')') a = i - 1, b = j + 1;
        else break;
    }
    size_t from, to;
    if (!last) {
        /* `x, ` or `x and `, up to the next operand */
        j = b;
        while (j < n && space_byte(t[j])) j++;
        if (j < n && t[j] == ',') j++;
        else if ((j > b || !name_byte((unsigned char)t[b - 1])) && n - j >= 3 &&
                 memcmp(t + j, "and", 3) == 0 &&
                 (j + 3 == n || !name_byte((unsigned char)t[j + 3])))
            j += 3;
        else
            return 0;
        while (j < n && space_byte(t[j])) j++;
        from = a;
        to = j;
    } else {
        /* ` , x` or ` and x`, from the end of the operand before */
        i = a;
        while (i > lo && space_byte(t[i - 1])) i--;
        if (i > lo && t[i - 1] == ',') i--;
        else if ((i < a || !name_byte((unsigned char)t[a])) && (k = word_before(t, lo, i, "and")))
            i -= k;
        else
            return 0;
        while (i > lo && space_byte(t[i - 1])) i--;
        from = i;
        to = b;
    }
    dg_fixit(d, pos_of(s, name.file, from), pos_of(s, name.file, to), "");
    return 1;
}

void dg_diag_finish(dg_diag *d)
{
    if (d->format == DG_DIAG_JSON) dg_json_finish(d);
}
