/*
 * import.h - `import "x.dag";`: finds, loads and parses every imported
 * file once, in load order (depth first, each file before the files it
 * imports are loaded), and reports unreadable files and import cycles at
 * the import that names them.
 */
#ifndef DAGC_IMPORT_H
#define DAGC_IMPORT_H

#include <stddef.h>

#include "ast.h"
#include "diag.h"
#include "source.h"
#include "util.h"

/* An in-memory file system for tests and the fuzzer: paths compare after
 * normalisation ("a/./b" and "a/x/../b" are "a/b"). */
typedef struct dagc_memfile {
    const char *path;
    const char *data;
    size_t len;
} dagc_memfile;

typedef struct dg_files {
    dg_source **src;         /* src[0]: the input; each linked to the next (diag.c) */
    ast_file **ast;
    char **id;               /* identity: real path on disk, normalised in memory */
    size_t n, cap;
} dg_files;

typedef struct dg_import_opts {
    const char *const *dirs; /* -I, in order */
    size_t ndirs;
    const dagc_memfile *mem; /* non-NULL: read from these instead of the disk */
    size_t nmem;
    int mem_then_disk;       /* ... and from the disk what they lack (an editor's open files) */
} dg_import_opts;

/* F holds the parsed input (n == 1); loads everything it imports. */
void dg_load_imports(dg_files *F, const dg_import_opts *o, dg_diag *d, dg_arena *a);
/* Adds a loaded, parsed file. */
void dg_files_add(dg_files *F, dg_source *s, ast_file *f, char *id);
void dg_files_free(dg_files *F);
/* "a/./b/../c" -> "a/c" (heap). */
char *dg_normalize_path(const char *p);

#endif
