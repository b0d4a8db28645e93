#include "diag_json.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "util.h"

struct dg_json_diags {
    dg_buf done;      /* finished diagnostics, one JSON object a line */
    dg_buf cur;       /* the open one, up to its notes */
    dg_buf notes;     /* its notes, comma-separated objects */
    dg_buf hint;      /* its hint, raw text; empty: none */
    dg_buf imports;   /* its "imported from" notes, after the others */
    dg_buf fixits;    /* its fix-its, comma-separated objects */
    int open;
    size_t ndone;
};

static dg_json_diags *state(dg_diag *d)
{
    if (!d->json) d->json = dg_xcalloc(1, sizeof *d->json);
    return d->json;
}

/* Length of the well-formed UTF-8 sequence at s (1-4), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    if (c >= 0xF5) n = 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    /* Overlong forms, surrogates and values past U+10FFFF. */
    if (n == 3 && ((c == 0xE0 && s[1] < 0xA0) || (c == 0xED && s[1] >= 0xA0))) return 0;
    if (n == 4 && ((c == 0xF0 && s[1] < 0x90) || (c == 0xF4 && s[1] >= 0x90))) return 0;
    return n;
}

/* A JSON string for s. Paths and messages are bytes: a byte that is not
 * part of well-formed UTF-8 becomes U+FFFD, so the document stays valid. */
void dg_json_write_str(dg_buf *b, const char *s)
{
    dg_buf_putc(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            dg_buf_putc(b, '\\');
            dg_buf_putc(b, (char)c);
        } else if (c == '\n') {
            dg_buf_puts(b, "\\n");
        } else if (c == '\t') {
            dg_buf_puts(b, "\\t");
        } else if (c < 0x20 || c == 0x7f) {
            dg_buf_printf(b, "\\u%04x", c);
        } else if (c >= 0x80) {
            size_t n = utf8_len(p);
            if (!n) {
                dg_buf_puts(b, "\\ufffd");
                p++;
                continue;
            }
            dg_buf_put(b, p, n);
            p += n;
            continue;
        } else {
            dg_buf_putc(b, (char)c);
        }
        p++;
    }
    dg_buf_putc(b, '"');
}

/* "file", "line", "column", then the range's end ("end_line",
 * "end_column": just past the last byte; equal to the start for an empty
 * range, as an insertion's). */
static void json_pos(dg_buf *b, src_pos pos, src_pos end)
{
    dg_buf_puts(b, "\"file\":");
    if (pos.file) dg_json_write_str(b, pos.file);
    else dg_buf_puts(b, "null");
    if (pos.file && pos.line)
        dg_buf_printf(b, ",\"line\":%u,\"column\":%u,\"end_line\":%u,\"end_column\":%u", pos.line,
                      pos.col, end.line, end.col);
    else
        dg_buf_puts(b, ",\"line\":null,\"column\":null,\"end_line\":null,\"end_column\":null");
}

/* The warning flag a message ends with ("... [-Wpipeline-race]", before a
 * " [-Werror]"), as its own field: "flag":"-Wpipeline-race", or null. */
static void json_flag(dg_buf *b, const char *msg)
{
    size_t n = strlen(msg);
    const char *werror = " [-Werror]";
    if (n >= strlen(werror) && strcmp(msg + n - strlen(werror), werror) == 0) n -= strlen(werror);
    dg_buf_puts(b, ",\"flag\":");
    if (n >= 5 && msg[n - 1] == ']') {
        size_t k = n - 1;
        while (k > 0 && msg[k - 1] != '[' && msg[k - 1] != ' ') k--;
        if (k >= 2 && msg[k - 1] == '[' && msg[k - 2] == ' ' && msg[k] == '-' && msg[k + 1] == 'W' &&
            n - 1 - k > 2) {
            dg_buf f = {0};
            dg_buf_put(&f, msg + k, n - 1 - k);
            dg_json_write_str(b, f.p);
            dg_buf_free(&f);
            return;
        }
    }
    dg_buf_puts(b, "null");
}

static void close_open(dg_json_diags *j)
{
    if (!j->open) return;
    if (j->ndone++) dg_buf_puts(&j->done, ",\n");
    dg_buf_put(&j->done, j->cur.p, j->cur.len);
    dg_buf_puts(&j->done, ",\"notes\":[");
    if (j->notes.len) dg_buf_put(&j->done, j->notes.p, j->notes.len);
    if (j->notes.len && j->imports.len) dg_buf_putc(&j->done, ',');
    if (j->imports.len) dg_buf_put(&j->done, j->imports.p, j->imports.len);
    dg_buf_puts(&j->done, "],\"hint\":");
    if (j->hint.len) dg_json_write_str(&j->done, j->hint.p);
    else dg_buf_puts(&j->done, "null");
    dg_buf_puts(&j->done, ",\"fixits\":[");
    if (j->fixits.len) dg_buf_put(&j->done, j->fixits.p, j->fixits.len);
    dg_buf_puts(&j->done, "]}");
    j->cur.len = j->notes.len = j->hint.len = j->imports.len = j->fixits.len = 0;
    j->open = 0;
}

void dg_json_diag(dg_diag *d, const char *severity, src_pos pos, src_pos end, const char *msg)
{
    dg_json_diags *j = state(d);
    close_open(j);
    dg_buf_puts(&j->cur, "{\"severity\":");
    dg_json_write_str(&j->cur, severity);
    dg_buf_puts(&j->cur, ",\"message\":");
    dg_json_write_str(&j->cur, msg);
    json_flag(&j->cur, msg);
    dg_buf_putc(&j->cur, ',');
    json_pos(&j->cur, pos, end);
    j->open = 1;
}

static void note_to(dg_buf *b, src_pos pos, src_pos end, const char *msg)
{
    if (b->len) dg_buf_putc(b, ',');
    dg_buf_puts(b, "{\"message\":");
    dg_json_write_str(b, msg);
    dg_buf_putc(b, ',');
    json_pos(b, pos, end);
    dg_buf_putc(b, '}');
}

void dg_json_note(dg_diag *d, src_pos pos, src_pos end, const char *msg)
{
    dg_json_diags *j = state(d);
    if (!j->open) { /* a note of nothing: keep it, as a diagnostic of its own */
        dg_json_diag(d, "note", pos, end, msg);
        return;
    }
    note_to(&j->notes, pos, end, msg);
}

void dg_json_import(dg_diag *d, src_pos pos, src_pos end)
{
    dg_json_diags *j = state(d);
    if (!j->open) return;
    dg_buf m = {0};
    dg_buf_printf(&m, "in file imported from %s:%u", pos.file, pos.line);
    note_to(&j->imports, pos, end, m.p);
    dg_buf_free(&m);
}

void dg_json_fixit(dg_diag *d, src_pos start, src_pos end, const char *text)
{
    dg_json_diags *j = state(d);
    if (!j->open || !start.file || !start.line) return;
    if (j->fixits.len) dg_buf_putc(&j->fixits, ',');
    dg_buf_putc(&j->fixits, '{');
    json_pos(&j->fixits, start, end);
    dg_buf_puts(&j->fixits, ",\"text\":");
    dg_json_write_str(&j->fixits, text);
    dg_buf_putc(&j->fixits, '}');
}

void dg_json_hint(dg_diag *d, const char *msg)
{
    dg_json_diags *j = state(d);
    if (!j->open) {
        src_pos none = {0};
        dg_json_diag(d, "hint", none, none, msg);
        return;
    }
    if (j->hint.len) dg_buf_puts(&j->hint, "; ");
    dg_buf_puts(&j->hint, msg);
}

void dg_json_finish(dg_diag *d)
{
    dg_json_diags *j = state(d);
    close_open(j);
    if (d->out || d->json_to) {
        /* One diagnostic a line: a document for tools, a diff for people. */
        dg_buf o = {0};
        dg_buf_puts(&o, "{\"format\":\"dagc-diagnostics\",\"version\":2,\"diagnostics\":[");
        if (j->ndone) {
            dg_buf_putc(&o, '\n');
            dg_buf_put(&o, j->done.p, j->done.len);
            dg_buf_putc(&o, '\n');
        }
        dg_buf_puts(&o, "]}\n");
        if (d->json_to) {
            dg_buf_put(d->json_to, o.p, o.len);
        } else {
            fwrite(o.p, 1, o.len, d->out);
            fflush(d->out);
        }
        dg_buf_free(&o);
    }
    dg_buf_free(&j->done);
    dg_buf_free(&j->cur);
    dg_buf_free(&j->notes);
    dg_buf_free(&j->hint);
    dg_buf_free(&j->imports);
    dg_buf_free(&j->fixits);
    free(j);
    d->json = NULL;
}
