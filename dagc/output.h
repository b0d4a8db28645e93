/*
 * output.h - all-or-nothing output files (docs/language.md, "Outputs").
 *
 * A run adds each output to one set, writes it through the stream it gets,
 * then commits the set:
 *   - a regular file (or a name not yet taken) is written to a temporary
 *     beside it and renamed over it at commit; a symlink stays a symlink:
 *     the file it finally points to is replaced, in that file's directory;
 *     one whose new bytes equal its old is left untouched (no rename, same
 *     modification time), so that build tools recompile nothing;
 *   - standard output ("-"), a character device or a FIFO is opened when
 *     added, buffered in memory and written at commit, never replaced;
 *   - anything else (a directory, a socket, a block device) is an error;
 *   - an output that is one of the run's inputs (the same file, whatever
 *     the name: symlinks and hard links included) or that names the same
 *     file as another output is an error before anything is written.
 * At commit every output is already flushed; the renames then happen with
 * every signal that ends the process held off (output_os.h), each replaced file kept
 * (as a hard link) until every rename succeeded, so a failing rename puts
 * every replaced file back. Until then one of those signals removes the
 * temporaries and the process dies of it.
 *
 * The OS-specific half is output_posix.c (output_os.h).
 */
#ifndef DAGC_OUTPUT_H
#define DAGC_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#define DG_OUT_MAX 8

typedef struct dg_outfile dg_outfile;

typedef struct dg_outset {
    dg_outfile *f[DG_OUT_MAX];
    size_t n;
    /* The files this run reads: an output that is one of them is refused.
     * "-" stands for standard input. */
    const char *const *inputs;
    size_t ninputs;
    /* Tests only: make the Nth rename of the commit (1-based) fail with
     * EIO, to exercise the rollback. 0: never. */
    int fail_rename_at;
    /* Replace an output even when its new bytes equal the old: for make,
     * which has no restat and would otherwise rerun the rule every time. */
    int rewrite_unchanged;
} dg_outset;

void dg_outset_init(dg_outset *s, const char *const *inputs, size_t ninputs);
/* Adds an output for PATH ("-": standard output) and returns the stream to
 * write it through, or NULL with a message in err. PATH must outlive the
 * set. */
FILE *dg_outset_add(dg_outset *s, const char *path, char *err, size_t errsz);
/* Flushes and closes the stream of the last output added; a write error
 * (the stream's or the flush's) is reported with the OS's reason. */
int dg_outset_finish(dg_outset *s, char *err, size_t errsz);
/* Commits every output (each must be finished). Returns 0, or -1 with a
 * message: then every file this commit had replaced holds its old bytes
 * again (and one it created is gone), and the set is aborted. Outputs
 * written directly (stdout, devices, FIFOs) are written first and cannot be
 * taken back. */
int dg_outset_commit(dg_outset *s, char *err, size_t errsz);
/* Discards every temporary; no target is touched. Safe after commit. */
void dg_outset_abort(dg_outset *s);

#endif
