/*
 * os/file.h - the file writer's system calls (prefix rt_os_file_): a file
 * written all or nothing, through a temporary beside it that is renamed
 * over it in one step, with the symlinks at its name followed so that a
 * link stays a link and the file it leads to is what is replaced; a
 * character device or a FIFO written in place. One file per system
 * (file_linux.c: Linux and other POSIX systems; file_win32.c), compiled
 * into libdagrt (the trace writer, trace/write.c, through os.h) and into
 * dagc (its output files, dagc/output.c): so this header includes C11's
 * and nothing of the runtime's.
 *
 * Every call returns 0 or the system's own error code (errno; GetLastError's
 * value on Windows), which the runtime hands on as dagrt_last_os_error and
 * dagc words its messages with; running out of memory is the system's
 * code for that (ENOMEM; ERROR_NOT_ENOUGH_MEMORY).
 */
#ifndef DAGRT_OS_FILE_H
#define DAGRT_OS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum rt_os_file_kind {
    RT_OS_FILE_NEW = 0,     /* nothing there yet (a dangling symlink's target too) */
    RT_OS_FILE_REGULAR,     /* replaced through a temporary beside it */
    RT_OS_FILE_STREAM,      /* a character device or a FIFO: written in place */
    RT_OS_FILE_OTHER,       /* a socket, a block device, ...: not written */
} rt_os_file_kind;

/* Follows path's symlinks (a relative one from the directory holding it)
 * to the name of the file they finally lead to: *target (malloc'd, the
 * caller frees it) and that file's kind. A name that already opens a
 * stream (/dev/stdout onto a pipe) is that stream, whatever its links
 * say. A directory is the system's "is a directory" error. */
int rt_os_file_resolve(const char *path, char **target, rt_os_file_kind *kind);

/* What a temporary's name adds to its target's (rt_os_file_temp). */
#define RT_OS_FILE_TEMP_EXTRA 48
/* Creates a new temporary beside target, for writing: its name
 * "TARGET.tmp-PID.N" (N counts this process's temporaries, so no two
 * writes share one, whichever thread makes them; a name some earlier
 * process left is skipped) into name (n bytes, at least strlen(target) +
 * RT_OS_FILE_TEMP_EXTRA), the stream into *f. Its mode is 0666 less the
 * umask, or the mode of the file at target that it will replace, where
 * the system has modes. */
int rt_os_file_temp(const char *target, char *name, size_t n, FILE **f);
/* Opens a character device or a FIFO to write in place; what was opened
 * must still be a device or FIFO (not swapped meanwhile). A FIFO without
 * a reader: with wait_reader the open waits for one, without it is an
 * error at once (ENXIO). */
int rt_os_file_open_stream(const char *path, bool wait_reader, FILE **f);
/* Renames tmp over path in one step: at every moment path names the old
 * file or the new one, never nothing (rename; MoveFileExW with
 * MOVEFILE_REPLACE_EXISTING, never a delete then a rename). */
int rt_os_file_replace(const char *tmp, const char *path);
/* Removes a file (the temporary after a failure). */
int rt_os_file_remove(const char *path);
/* The system error the last failed C library call on this thread left
 * (after fwrite, fflush or fclose of a FILE from above). */
int rt_os_last_error(void);

#endif
