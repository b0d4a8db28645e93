/*
 * output_win32.c - the Windows half of the output layer (output_os.h):
 * paths are UTF-8 in dagc and UTF-16 for the system; temporaries beside
 * their targets, replaced with MoveFileExW(MOVEFILE_REPLACE_EXISTING),
 * which is atomic on one volume; symlinks (reparse points) followed to
 * their final path; a console control handler (Ctrl-C, Ctrl-Break, the
 * console closing) that removes temporaries, the Windows counterpart of
 * the POSIX signal handler. Every stream is binary: the text dagc writes
 * is byte for byte the Linux build's (no CRLF translation).
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

static char *narrow(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    if (n <= 0) return NULL;
    char *s = dg_xmalloc((size_t)n);
    WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL);
    return s;
}

/* GetLastError() as the errno value output.c words its messages with. */
static int last_errno(void)
{
    switch (GetLastError()) {
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
    default:
        return EIO;
    }
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

int dg_os_resolve(const char *path, char **target, dg_os_kind *kind)
{
    wchar_t *w = wide(path);
    if (!w) return ENOENT;
    DWORD a = GetFileAttributesW(w);
    if (a == INVALID_FILE_ATTRIBUTES) {
        int e = last_errno();
        free(w);
        if (e != ENOENT) return e;
        /* Nothing there: a new file; a missing directory fails when the
         * temporary is made. */
        *target = dg_xmalloc(strlen(path) + 1);
        strcpy(*target, path);
        *kind = DG_OS_NEW;
        return 0;
    }
    if (a & FILE_ATTRIBUTE_DIRECTORY) {
        free(w);
        return EISDIR;
    }
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, 0, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        int e = last_errno();
        free(w);
        return e;
    }
    DWORD type = GetFileType(h);
    char *t = NULL;
    if (a & FILE_ATTRIBUTE_REPARSE_POINT) {
        /* A symlink: the output replaces the file it names (opening it
         * above followed every link). */
        wchar_t buf[MAX_PATH * 4];
        DWORD n = GetFinalPathNameByHandleW(h, buf, MAX_PATH * 4, FILE_NAME_NORMALIZED);
        if (n > 0 && n < MAX_PATH * 4)
            t = narrow(wcsncmp(buf, L"\\\\?\\", 4) == 0 ? buf + 4 : buf);
    }
    CloseHandle(h);
    free(w);
    if (!t) {
        t = dg_xmalloc(strlen(path) + 1);
        strcpy(t, path);
    }
    *target = t;
    if (type == FILE_TYPE_DISK) {
        *kind = DG_OS_REGULAR;
        return 0;
    }
    if (type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE) {
        *kind = DG_OS_DIRECT;
        return 0;
    }
    free(t);
    *target = NULL;
    return EINVAL;
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

int dg_os_temp_create(const char *target, char **tmp, FILE **fp)
{
    size_t n = strlen(target);
    char *name = dg_xmalloc(n + 32);
    static unsigned seq;
    HANDLE h = INVALID_HANDLE_VALUE;
    int e = 0;
    dg_os_hold_signals();
    for (int tries = 0; tries < 100 && h == INVALID_HANDLE_VALUE; tries++) {
        snprintf(name, n + 32, "%s.tmp-%05lx%03x", target,
                 (unsigned long)(GetCurrentProcessId() & 0xfffff), ++seq & 0xfff);
        wchar_t *w = wide(name);
        h = w ? CreateFileW(w, GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_NEW,
                            FILE_ATTRIBUTE_NORMAL, NULL)
              : INVALID_HANDLE_VALUE;
        e = h == INVALID_HANDLE_VALUE ? last_errno() : 0;
        free(w);
        if (e && e != EEXIST) break;
    }
    if (!e) e = dg_os_remember(name);
    dg_os_release_signals();
    if (h == INVALID_HANDLE_VALUE || e) {
        if (h != INVALID_HANDLE_VALUE) {
            CloseHandle(h);
            dg_os_remove(name);
        }
        free(name);
        return e ? e : EIO;
    }
    FILE *f = file_of(h, "wb");
    if (!f) {
        dg_os_forget(name);
        dg_os_remove(name);
        free(name);
        return EIO;
    }
    *tmp = name;
    *fp = f;
    return 0;
}

int dg_os_open_direct(const char *target, FILE **fp)
{
    wchar_t *w = wide(target);
    HANDLE h = w ? CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                               OPEN_EXISTING, 0, NULL)
                 : INVALID_HANDLE_VALUE;
    free(w);
    if (h == INVALID_HANDLE_VALUE) return last_errno();
    DWORD type = GetFileType(h);
    if (type != FILE_TYPE_CHAR && type != FILE_TYPE_PIPE) {
        CloseHandle(h);
        return EINVAL;   /* not a device or pipe any more */
    }
    FILE *f = file_of(h, "wb");
    if (!f) return EIO;
    *fp = f;
    return 0;
}

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

int dg_os_rename(const char *from, const char *to)
{
    wchar_t *f = wide(from), *t = wide(to);
    int e = !f || !t ? ENOENT
          : MoveFileExW(f, t, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH) ? 0 : last_errno();
    free(f);
    free(t);
    return e;
}

void dg_os_remove(const char *path)
{
    wchar_t *w = wide(path);
    if (w) (void)DeleteFileW(w);
    free(w);
}
