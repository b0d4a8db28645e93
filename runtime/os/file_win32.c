/*
 * os/file_win32.c - the file writer's system calls (os/file.h) on Windows:
 * paths UTF-8 outside and UTF-16 for the system, symlinks followed to the
 * final name of the file they lead to, temporaries beside their targets,
 * devices and pipes written in place, one-step renames. Compiled into
 * libdagrt (the trace writer) and into dagc.exe (its output files).
 */
#ifndef _WIN32_WINNT
#  define _WIN32_WINNT 0x0600   /* Vista: GetFinalPathNameByHandleW */
#endif
#define WIN32_LEAN_AND_MEAN
#include "file.h"

#include <fcntl.h>
#include <io.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

/* UTF-8 to a malloc'd wide string, or NULL (GetLastError says why). */
static wchar_t *wide(const char *s)
{
    int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
    wchar_t *w = n > 0 ? malloc((size_t)n * sizeof *w) : NULL;
    if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
        free(w);
        w = NULL;
    }
    if (n > 0 && !w && GetLastError() == 0)
        SetLastError(ERROR_NOT_ENOUGH_MEMORY);
    return w;
}

static char *narrow(const wchar_t *w)
{
    int n = WideCharToMultiByte(CP_UTF8, 0, w, -1, NULL, 0, NULL, NULL);
    char *s = n > 0 ? malloc((size_t)n) : NULL;
    if (s && WideCharToMultiByte(CP_UTF8, 0, w, -1, s, n, NULL, NULL) != n) {
        free(s);
        s = NULL;
    }
    return s;
}

int rt_os_file_resolve(const char *path, char **target, rt_os_file_kind *kind)
{
    wchar_t *w = wide(path);
    if (!w)
        return (int)GetLastError();
    /* Opening follows every symlink to the file it leads to (a device
     * name like NUL or CON opens that device). */
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        free(w);
        if (e != ERROR_FILE_NOT_FOUND)
            return (int)e;
        /* Nothing there: a new file (a missing directory fails when the
         * temporary is made; a dangling symlink is replaced itself). */
        *kind = RT_OS_FILE_NEW;
        *target = _strdup(path);
        return *target ? 0 : ERROR_NOT_ENOUGH_MEMORY;
    }
    free(w);
    DWORD type = GetFileType(h);
    if (type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE) {
        CloseHandle(h);
        *kind = RT_OS_FILE_STREAM;
        *target = _strdup(path);
        return *target ? 0 : ERROR_NOT_ENOUGH_MEMORY;
    }
    BY_HANDLE_FILE_INFORMATION info;
    if (type != FILE_TYPE_DISK || !GetFileInformationByHandle(h, &info)) {
        CloseHandle(h);
        *kind = RT_OS_FILE_OTHER;
        *target = NULL;
        return 0;
    }
    if (info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
        CloseHandle(h);
        return ERROR_DIRECTORY;
    }
    /* The final name: a symlink's target is replaced, not the link. */
    /* On the heap: this may run on a fiber's small stack (exit from a task). */
    wchar_t *fin = malloc(32768 * sizeof *fin);
    DWORD n = fin ? GetFinalPathNameByHandleW(h, fin, 32768, FILE_NAME_NORMALIZED | VOLUME_NAME_DOS) : 0;
    CloseHandle(h);
    /* Spelled C:\dir\f rather than \\?\C:\dir\f while that fits MAX_PATH
     * (the name users know, and one every call takes); a longer one keeps
     * the prefix that lets the wide calls reach it, and so does a share's
     * \\?\UNC\ name. */
    const wchar_t *name = fin;
    if (n > 6 && n < 32768 && wcsncmp(fin, L"\\\\?\\", 4) == 0 && fin[5] == L':' && n - 4 < MAX_PATH)
        name = fin + 4;
    *kind = RT_OS_FILE_REGULAR;
    *target = n > 0 && n < 32768 ? narrow(name) : _strdup(path);
    free(fin);
    return *target ? 0 : ERROR_NOT_ENOUGH_MEMORY;
}

static int handle_file(HANDLE h, FILE **f)
{
    int fd = _open_osfhandle((intptr_t)h, _O_WRONLY | _O_BINARY);
    if (fd < 0) {
        CloseHandle(h);
        return ERROR_TOO_MANY_OPEN_FILES;
    }
    *f = _fdopen(fd, "wb");
    if (!*f) {
        _close(fd);
        return ERROR_NOT_ENOUGH_MEMORY;
    }
    return 0;
}

/* Creates path, which must not exist yet, for writing (no modes to keep:
 * the ACL comes from the directory). */
static int create(const char *path, FILE **f)
{
    wchar_t *w = wide(path);
    if (!w)
        return (int)GetLastError();
    HANDLE h = CreateFileW(w, GENERIC_WRITE, 0, NULL, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return (int)e;
    int rc = handle_file(h, f);
    if (rc) {
        rt_os_file_remove(path);
    }
    return rc;
}

/* Temporaries made so far by this process: with the process id, a name
 * no other write uses, whichever thread (or runtime) writes. */
static _Atomic unsigned long temp_count;

int rt_os_file_temp(const char *target, char *name, size_t n, FILE **f)
{
    int e = ERROR_FILE_EXISTS;
    /* A name left by an earlier process of the same id is skipped. */
    for (int tries = 0; tries < 16 && (e == ERROR_FILE_EXISTS || e == ERROR_ALREADY_EXISTS); tries++) {
        /* relaxed: only the count's uniqueness matters, no data hangs on it. */
        unsigned long k = atomic_fetch_add_explicit(&temp_count, 1, memory_order_relaxed) + 1;
        snprintf(name, n, "%s.tmp-%ld.%lu", target, (long)GetCurrentProcessId(), k);
        e = create(name, f);
    }
    return e;
}

int rt_os_file_open_stream(const char *path, bool wait_reader, FILE **f)
{
    (void)wait_reader;   /* opening a pipe never waits for its reader here */
    wchar_t *w = wide(path);
    if (!w)
        return (int)GetLastError();
    HANDLE h = CreateFileW(w, GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
                           OPEN_EXISTING, 0, NULL);
    DWORD e = GetLastError();
    free(w);
    if (h == INVALID_HANDLE_VALUE)
        return (int)e;
    DWORD type = GetFileType(h);
    if (type != FILE_TYPE_CHAR && type != FILE_TYPE_PIPE) {
        CloseHandle(h);
        return ERROR_INVALID_PARAMETER;   /* swapped for something else */
    }
    return handle_file(h, f);
}

int rt_os_file_replace(const char *tmp, const char *path)
{
    wchar_t *a = wide(tmp), *b = a ? wide(path) : NULL;
    int rc = 0;
    /* One call that replaces: never a delete then a rename, which a crash
     * between would leave with no file at all. */
    if (!a || !b || !MoveFileExW(a, b, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
        rc = (int)GetLastError();
    free(a);
    free(b);
    return rc;
}

int rt_os_file_remove(const char *path)
{
    wchar_t *w = wide(path);
    int rc = !w || !DeleteFileW(w) ? (int)GetLastError() : 0;
    free(w);
    return rc;
}

int rt_os_last_error(void)
{
    /* The C library's stdio on a handle ends in WriteFile, which sets it. */
    DWORD e = GetLastError();
    return e ? (int)e : ERROR_WRITE_FAULT;
}
