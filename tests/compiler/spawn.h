/*
 * spawn.h - runs a program with captured stdout/stderr, for the tests that
 * drive the dagc binary (golden files, command line behaviour).
 */
#ifndef DAGC_TEST_SPAWN_H
#define DAGC_TEST_SPAWN_H

#include <stddef.h>

typedef struct spawn_result {
    int status;      /* exit status, or 128+signal */
    char *out;       /* captured stdout (NUL-terminated, malloc'd) */
    char *err;       /* captured stderr */
} spawn_result;

/* Runs argv[0] with argv in directory cwd (NULL: unchanged). */
int spawn_capture(const char *cwd, char *const argv[], spawn_result *r);
/* The same with standard input read from IN_PATH and standard output
 * written to OUT_PATH (an existing file or device, e.g. /dev/full); NULL:
 * inherited stdin, captured stdout. */
int spawn_io(const char *cwd, char *const argv[], const char *in_path, const char *out_path,
             spawn_result *r);
void spawn_free(spawn_result *r);
/* Reads a whole file; NULL if missing. */
char *slurp(const char *path, size_t *len);
/* A fresh empty directory under $TMPDIR (malloc'd path). */
char *make_temp_dir(void);
/* Removes DIR and what it holds (directories in it too); returns how many
 * entries it held. */
int remove_dir(const char *dir);
/* Number of entries (files) in DIR. */
int count_entries(const char *dir);

#endif
