/*
 * lexer.h - the re2c lexer (grammar/lexer.re). It returns Lemon's token
 * codes (TK_* from the generated parser.h) directly: one numbering.
 */
#ifndef DAGC_LEXER_H
#define DAGC_LEXER_H

#include <stdint.h>

#include "diag.h"
#include "util.h"

#define DG_MAX_IDENT 255

typedef struct dg_token {
    int code;             /* TK_*, 0 at end of input */
    src_pos pos;
    const char *text;     /* names, strings (unescaped), context types */
    uint64_t value;       /* integers; durations in ns */
    int bad;              /* already reported as invalid */
} dg_token;

typedef struct dg_lexer {
    const unsigned char *cur, *mar, *end, *line_start;
    uint32_t line;
    const char *file;
    dg_diag *diag;
    dg_arena *arena;
    int eof_error;        /* an unterminated comment/context type ran to the end */
} dg_lexer;

void dg_lexer_init(dg_lexer *L, const dg_source *src, dg_diag *d, dg_arena *a);
/* Next token into *t; returns t->code (0 at the end). */
int dg_lex(dg_lexer *L, dg_token *t);
/* Called right after the '(' that follows `graph NAME`: reads the context
 * type verbatim up to the balancing ')', as one TK_CTYPE token. */
int dg_lex_ctype(dg_lexer *L, dg_token *t, src_pos open);

#endif
