/*
 * output_win32.c - the Windows half of the output layer (output_os.h):
 * paths are UTF-8 in dagc and UTF-16 for the system; file identities, the
 * system's errors as errno values, a console control handler (Ctrl-C,
 * Ctrl-Break, the console closing) that removes temporaries, the Windows
 * counterpart of the POSIX signal handler, memory streams and backups.
 * (Symlinks followed to their final path, temporaries beside their
 * targets and MoveFileExW's one-step replace are the file writer's:
 * runtime/os/file.h.) Every stream is binary: the text dagc writes is
 * byte for byte the Linux build's (no CRLF translation).
 */
#define WIN32_LEAN_AND_MEAN
#include "output_os.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

#include "util.h"

/* ------------------------------------------------------------ helpers */

static wchar_t *wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, s, -1, NULL, 0);
    if (n <= 0) return NULL;
    wchar_t *w = dg_xmalloc((size_t)n * sizeof *w);
    MultiByteToWideChar(CP_UTF8, 0, s, -1, w, n);
    return w;
}

/* A system error as the errno value output.c words its messages with. */
static int errno_of(DWORD err)
{
    switch (err) {
    case ERROR_FILE_NOT_FOUND: case ERROR_PATH_NOT_FOUND: case ERROR_INVALID_NAME:
    case ERROR_BAD_NETPATH: case ERROR_INVALID_DRIVE:
        return ENOENT;
    case ERROR_ACCESS_DENIED: case ERROR_WRITE_PROTECT:
        return EACCES;
    case ERROR_FILE_EXISTS: case ERROR_ALREADY_EXISTS:
        return EEXIST;
    case ERROR_DIRECTORY:
        return EISDIR;
    case ERROR_SHARING_VIOLATION: case ERROR_LOCK_VIOLATION:
        return EBUSY;
    case ERROR_DISK_FULL: case ERROR_HANDLE_DISK_FULL:
        return ENOSPC;
    case ERROR_NOT_ENOUGH_MEMORY: case ERROR_OUTOFMEMORY:
        return ENOMEM;
    case ERROR_CANT_RESOLVE_FILENAME:
        return ELOOP;
    case ERROR_INVALID_PARAMETER:   /* the file writer's "not a device or pipe any more" */
        return EINVAL;
    case ERROR_TOO_MANY_OPEN_FILES:
        return EMFILE;
    case ERROR_NO_UNICODE_TRANSLATION:
        return EILSEQ;
    default:
        return EIO;
    }
}

static int last_errno(void)
{
    return errno_of(GetLastError());
}

int dg_os_errno(int err)
{
    return errno_of((DWORD)err);
}

/* A FILE for a handle (binary), or NULL with the handle closed. */
static FILE *file_of(HANDLE h, const char *mode)
{
    int fd = _open_osfhandle((intptr_t)h, _O_BINARY | (mode[1] == '+' ? _O_RDWR : _O_WRONLY));
    if (fd < 0) {
        CloseHandle(h);
        return NULL;
    }
    FILE *f = _fdopen(fd, mode[1] == '+' ? "w+b" : "wb");
    if (!f) _close(fd);
    return f;
}

/* ------------------------------------------------------------- identity */

dg_os_id dg_os_file_id(const char *path)
{
    dg_os_id id = {0, 0, false};
    HANDLE h;
    bool own = strcmp(path, "-") != 0;
    if (own) {
        wchar_t *w = wide(path);
        h = w ? CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                            OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL)
              : INVALID_HANDLE_VALUE;
        free(w);
    } else {
        h = GetStdHandle(STD_INPUT_HANDLE);
    }
    BY_HANDLE_FILE_INFORMATION bi;
    if (h != INVALID_HANDLE_VALUE && h && GetFileInformationByHandle(h, &bi)) {
        id.dev = bi.dwVolumeSerialNumber;
        id.ino = ((unsigned long long)bi.nFileIndexHigh << 32) | bi.nFileIndexLow;
        id.valid = true;
    }
    if (own && h != INVALID_HANDLE_VALUE) CloseHandle(h);
    return id;
}

/* ------------------------------------------------- console interrupts */

/* The console handler runs on a thread of its own; it takes `hold`, which
 * the main flow keeps while it changes the table of temporaries
 * (output_tmp.c) or renames (dg_os_hold_signals), so it never sees a
 * half-made change and never removes a file being committed. */
static SRWLOCK hold = SRWLOCK_INIT;
static int hold_depth;        /* main flow only */

static BOOL WINAPI on_ctrl(DWORD type)
{
    (void)type;
    AcquireSRWLockExclusive(&hold);
    for (int i = 0; i < DG_OS_TMP_SLOTS; i++)
        if (dg_os_tmp_slots[i]) {
            wchar_t *w = wide(dg_os_tmp_slots[i]);
            if (w) DeleteFileW(w);
            free(w);
        }
    ReleaseSRWLockExclusive(&hold);
    return FALSE;   /* then the default: the process ends */
}

void dg_os_signals_install(void)
{
    SetConsoleCtrlHandler(on_ctrl, TRUE);
}

void dg_os_hold_signals(void)
{
    if (hold_depth++ == 0) AcquireSRWLockExclusive(&hold);
}

void dg_os_release_signals(void)
{
    if (--hold_depth == 0) ReleaseSRWLockExclusive(&hold);
}


/* ---------------------------------------------------------------- files */

/* No open_memstream in the Windows C library: a memory stream is a
 * temporary file deleted on close, read back into memory by
 * dg_os_stream_close. */
#define NMEM 8
static struct memstream { FILE *fp; char **buf; size_t *len; } mems[NMEM];

int dg_os_memory_stream(char **buf, size_t *len, FILE **fp)
{
    wchar_t dir[MAX_PATH + 1], name[MAX_PATH + 1];
    DWORD n = GetTempPathW(MAX_PATH + 1, dir);
    if (n == 0 || n > MAX_PATH || !GetTempFileNameW(dir, L"dgc", 0, name)) return last_errno();
    HANDLE h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                           FILE_ATTRIBUTE_TEMPORARY | FILE_FLAG_DELETE_ON_CLOSE, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        int e = last_errno();
        DeleteFileW(name);
        return e;
    }
    int slot = 0;
    while (slot < NMEM && mems[slot].fp) slot++;
    FILE *f = slot < NMEM ? file_of(h, "w+") : NULL;
    if (!f) {
        if (slot == NMEM) CloseHandle(h);
        return slot == NMEM ? EMFILE : EIO;
    }
    mems[slot].fp = f;
    mems[slot].buf = buf;
    mems[slot].len = len;
    *buf = NULL;
    *len = 0;
    *fp = f;
    return 0;
}

int dg_os_stream_close(FILE *fp)
{
    int slot = 0;
    while (slot < NMEM && mems[slot].fp != fp) slot++;
    if (slot == NMEM) return fclose(fp);
    struct memstream m = mems[slot];
    mems[slot].fp = NULL;
    int bad = fflush(fp) != 0;
    long n = bad ? -1 : (fseek(fp, 0, SEEK_END), ftell(fp));
    char *b = n >= 0 ? dg_xmalloc((size_t)n + 1) : NULL;
    if (b) {
        rewind(fp);
        if (fread(b, 1, (size_t)n, fp) != (size_t)n) bad = 1;
        b[n] = '\0';
    } else {
        bad = 1;
    }
    if (fclose(fp) != 0) bad = 1;
    *m.buf = b;
    *m.len = b ? (size_t)n : 0;
    if (bad) errno = EIO;
    return bad ? EOF : 0;
}

int dg_os_keep(const char *target, const char *backup)
{
    wchar_t *t = wide(target), *b = wide(backup);
    int e = 0;
    if (!t || !b) {
        e = ENOENT;
    } else if (!CreateHardLinkW(b, t, NULL)) {
        /* No hard links here (FAT, some shares): move the old file aside
         * instead (then the target is missing until the rename over it). */
        e = last_errno();
        if (e != ENOENT && MoveFileExW(t, b, 0)) e = 0;
        else if (e != ENOENT) e = last_errno();
    }
    free(t);
    free(b);
    return e;
}
