/*
 * output_os.h - what output.c needs from the operating system besides the
 * file writer it shares with the runtime (runtime/os/file.h: following
 * symlinks, temporaries, streams, renames). One implementation per OS
 * family: output_posix.c, output_win32.c. Every function reports failures
 * as an errno value (0: ok).
 */
#ifndef DAGC_OUTPUT_OS_H
#define DAGC_OUTPUT_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Identity of an existing file (device and inode). */
typedef struct dg_os_id {
    unsigned long long dev, ino;
    bool valid;
} dg_os_id;

/* The identity of PATH, following symlinks ("-": standard input). Not
 * valid when the file does not exist. */
dg_os_id dg_os_file_id(const char *path);

/* The errno value output.c words a message with for ERR, an error of the
 * file writer (runtime/os/file.h: the system's own code, errno itself on
 * POSIX, GetLastError's value on Windows). */
int dg_os_errno(int err);

/* A stream into memory: after dg_os_stream_close, *buf (malloc'd) holds
 * *len bytes. */
int dg_os_memory_stream(char **buf, size_t *len, FILE **fp);
/* Closes a stream this layer opened, as fclose (0 or EOF with errno);
 * Windows has no open_memstream, and reads a memory stream back here. */
int dg_os_stream_close(FILE *fp);

/* Keeps TARGET's old bytes under the name BACKUP (a hard link; where the
 * file system has none, TARGET is renamed to it). */
int dg_os_keep(const char *target, const char *backup);

/* Signal handling: every signal whose default action ends the process
 * (SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGXCPU, SIGXFSZ, the
 * user and real-time signals...; not the crashes, SIGSEGV and the like)
 * removes every registered temporary and then kills the process with the
 * same signal; Windows has Ctrl-C and Ctrl-Break.
 * dg_os_hold_signals delays them (during a commit), dg_os_release_signals
 * delivers what arrived meanwhile. */
void dg_os_signals_install(void);
void dg_os_hold_signals(void);
void dg_os_release_signals(void);

/* The temporaries an interrupt removes: one table for both systems
 * (output_tmp.c). The handlers only read the slots; the main flow changes
 * them with the interrupts held. dg_os_remember takes a free slot (EMFILE
 * when none is left) and its caller holds the interrupts; dg_os_forget
 * holds them itself. */
#define DG_OS_TMP_SLOTS 32
extern const char *volatile dg_os_tmp_slots[DG_OS_TMP_SLOTS];
int dg_os_remember(const char *tmp);
void dg_os_forget(const char *tmp);

#endif
