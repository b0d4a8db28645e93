/*
 * output.c - the all-or-nothing output set (output.h). The order of the
 * steps is what makes the guarantee, so it lives here, once; the system
 * calls behind each step are the file writer that dagc shares with the
 * runtime's trace writer (runtime/os/file.h: symlinks followed,
 * temporaries beside their targets, one-step renames, compiled into dagc
 * too) and output_posix.c / output_win32.c (identities, signals, backups,
 * memory streams).
 */
#include "output.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/os/file.h"
#include "os.h"
#include "output_os.h"
#include "util.h"

struct dg_outfile {
    const char *path;     /* as given */
    char *target;         /* the file written: path with symlinks followed */
    rt_os_file_kind kind; /* never RT_OS_FILE_OTHER (refused) */
    bool is_stdout;
    dg_os_id id;          /* of the existing target */
    dg_os_id dir;         /* of the directory holding target */
    FILE *fp;             /* what the caller writes to, until finished */
    char *tmp;            /* temporary beside target (new and regular files) */
    char *backup;         /* the replaced file, kept during the commit */
    bool replaced;        /* renamed into place by this commit */
    bool unchanged;       /* the new bytes equal the old: left untouched */
    FILE *direct;         /* devices and FIFOs: opened when added */
    char *mem;            /* stdout, devices, FIFOs: the bytes, until commit */
    size_t memlen;
};

/* ------------------------------------------------------ the file writer */

/* Follows PATH's symlinks to the file an output really replaces: *target
 * (malloc'd) and its kind. Errors: EISDIR for a directory, EINVAL for
 * another kind of file that is not written (socket, block device), ELOOP. */
static int resolve(const char *path, char **target, rt_os_file_kind *kind)
{
    int e = rt_os_file_resolve(path, target, kind);
    if (e) {
        e = dg_os_errno(e);
        if (e != ENOENT) return e;
        /* What the system cannot find (on Windows a missing directory too):
         * a new file, whose temporary then fails with the reason. */
        *target = dg_xmalloc(strlen(path) + 1);
        strcpy(*target, path);
        *kind = RT_OS_FILE_NEW;
    }
    if (*kind == RT_OS_FILE_OTHER) {
        free(*target);
        *target = NULL;
        return EINVAL;
    }
    return 0;
}

/* Creates an empty temporary beside TARGET (same directory, a name with
 * ".tmp-" in it) and opens it for writing; *tmp is its malloc'd name. The
 * new file gets the mode of the file it replaces, or the usual 0666 &
 * ~umask. The name is registered for removal on a signal (output_tmp.c)
 * until dg_os_forget(). */
static int temp_create(const char *target, char **tmp, FILE **fp)
{
    size_t n = strlen(target) + RT_OS_FILE_TEMP_EXTRA;
    char *name = dg_xmalloc(n);
    FILE *f = NULL;
    /* Created and registered with signals held: a signal in between would
     * otherwise leave the file behind. */
    dg_os_hold_signals();
    int e = rt_os_file_temp(target, name, n, &f);
    e = e ? dg_os_errno(e) : dg_os_remember(name);
    if (e && f) {
        fclose(f);
        (void)rt_os_file_remove(name);
    }
    dg_os_release_signals();
    if (e) {
        free(name);
        return e;
    }
    *tmp = name;
    *fp = f;
    return 0;
}

/* Removes PATH; errors are ignored. */
static void remove_file(const char *path)
{
    (void)rt_os_file_remove(path);
}

/* Renames FROM over TO, in one step. */
static int rename_over(const char *from, const char *to)
{
    int e = rt_os_file_replace(from, to);
    return e ? dg_os_errno(e) : 0;
}

/* ------------------------------------------------------------ the set */

void dg_outset_init(dg_outset *s, const char *const *inputs, size_t ninputs)
{
    memset(s, 0, sizeof *s);
    s->inputs = inputs;
    s->ninputs = ninputs;
    dg_os_signals_install();
}

static void set_err(char *err, size_t errsz, const char *what, const char *path, int e)
{
    snprintf(err, errsz, "%s '%s': %s", what, path, strerror(e ? e : EIO));
}

static bool same_id(dg_os_id a, dg_os_id b)
{
    return a.valid && b.valid && a.dev == b.dev && a.ino == b.ino;
}

/* Whether two base names name one entry of a directory: Windows' file
 * systems ignore case. */
static bool same_base(const char *a, const char *b)
{
#if defined(_WIN32)
    for (; *a && *b; a++, b++) {
        int ca = *a >= 'A' && *a <= 'Z' ? *a + 32 : *a, cb = *b >= 'A' && *b <= 'Z' ? *b + 32 : *b;
        if (ca != cb) return false;
    }
    return *a == *b;
#else
    return strcmp(a, b) == 0;
#endif
}

/* The identity of the directory that holds TARGET. */
static dg_os_id dir_of(const char *target)
{
    const char *base = dg_path_base(target);
    if (base == target) return dg_os_file_id(".");
    size_t n = (size_t)(base - target);
    char *dir = dg_xmalloc(n + 1);
    memcpy(dir, target, n);
    dir[n] = 0;
    dg_os_id id = dg_os_file_id(dir);
    free(dir);
    return id;
}

/* Whether two outputs replace the same directory entry: the same directory
 * (whatever its spelling) and the same base name. Not the files' own
 * identities: while another dagc run commits the same outputs, renames and
 * unlinks free inodes that its next temporaries reuse, so identities taken
 * at two moments can match for two different names. Two names that are
 * hard links of one file are two entries, each replaced on its own. */
static bool same_entry(const dg_outfile *a, const dg_outfile *b)
{
    if (strcmp(a->target, b->target) == 0) return true;
    return same_id(a->dir, b->dir) && same_base(dg_path_base(a->target), dg_path_base(b->target));
}

/* The checks made before anything is created: an output must not be one of
 * the inputs, nor a file another output writes. Devices and FIFOs are not
 * damaged by being written, so only files that would be replaced count. */
static int check_clash(const dg_outset *s, const dg_outfile *f, char *err, size_t errsz)
{
    if (f->kind != RT_OS_FILE_STREAM || f->is_stdout) {
        for (size_t i = 0; i < s->n; i++) {
            const dg_outfile *o = s->f[i];
            bool same = f->is_stdout ? o->is_stdout
                                     : !o->is_stdout && o->kind != RT_OS_FILE_STREAM && same_entry(f, o);
            if (same) {
                snprintf(err, errsz, "'%s' and '%s' name the same output file", o->path, f->path);
                return -1;
            }
        }
    }
    if (f->kind != RT_OS_FILE_REGULAR) return 0;
    for (size_t i = 0; i < s->ninputs; i++)
        if (same_id(f->id, dg_os_file_id(s->inputs[i]))) {
            const char *in = strcmp(s->inputs[i], "-") == 0 ? "<stdin>" : s->inputs[i];
            if (strcmp(in, f->path) == 0)
                snprintf(err, errsz, "refusing to write '%s': it is an input of this run", f->path);
            else
                snprintf(err, errsz, "refusing to write '%s': it is the input '%s'", f->path, in);
            return -1;
        }
    return 0;
}

static void outfile_free(dg_outfile *f)
{
    if (f->fp && f->fp != stdout) dg_os_stream_close(f->fp);
    if (f->direct) fclose(f->direct);
    if (f->tmp) {
        remove_file(f->tmp);
        dg_os_forget(f->tmp);
    }
    free(f->tmp);
    free(f->backup);
    free(f->mem);
    free(f->target);
    free(f);
}

FILE *dg_outset_add(dg_outset *s, const char *path, char *err, size_t errsz)
{
    if (s->n == DG_OUT_MAX) {
        snprintf(err, errsz, "too many output files");
        return NULL;
    }
    dg_outfile *f = dg_xcalloc(1, sizeof *f);
    f->path = path;
    int e;
    if (strcmp(path, "-") == 0) {
        f->is_stdout = true;
        f->kind = RT_OS_FILE_STREAM;
    } else if ((e = resolve(path, &f->target, &f->kind)) != 0) {
        if (e == EINVAL)
            snprintf(err, errsz, "cannot write '%s': not a regular file, character device or FIFO", path);
        else
            set_err(err, errsz, "cannot write", path, e);
        free(f);
        return NULL;
    } else {
        f->id = dg_os_file_id(f->target);
        f->dir = dir_of(f->target);
    }
    if (check_clash(s, f, err, errsz) != 0) {
        outfile_free(f);
        return NULL;
    }
    if (f->kind != RT_OS_FILE_STREAM) {
        e = temp_create(f->target, &f->tmp, &f->fp);
        if (e) set_err(err, errsz, "cannot create", path, e);
    } else {
        /* A FIFO's reader is waited for, as any program writing it would. */
        e = f->is_stdout ? 0 : rt_os_file_open_stream(f->target, true, &f->direct);
        e = e ? dg_os_errno(e) : 0;
        if (e == EINVAL)
            snprintf(err, errsz, "cannot write '%s': it changed while dagc opened it", path);
        else if (e)
            set_err(err, errsz, "cannot open", path, e);
        if (!e && (e = dg_os_memory_stream(&f->mem, &f->memlen, &f->fp)) != 0)
            set_err(err, errsz, "cannot write", path, e);
    }
    if (e) {
        outfile_free(f);
        return NULL;
    }
    s->f[s->n++] = f;
    /* So that a failing write's reason is the write's own. */
    errno = 0;
    return f->fp;
}

static int finish_one(dg_outfile *f, char *err, size_t errsz)
{
    int e = ferror(f->fp) ? (errno ? errno : EIO) : 0;
    if (fflush(f->fp) != 0 && !e) e = errno;
    if (dg_os_stream_close(f->fp) != 0 && !e) e = errno;
    f->fp = NULL;
    if (e) {
        set_err(err, errsz, "cannot write", f->path, e);
        return -1;
    }
    return 0;
}

int dg_outset_finish(dg_outset *s, char *err, size_t errsz)
{
    if (s->n == 0 || !s->f[s->n - 1]->fp) return 0;
    return finish_one(s->f[s->n - 1], err, errsz);
}

/* Writes an output that cannot be replaced: standard output, a device or a
 * FIFO. */
static int write_direct(dg_outfile *f, char *err, size_t errsz)
{
    FILE *o = f->is_stdout ? stdout : f->direct;
    errno = 0;
    int e = 0;
    if (f->memlen && fwrite(f->mem, 1, f->memlen, o) != f->memlen) e = errno ? errno : EIO;
    if (fflush(o) != 0 && !e) e = errno;
    if (!f->is_stdout) {
        if (fclose(o) != 0 && !e) e = errno;
        f->direct = NULL;
    }
    if (e) {
        if (f->is_stdout) snprintf(err, errsz, "cannot write to standard output: %s", strerror(e));
        else set_err(err, errsz, "cannot write", f->path, e);
        return -1;
    }
    return 0;
}

/* Puts back every file this commit replaced; a file it cannot restore
 * gets a note appended to err. */
static void roll_back(dg_outset *s, char *err, size_t errsz)
{
    for (size_t i = 0; i < s->n; i++) {
        dg_outfile *f = s->f[i];
        int e = 0;
        if (f->backup) {
            e = rename_over(f->backup, f->target);
            if (!e) {
                /* Where the target was never replaced, both names are one
                 * file and rename() leaves both: drop the extra name. */
                remove_file(f->backup);
                free(f->backup);
                f->backup = NULL;
            }
        } else if (f->replaced) {
            remove_file(f->target); /* it did not exist before */
        }
        if (e) {
            size_t n = strlen(err);
            snprintf(err + n, errsz - n, "; could not restore '%s' (%s): its old contents are in '%s'",
                     f->path, strerror(e), f->backup);
            free(f->backup); /* keep the file, forget the name */
            f->backup = NULL;
        }
        f->replaced = false;
    }
}

/* Whether files A and B hold the same bytes. Anything that cannot be read
 * counts as a difference: the file is then replaced, as it always was. */
static bool same_bytes(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fa ? fopen(b, "rb") : NULL;
    bool same = fa && fb;
    char ba[8192], bb[8192];
    while (same) {
        size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
        if (na != nb || memcmp(ba, bb, na) != 0) same = false;
        else if (na == 0) break;
    }
    if (fa && (ferror(fa) || (fb && ferror(fb)))) same = false;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

int dg_outset_commit(dg_outset *s, char *err, size_t errsz)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->f[i]->fp && finish_one(s->f[i], err, errsz) != 0) goto fail;
    /* An output whose new bytes equal the old keeps its file, inode and
     * modification time, so a build tool with restat (Ninja, CMake, Meson)
     * recompiles nothing that includes it. Compared before the renames:
     * reading is slow and needs no signals held. */
    for (size_t i = 0; i < s->n; i++) {
        dg_outfile *f = s->f[i];
        if (s->rewrite_unchanged || f->kind != RT_OS_FILE_REGULAR || !same_bytes(f->tmp, f->target))
            continue;
        f->unchanged = true;
        remove_file(f->tmp);
        dg_os_forget(f->tmp);
        free(f->tmp);
        f->tmp = NULL;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->f[i]->kind == RT_OS_FILE_STREAM && write_direct(s->f[i], err, errsz) != 0) goto fail;

    /* The renames, with signals held so that an interrupt cannot stop the
     * commit half way: either every file is replaced or, on an error, every
     * replaced file is put back from the link kept beside it. */
    dg_os_hold_signals();
    int nrename = 0;
    for (size_t i = 0; i < s->n; i++) {
        dg_outfile *f = s->f[i];
        if (f->kind == RT_OS_FILE_STREAM || f->unchanged) continue;
        int e = 0;
        if (f->kind == RT_OS_FILE_REGULAR) {
            size_t n = strlen(f->tmp);
            f->backup = dg_xmalloc(n + sizeof ".old");
            memcpy(f->backup, f->tmp, n);
            memcpy(f->backup + n, ".old", sizeof ".old");
            e = dg_os_keep(f->target, f->backup);
            if (e) {
                free(f->backup);
                f->backup = NULL;
            }
            if (e == ENOENT) e = 0; /* removed meanwhile: nothing to keep */
            if (e) {
                set_err(err, errsz, "cannot replace", f->path, e);
                roll_back(s, err, errsz);
                dg_os_release_signals();
                goto fail;
            }
        }
        e = ++nrename == s->fail_rename_at ? EIO : rename_over(f->tmp, f->target);
        if (e) {
            set_err(err, errsz, "cannot write", f->path, e);
            roll_back(s, err, errsz);
            dg_os_release_signals();
            goto fail;
        }
        f->replaced = true;
        dg_os_forget(f->tmp);
        free(f->tmp);
        f->tmp = NULL;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->f[i]->backup) remove_file(s->f[i]->backup);
    dg_outset_abort(s);
    dg_os_release_signals();
    return 0;
fail:
    dg_outset_abort(s);
    return -1;
}

void dg_outset_abort(dg_outset *s)
{
    for (size_t i = 0; i < s->n; i++) outfile_free(s->f[i]);
    s->n = 0;
}
