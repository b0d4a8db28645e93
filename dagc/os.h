/*
 * os.h - dagc's system seam: everything the compiler asks of the operating
 * system outside the output layer (output_os.h, the seam's part for
 * all-or-nothing output files). One implementation per OS family:
 * os_posix.c, os_win32.c. No other dagc file includes a system header
 * beyond C11's.
 */
#ifndef DAGC_OS_H
#define DAGC_OS_H

#include <stdio.h>

/* ---------------------------------------------------------------- paths */

/* Where PATH's last component starts: after its last '/' (on Windows
 * also '\\', or the ':' of a drive, as in "C:x.dag"). */
const char *dg_path_base(const char *path);
/* Whether PATH is absolute: starts with '/' (on Windows also '\\' or a
 * drive, "C:\\x" or "C:/x"). */
int dg_path_is_abs(const char *path);
/* The canonical absolute name of an existing file (symlinks followed; on
 * Windows also the file system's own spelling of each component, so two
 * spellings of one file compare equal), malloc'd; NULL with errno (ENOENT
 * when there is no such file). */
char *dg_realpath(const char *path);
/* Whether something exists at PATH. */
int dg_os_exists(const char *path);

/* ---------------------------------------------------------------- files */

/* Calls each(user, name, is_dir) for every entry of DIR but "." and ".."
 * (symlinks followed for is_dir; an entry that cannot be asked is not a
 * folder). Returns 0, or an errno value when DIR cannot be listed. */
int dg_os_list_dir(const char *dir, void (*each)(void *user, const char *name, int is_dir),
                   void *user);

typedef enum dg_os_file_kind {
    DG_OS_FILE_UNKNOWN,   /* could not be asked */
    DG_OS_FILE_REGULAR,
    DG_OS_FILE_DIR,
    DG_OS_FILE_OTHER,     /* a FIFO, a device, ... */
} dg_os_file_kind;

/* Opens PATH for reading bytes (binary), without waiting for a FIFO's
 * writer where the system allows it. Returns 0 or an errno value. With
 * REGULAR_ONLY, a system that cannot open without waiting (Windows) asks
 * first: a path that is not a regular file is then not opened (*fp NULL,
 * 0 returned) and *kind says what it is. */
int dg_os_open_read(const char *path, int regular_only, FILE **fp, dg_os_file_kind *kind);
/* What an open stream reads from. */
dg_os_file_kind dg_os_stream_kind(FILE *fp);

/* ------------------------------------------------------------- streams */

/* Standard input, output and error carry bytes as they are (Windows: no
 * CRLF translation). Called once, first thing in main. */
void dg_os_binary_stdio(void);
/* Whether FP is a terminal (colours on diagnostics). */
int dg_os_is_terminal(FILE *fp);
/* Reads what FP's descriptor has, up to N bytes, waiting only when it has
 * nothing yet (no stdio buffering: the language server's input). Returns
 * the count, 0 at the end, -1 on an error. */
long dg_os_read_some(FILE *fp, void *buf, size_t n);
/* For a long-lived process that frees and makes again the same large
 * structures (the language server compiling a file at each change): keep
 * freed memory for the next time instead of handing it back to the
 * system, which would fault it in again, zeroed, page by page. */
void dg_os_keep_freed_memory(void);
/* Whether reading FP's descriptor now would return at once: 1 yes, 0 it
 * would wait, -1 the system cannot tell (taken as "no": nothing is
 * deferred then). */
int dg_os_input_ready(FILE *fp);

#endif
