#define _POSIX_C_SOURCE 200809L
#include "output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int dg_out_open(dg_outfile *o, const char *path, char *err, size_t errsz)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    if (strcmp(path, "-") == 0) {
        o->fp = stdout;
        return 0;
    }
    size_t n = strlen(path);
    o->tmp = malloc(n + 16);
    if (!o->tmp) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    /* Same directory as the target, so rename() is atomic. */
    snprintf(o->tmp, n + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(err, errsz, "cannot create '%s': %s", path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    /* mkstemp makes 0600; outputs get the usual 0666 & ~umask. */
    mode_t m = umask(0);
    umask(m);
    (void)fchmod(fd, 0666 & ~m);
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        snprintf(err, errsz, "cannot create '%s': %s", path, strerror(errno));
        close(fd);
        unlink(o->tmp);
        free(o->tmp);
        o->tmp = NULL;
        return -1;
    }
    return 0;
}

int dg_out_commit(dg_outfile *o, char *err, size_t errsz)
{
    if (!o->fp) return 0;
    if (!o->tmp) { /* stdout */
        int bad = fflush(o->fp) != 0 || ferror(o->fp);
        o->fp = NULL;
        if (bad) {
            snprintf(err, errsz, "cannot write to standard output: %s", strerror(errno));
            return -1;
        }
        return 0;
    }
    int bad = ferror(o->fp);
    if (fclose(o->fp) != 0) bad = 1;
    o->fp = NULL;
    if (bad) {
        snprintf(err, errsz, "cannot write '%s': %s", o->path, strerror(errno ? errno : EIO));
        unlink(o->tmp);
    } else if (rename(o->tmp, o->path) != 0) {
        snprintf(err, errsz, "cannot write '%s': %s", o->path, strerror(errno));
        unlink(o->tmp);
        bad = 1;
    }
    free(o->tmp);
    o->tmp = NULL;
    return bad ? -1 : 0;
}

void dg_out_abort(dg_outfile *o)
{
    if (o->fp && o->tmp) fclose(o->fp);
    if (o->tmp) {
        unlink(o->tmp);
        free(o->tmp);
    }
    o->fp = NULL;
    o->tmp = NULL;
}
