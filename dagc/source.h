/*
 * source.h - one loaded .dag file: its bytes (NUL-terminated, so the lexer
 * needs no bounds checks), and a table of line starts for diagnostics.
 */
#ifndef DAGC_SOURCE_H
#define DAGC_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#define DG_MAX_FILE_SIZE ((size_t)64 << 20) /* 64 MiB */

typedef struct dg_source {
    const char *path;     /* as given */
    char *text;           /* len bytes + a NUL sentinel */
    size_t len;
    size_t start;         /* 3 when a UTF-8 BOM was skipped, else 0 */
    uint32_t *lines;      /* offset of each line's first byte; lines[0] = start */
    uint32_t nlines;
    struct dg_source *next; /* the next loaded file, so diagnostics find any file's lines */
    /* The file whose import loaded this one, and where (the string of
     * its `import`); NULL for the input. Diagnostics in this file say so. */
    const struct dg_source *importer;
    uint32_t import_line, import_col;
} dg_source;

/* Reads PATH ("-": standard input, then named "<stdin>"); when
 * regular_only (an imported file), anything but a regular file is refused
 * before a byte is read, so a FIFO cannot hold dagc. On failure returns -1
 * and writes a message ("cannot open 'x': No such file or directory") into
 * err (size errsz). */
int dg_source_load(dg_source *s, const char *path, int regular_only, char *err, size_t errsz);
/* Wraps bytes already in memory (copied), e.g. for tests and the fuzzer. */
void dg_source_from_memory(dg_source *s, const char *path, const char *p, size_t n);
void dg_source_free(dg_source *s);
/* The bytes of 1-based line LINE, without its newline. */
const char *dg_source_line(const dg_source *s, uint32_t line, size_t *len);

#endif
