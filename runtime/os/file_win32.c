/*
 * os/file_win32.c - the system layer's files (os.h, "files") on Windows:
 * resolving, creating and atomically replacing the trace file. The rest of
 * the layer is os_win32.c.
 */
#ifndef _WIN32_WINNT
#  define _WIN32_WINNT 0x0A00   /* Windows 10: WaitOnAddress, thread descriptions */
#endif
#define WIN32_LEAN_AND_MEAN
#include "os.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
#include <fcntl.h>
#include <io.h>
#include <process.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>

/* ------------------------------------------------------------- files */

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

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
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
        *target = dup_str(path);
        return *target ? 0 : ERROR_NOT_ENOUGH_MEMORY;
    }
    free(w);
    DWORD type = GetFileType(h);
    if (type == FILE_TYPE_CHAR || type == FILE_TYPE_PIPE) {
        CloseHandle(h);
        *kind = RT_OS_FILE_STREAM;
        *target = dup_str(path);
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
    *kind = RT_OS_FILE_REGULAR;
    *target = n > 0 && n < 32768 ? narrow(fin) : dup_str(path);
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

int rt_os_file_create(const char *path, const char *replaces, FILE **f)
{
    (void)replaces;   /* no modes to keep: the ACL comes from the directory */
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

int rt_os_file_open_stream(const char *path, FILE **f)
{
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

bool rt_os_file_exists_error(int err)
{
    return err == ERROR_FILE_EXISTS || err == ERROR_ALREADY_EXISTS;
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

void rt_os_strerror(int err, char *buf, size_t n)
{
    if (n == 0)
        return;
    wchar_t w[512];
    DWORD l = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL,
                             (DWORD)err, 0, w, 512, NULL);
    while (l > 0 && (w[l - 1] == L'\n' || w[l - 1] == L'\r' || w[l - 1] == L'.'))
        w[--l] = 0;
    buf[0] = '\0';
    if (l == 0 || WideCharToMultiByte(CP_UTF8, 0, w, -1, buf, (int)(n < 0x7fffffff ? n : 0x7fffffff),
                                      NULL, NULL) == 0) {
        /* Too long for buf, or no text: the number then. */
        char num[32];
        int k = 0;
        for (unsigned v = (unsigned)err; v || k == 0; v /= 10)
            num[k++] = (char)('0' + v % 10);
        size_t i = 0;
        const char *pre = "system error ";
        for (; *pre && i + 1 < n; pre++)
            buf[i++] = *pre;
        while (k > 0 && i + 1 < n)
            buf[i++] = num[--k];
        buf[i] = '\0';
    }
}
