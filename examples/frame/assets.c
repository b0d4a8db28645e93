/*
 * assets.c - the streamed world's files: one file per row x of the
 * streaming grid, GAME_CELLS cells of GAME_CELL_BYTES each, cell z at
 * offset z * GAME_CELL_BYTES. The bytes of a cell come from a generator
 * seeded by the cell (cell_fill), so the checksum each read must match is
 * known without the file: game_assets_open computes it from the generator,
 * and the streaming task (game.c) checks every cell it reads against it.
 *
 * The files are written on first use into the directory given (beside the
 * program's outputs, never the source tree), each through a temporary name
 * and a rename, so that several runs starting at once (the tests do) never
 * read a half-written file: each writes the same bytes, and the rename is
 * all or nothing. The writes go through the reactor too (dagrt_write from
 * the main thread, which blocks until they are done).
 */
#if !defined(_WIN32)
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "game.h"

#ifdef _WIN32
#include <windows.h>
#else
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

#define ROW_BYTES ((int64_t)GAME_CELLS * GAME_CELL_BYTES)

/* ------------------------------------------------ the system's side */

#ifdef _WIN32
static int os_mkdir(const char *p)
{
    return CreateDirectoryA(p, NULL) || GetLastError() == ERROR_ALREADY_EXISTS ? 0 : -1;
}
/* An existing file for reading and its size, or -1. */
static dagrt_handle os_open_read(const char *p, int64_t *size)
{
    HANDLE h = CreateFileA(p, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_DELETE, NULL, OPEN_EXISTING,
                           FILE_ATTRIBUTE_NORMAL, NULL);
    LARGE_INTEGER sz;
    if (h == INVALID_HANDLE_VALUE)
        return -1;
    if (!GetFileSizeEx(h, &sz)) {
        CloseHandle(h);
        return -1;
    }
    *size = sz.QuadPart;
    return (dagrt_handle)h;
}
static dagrt_handle os_create(const char *p)
{
    HANDLE h = CreateFileA(p, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
    return h == INVALID_HANDLE_VALUE ? -1 : (dagrt_handle)h;
}
static int os_replace(const char *from, const char *to)
{
    return MoveFileExA(from, to, MOVEFILE_REPLACE_EXISTING) ? 0 : -1;
}
static void os_remove(const char *p) { DeleteFileA(p); }
static unsigned long os_pid(void) { return (unsigned long)GetCurrentProcessId(); }
static const char *os_why(void) { return "a Windows file call failed"; }
#else
static int os_mkdir(const char *p) { return mkdir(p, 0777) == 0 || errno == EEXIST ? 0 : -1; }
static dagrt_handle os_open_read(const char *p, int64_t *size)
{
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    *size = (int64_t)st.st_size;
    return fd;
}
static dagrt_handle os_create(const char *p)
{
    return open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}
static int os_replace(const char *from, const char *to) { return rename(from, to); }
static void os_remove(const char *p) { unlink(p); }
static unsigned long os_pid(void) { return (unsigned long)getpid(); }
static const char *os_why(void) { return strerror(errno); }
#endif

/* ------------------------------------------------ the cells' bytes */

/* Cell (x, z)'s bytes: a xorshift stream seeded by the cell, stored
 * little-endian so that the files are the same on every machine. */
static void cell_fill(int x, int z, unsigned char *out)
{
    uint32_t s = 0x9e3779b9u ^ (uint32_t)(x * GAME_CELLS + z + 1) * 0x85ebca6bu;
    for (int i = 0; i < GAME_CELL_BYTES; i += 4) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        out[i] = (unsigned char)s;
        out[i + 1] = (unsigned char)(s >> 8);
        out[i + 2] = (unsigned char)(s >> 16);
        out[i + 3] = (unsigned char)(s >> 24);
    }
}

uint64_t game_cell_sum(const unsigned char *b, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;   /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* ------------------------------------------------ writing and opening */

static int fail(char *why, size_t len, const char *what, const char *path, const char *reason)
{
    snprintf(why, len, "%s %s: %s", what, path, reason);
    return -1;
}

/* Writes row x to path through a temporary file and a rename. */
static int write_row(dagrt *rt, const char *path, int x, char *why, size_t len)
{
    static unsigned char row[GAME_CELLS * GAME_CELL_BYTES];
    for (int z = 0; z < GAME_CELLS; z++)
        cell_fill(x, z, row + (size_t)z * GAME_CELL_BYTES);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s.%lu.tmp", path, os_pid());
    dagrt_handle h = os_create(tmp);
    if (h == -1)
        return fail(why, len, "cannot create", tmp, os_why());
    int64_t done = 0;
    while (done < ROW_BYTES) {
        int64_t r = dagrt_write(rt, h, row + done, (size_t)(ROW_BYTES - done), done, NULL);
        if (r <= 0) {
            dagrt_close(rt, h);
            os_remove(tmp);
            return fail(why, len, "cannot write", tmp, r < 0 ? dagrt_strerror((int)r) : "nothing written");
        }
        done += r;
    }
    int rc = dagrt_close(rt, h);
    if (rc != 0) {
        os_remove(tmp);
        return fail(why, len, "cannot close", tmp, dagrt_strerror(rc));
    }
    if (os_replace(tmp, path) != 0) {
        /* Windows refuses to replace a file another run has open: that run
         * put the same bytes in place (the reads check every cell). */
        int64_t size = 0;
        dagrt_handle there = os_open_read(path, &size);
        if (there != -1) {
            dagrt_close(rt, there);
            if (size == ROW_BYTES) {
                os_remove(tmp);
                return 0;
            }
        }
        fail(why, len, "cannot rename into place", path, os_why());
        os_remove(tmp);
        return -1;
    }
    return 0;
}

int game_assets_open(struct game_assets *a, dagrt *rt, const char *dir, char *why, size_t len)
{
    memset(a, 0, sizeof *a);
    for (int x = 0; x < GAME_CELLS; x++)
        a->row[x] = -1;
    static unsigned char cell[GAME_CELL_BYTES];
    for (int x = 0; x < GAME_CELLS; x++)
        for (int z = 0; z < GAME_CELLS; z++) {
            cell_fill(x, z, cell);
            a->sum[x][z] = game_cell_sum(cell, sizeof cell);
        }
    if (snprintf(a->dir, sizeof a->dir, "%s", dir) >= (int)sizeof a->dir)
        return fail(why, len, "path too long:", dir, "at most 1023 bytes");
    if (os_mkdir(dir) != 0)
        return fail(why, len, "cannot make the directory", dir, os_why());
    for (int x = 0; x < GAME_CELLS; x++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/cells_%02d.bin", dir, x);
        int64_t size = -1;
        dagrt_handle h = os_open_read(path, &size);
        if (h == -1 || size != ROW_BYTES) {
            /* Missing, or not what this program writes: (re)write it. */
            if (h != -1)
                dagrt_close(rt, h);
            if (write_row(rt, path, x, why, len) != 0) {
                game_assets_close(a, rt);
                return -1;
            }
            a->written++;
            h = os_open_read(path, &size);
        }
        if (h == -1) {
            fail(why, len, "cannot open", path, os_why());
            game_assets_close(a, rt);
            return -1;
        }
        a->row[x] = h;
    }
    return 0;
}

void game_assets_close(struct game_assets *a, dagrt *rt)
{
    for (int x = 0; x < GAME_CELLS; x++)
        if (a->row[x] != -1) {
            dagrt_close(rt, a->row[x]);
            a->row[x] = -1;
        }
}
