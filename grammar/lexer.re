/*
 * lexer.re - the .dag lexer, for re2c. Returns Lemon's TK_* codes.
 *
 * The source is NUL-terminated (dagc/source.c), so the DFA needs no bounds
 * checks: a NUL is the end only when it is the last byte; a NUL inside the
 * file is an ordinary bad character. Comments, strings and the context type
 * are scanned by hand because they may span lines or need unescaping.
 */
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "parser.h"

void dg_lexer_init(dg_lexer *L, const dg_source *src, dg_diag *d, dg_arena *a)
{
    memset(L, 0, sizeof *L);
    L->cur = (const unsigned char *)src->text + src->start;
    L->end = (const unsigned char *)src->text + src->len;
    L->line_start = L->cur;
    L->line = 1;
    L->file = src->path;
    L->diag = d;
    L->arena = a;
}

static src_pos pos_at(const dg_lexer *L, const unsigned char *p)
{
    src_pos s;
    s.file = L->file;
    s.line = L->line;
    s.col = (uint32_t)(p - L->line_start) + 1;
    return s;
}

static void newline(dg_lexer *L, const unsigned char *after)
{
    L->line++;
    L->line_start = after;
}

/* Block comment starting at tok ("/" "*" already consumed). */
static void block_comment(dg_lexer *L, const unsigned char *tok)
{
    src_pos start = pos_at(L, tok);
    const unsigned char *p = L->cur;
    for (;;) {
        if (p >= L->end) {
            dg_error(L->diag, start, "unterminated comment");
            L->eof_error = 1;
            L->cur = L->end;
            return;
        }
        if (p[0] == '*' && p[1] == '/') {
            L->cur = p + 2;
            return;
        }
        if (*p == '\n') newline(L, p + 1);
        p++;
    }
}

static void string_lit(dg_lexer *L, const unsigned char *tok, dg_token *t)
{
    dg_buf b = {0};
    const unsigned char *p = L->cur;
    for (;;) {
        if (p >= L->end || *p == '\n') {
            dg_error(L->diag, pos_at(L, tok), "unterminated string");
            t->bad = 1;
            break;
        }
        if (*p == '"') {
            p++;
            break;
        }
        if (*p == '\\') {
            if (p[1] == '"' || p[1] == '\\') {
                dg_buf_putc(&b, (char)p[1]);
                p += 2;
                continue;
            }
            if (p + 1 >= L->end || p[1] == '\n') {
                p++;
                continue; /* reported as unterminated above */
            }
            dg_error(L->diag, pos_at(L, p),
                     "unknown escape sequence in string (only \\\" and \\\\ are allowed)");
            t->bad = 1;
            p += 2;
            continue;
        }
        /* A NUL or control byte would truncate or corrupt the name the C
         * back end writes: an error where it is (a CR ending a CRLF line
         * is the unterminated string above). */
        if (*p < 0x20 || *p == 0x7f) {
            if (*p == '\r' && p + 1 < L->end && p[1] == '\n') {
                p++;
                continue;
            }
            if (*p == 0)
                dg_error(L->diag, pos_at(L, p), "NUL byte in a string");
            else
                dg_error(L->diag, pos_at(L, p), "control character 0x%02X in a string",
                         (unsigned)*p);
            t->bad = 1;
            p++;
            continue;
        }
        dg_buf_putc(&b, (char)*p++);
    }
    L->cur = p;
    t->text = dg_strndup(L->arena, b.p ? b.p : "", b.len);
    dg_buf_free(&b);
}

/* "250us", "1.5ms": value in ns. Exact decimal arithmetic, no floating
 * point, so the same text always gives the same value on every host. */
static void duration(dg_lexer *L, const unsigned char *tok, dg_token *t)
{
    const unsigned char *p = tok;
    uint64_t ip = 0, frac = 0, fscale = 1;
    int over = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (ip > (UINT64_MAX - 9) / 10) over = 1;
        else ip = ip * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (fscale < 1000000000) { /* digits past 1e-9 s are below a ns */
                frac = frac * 10 + (uint64_t)(*p - '0');
                fscale *= 10;
            }
        }
    }
    uint64_t mul = 1;
    if (p[0] == 'n') mul = 1;
    else if (p[0] == 'u') mul = 1000;
    else if (p[0] == 'm') mul = 1000000;
    else mul = 1000000000;
    if (!over && ip > UINT64_MAX / mul) over = 1;
    uint64_t v = 0;
    if (!over) {
        v = ip * mul;
        /* frac/fscale * mul, rounded to the nearest ns; frac < fscale. */
        /* frac < fscale <= 1e9 and mul <= 1e9: the product fits in 64 bits. */
        uint64_t add = (frac * mul + fscale / 2) / fscale;
        if (v > UINT64_MAX - add) over = 1;
        else v += add;
    }
    if (over) {
        dg_error(L->diag, pos_at(L, tok), "duration out of range");
        t->bad = 1;
        v = 0;
    }
    t->value = v;
}

static void bad_number(dg_lexer *L, const unsigned char *tok, dg_token *t)
{
    const unsigned char *p = tok;
    while (*p >= '0' && *p <= '9') p++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') p++;
    }
    size_t ulen = (size_t)(L->cur - p);
    if (ulen == 0)
        dg_error(L->diag, pos_at(L, tok),
                 "number with a fraction needs a unit (ns, us, ms or s)");
    else
        dg_error(L->diag, pos_at(L, tok),
                 "invalid duration unit '%.*s' (expected ns, us, ms or s)",
                 ulen > 32 ? 32 : (int)ulen, (const char *)p);
    t->code = TK_DURATION;
    t->bad = 1;
}

static int integer(dg_lexer *L, const unsigned char *tok, dg_token *t)
{
    uint64_t v = 0;
    for (const unsigned char *p = tok; p < L->cur; p++) {
        v = v * 10 + (uint64_t)(*p - '0');
        if (v > UINT32_MAX) {
            dg_error(L->diag, pos_at(L, tok),
                     "integer '%.*s' out of range (the largest is 4294967295)",
                     (int)(L->cur - tok > 40 ? 40 : L->cur - tok), (const char *)tok);
            t->bad = 1;
            v = UINT32_MAX;
            break;
        }
    }
    t->value = v;
    return TK_INT;
}

int dg_lex(dg_lexer *L, dg_token *t)
{
    memset(t, 0, sizeof *t);
    for (;;) {
        const unsigned char *tok = L->cur;
        t->pos = pos_at(L, tok);
        /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "L->cur";
        re2c:define:YYMARKER = "L->mar";
        re2c:yyfill:enable = 0;
        re2c:indent:string = "    ";

        id  = [A-Za-z_][A-Za-z0-9_]*;
        dig = [0-9];

        "\x00" {
            if (tok >= L->end) {
                L->cur = tok; /* stay at the end on repeated calls */
                return t->code = 0;
            }
            dg_error(L->diag, t->pos, "unexpected NUL byte");
            continue;
        }
        [ \t\r\v\f]+    { continue; }
        "\n"            { newline(L, L->cur); continue; }
        "//"            {
            while (L->cur < L->end && *L->cur != '\n') L->cur++;
            continue;
        }
        "/*"            { block_comment(L, tok); continue; }

        "graph"    { return t->code = TK_GRAPH; }
        "task"     { return t->code = TK_TASK; }
        "gate"     { return t->code = TK_GATE; }
        "include"  { return t->code = TK_INCLUDE; }
        "after"    { return t->code = TK_AFTER; }
        "on"       { return t->code = TK_ON; }
        "main"     { return t->code = TK_MAIN; }
        "hot"      { return t->code = TK_HOT; }
        "fiber"    { return t->code = TK_FIBER; }
        "parallel" { return t->code = TK_PARALLEL; }
        "grain"    { return t->code = TK_GRAIN; }
        "call"     { return t->code = TK_CALL; }
        "cost"     { return t->code = TK_COST; }
        "when"     { return t->code = TK_WHEN; }
        "and"      { return t->code = TK_AND; }
        "or"       { return t->code = TK_OR; }
        "import"   { return t->code = TK_IMPORT; }
        "run"      { return t->code = TK_RUN; }
        "resource" { return t->code = TK_RESOURCE; }
        "reads"    { return t->code = TK_READS; }
        "writes"   { return t->code = TK_WRITES; }
        "prev"     { return t->code = TK_PREV; }
        "coro"     { return t->code = TK_CORO; }

        id {
            size_t n = (size_t)(L->cur - tok);
            if (n > DG_MAX_IDENT) {
                dg_error(L->diag, t->pos, "identifier is too long (%zu characters, the limit is %d)",
                         n, DG_MAX_IDENT);
                t->bad = 1;
                n = DG_MAX_IDENT;
            }
            t->text = dg_strndup(L->arena, (const char *)tok, n);
            return t->code = TK_NAME;
        }

        dig+ { return t->code = integer(L, tok, t); }
        dig+ ("." dig+)? ("ns" | "us" | "ms" | "s") {
            duration(L, tok, t);
            return t->code = TK_DURATION;
        }
        dig+ ("." dig*)? [A-Za-z0-9_]* { bad_number(L, tok, t); return t->code; }

        "\"" { string_lit(L, tok, t); return t->code = TK_STRING; }

        "{" { return t->code = TK_LBRACE; }
        "}" { return t->code = TK_RBRACE; }
        "(" { return t->code = TK_LPAREN; }
        ")" { return t->code = TK_RPAREN; }
        ";" { return t->code = TK_SEMI; }
        "," { return t->code = TK_COMMA; }
        "=" { return t->code = TK_EQ; }

        [\x80-\xff]+ {
            dg_error(L->diag, t->pos,
                     "non-ASCII byte 0x%02X outside a comment or string", (unsigned)*tok);
            continue;
        }
        * {
            if (*tok >= 0x21 && *tok < 0x7f)
                dg_error(L->diag, t->pos, "unexpected character '%c'", *tok);
            else
                dg_error(L->diag, t->pos, "unexpected byte 0x%02X", (unsigned)*tok);
            continue;
        }
        */
    }
}

int dg_lex_ctype(dg_lexer *L, dg_token *t, src_pos open)
{
    memset(t, 0, sizeof *t);
    t->pos = open;
    t->code = TK_CTYPE;
    dg_buf b = {0};
    int depth = 1, reported = 0, space = 0;
    const unsigned char *p = L->cur;
    for (;;) {
        if (p >= L->end) {
            dg_error(L->diag, open, "unterminated context type: missing ')'");
            L->eof_error = 1;
            t->bad = 1;
            break;
        }
        unsigned char c = *p++;
        if (c == '(') depth++;
        else if (c == ')' && --depth == 0) break;
        if (c == '\n') newline(L, p);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f') {
            space = 1; /* runs of white space become one space */
            continue;
        }
        if ((c < 0x20 || c >= 0x7f) && !reported) {
            src_pos at = pos_at(L, p - 1);
            dg_error(L->diag, at, "unexpected byte 0x%02X in the context type", (unsigned)c);
            reported = 1;
            t->bad = 1;
        }
        if (space && b.len) dg_buf_putc(&b, ' ');
        space = 0;
        dg_buf_putc(&b, (char)c);
    }
    L->cur = p;
    if (!t->bad && b.len == 0) {
        dg_error(L->diag, open, "empty context type: write a C type, or leave out the parentheses for 'void *'");
        t->bad = 1;
    }
    t->text = dg_strndup(L->arena, b.p ? b.p : "", b.len);
    dg_buf_free(&b);
    return t->code;
}
