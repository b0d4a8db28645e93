/*
 * os_win32.c - dagc's system seam (os.h) on Windows: drive letters and
 * backslashes in paths, paths UTF-8 in dagc and UTF-16 for the system,
 * binary standard streams.
 */
#define WIN32_LEAN_AND_MEAN
#include "os.h"

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <windows.h>

#include "util.h"

static dg_os_file_kind kind_of(unsigned short mode)
{
    return S_ISREG(mode) ? DG_OS_FILE_REGULAR : S_ISDIR(mode) ? DG_OS_FILE_DIR : DG_OS_FILE_OTHER;
}

const char *dg_path_base(const char *path)
{
    const char *b = path;
    for (const char *p = path; *p; p++)
        if (*p == '/' || *p == '\\' || (*p == ':' && p == path + 1)) b = p + 1;
    return b;
}

int dg_path_is_abs(const char *path)
{
    if (path[0] == '\\') return 1;
    if (((path[0] | 0x20) >= 'a' && (path[0] | 0x20) <= 'z') && path[1] == ':' &&
        (path[2] == '\\' || path[2] == '/'))
        return 1;
    return path[0] == '/';
}

char *dg_realpath(const char *path)
{
    int n = MultiByteToWideChar(CP_UTF8, 0, path, -1, NULL, 0);
    if (n <= 0) {
        errno = ENOENT;
        return NULL;
    }
    wchar_t *w = dg_xmalloc((size_t)n * sizeof *w);
    MultiByteToWideChar(CP_UTF8, 0, path, -1, w, n);
    HANDLE h = CreateFileW(w, 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, NULL,
                           OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, NULL);
    free(w);
    if (h == INVALID_HANDLE_VALUE) {
        DWORD e = GetLastError();
        errno = e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND || e == ERROR_INVALID_NAME
              ? ENOENT : EACCES;
        return NULL;
    }
    wchar_t buf[4 * MAX_PATH];
    DWORD len = GetFinalPathNameByHandleW(h, buf, 4 * MAX_PATH, FILE_NAME_NORMALIZED);
    CloseHandle(h);
    if (len == 0 || len >= 4 * MAX_PATH) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    const wchar_t *p = wcsncmp(buf, L"\\\\?\\", 4) == 0 ? buf + 4 : buf;
    n = WideCharToMultiByte(CP_UTF8, 0, p, -1, NULL, 0, NULL, NULL);
    char *s = dg_xmalloc((size_t)n);
    WideCharToMultiByte(CP_UTF8, 0, p, -1, s, n, NULL, NULL);
    return s;
}

int dg_os_exists(const char *path)
{
    return _access(path, 0) == 0;
}

int dg_os_open_read(const char *path, int regular_only, FILE **fp, dg_os_file_kind *kind)
{
    struct stat st;
    *kind = DG_OS_FILE_UNKNOWN;
    /* Checked before opening too: opening a pipe would wait for a writer. */
    if (regular_only && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        *kind = kind_of(st.st_mode);
        *fp = NULL;
        return 0;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return errno;
    *fp = f;
    return 0;
}

dg_os_file_kind dg_os_stream_kind(FILE *fp)
{
    struct stat st;
    if (fstat(_fileno(fp), &st) != 0) return DG_OS_FILE_UNKNOWN;
    return kind_of(st.st_mode);
}

void dg_os_binary_stdio(void)
{
    /* The bytes are the Linux build's, no CRLF. */
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    _setmode(_fileno(stdin), _O_BINARY);
}

int dg_os_is_terminal(FILE *fp)
{
    return _isatty(_fileno(fp));
}

long dg_os_read_some(FILE *fp, void *buf, size_t n)
{
    int r = _read(_fileno(fp), buf, n > 0x40000000u ? 0x40000000u : (unsigned)n);
    return r;
}

int dg_os_input_ready(FILE *fp)
{
    /* A pipe (what an editor gives its server) says what it holds; a
     * console or a file cannot be asked without waiting. */
    HANDLE h = (HANDLE)_get_osfhandle(_fileno(fp));
    DWORD avail = 0;
    if (h == INVALID_HANDLE_VALUE || GetFileType(h) != FILE_TYPE_PIPE) return -1;
    if (!PeekNamedPipe(h, NULL, 0, NULL, &avail, NULL)) return -1;
    return avail > 0;
}

int dg_os_list_dir(const char *dir, void (*each)(void *user, const char *name, int is_dir),
                   void *user)
{
    char pat[4096];
    if (snprintf(pat, sizeof pat, "%s\\*", dir) >= (int)sizeof pat) return ENAMETOOLONG;
    WIN32_FIND_DATAA fd;
    HANDLE h = FindFirstFileA(pat, &fd);
    if (h == INVALID_HANDLE_VALUE) return ENOENT;
    do {
        if (strcmp(fd.cFileName, ".") == 0 || strcmp(fd.cFileName, "..") == 0) continue;
        each(user, fd.cFileName, (fd.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) != 0);
    } while (FindNextFileA(h, &fd));
    FindClose(h);
    return 0;
}

void dg_os_keep_freed_memory(void)
{
    /* The Windows heap keeps what it frees for the process already. */
}
