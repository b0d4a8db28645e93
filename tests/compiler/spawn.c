#define _POSIX_C_SOURCE 200809L
#include "spawn.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *p = malloc(cap + 1);
    size_t got;
    while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *q = realloc(p, (cap *= 2) + 1);
            if (!q) { free(p); p = NULL; }
            else p = q;
        }
    }
    fclose(f);
    if (!p) return NULL;
    p[n] = 0;
    if (len) *len = n;
    return p;
}

char *make_temp_dir(void)
{
    const char *t = getenv("TMPDIR");
    char buf[512];
    snprintf(buf, sizeof buf, "%s/dagc-test-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(buf)) return NULL;
    return strdup(buf);
}

int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

int remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    char path[1024];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0) remove_dir(path); /* a directory */
        n++;
    }
    closedir(d);
    rmdir(dir);
    return n;
}

int spawn_capture(const char *cwd, char *const argv[], spawn_result *r)
{
    return spawn_io(cwd, argv, NULL, NULL, r);
}

int spawn_io(const char *cwd, char *const argv[], const char *in_path, const char *out_path,
             spawn_result *r)
{
    memset(r, 0, sizeof *r);
    char *tmp = make_temp_dir();
    if (!tmp) return -1;
    char outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s/stdout", tmp);
    snprintf(errp, sizeof errp, "%s/stderr", tmp);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int o = out_path ? open(out_path, O_WRONLY)
                         : open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int i = in_path ? open(in_path, O_RDONLY) : 0;
        if (o < 0 || e < 0 || i < 0) _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        if (in_path) dup2(i, 0);
        if (cwd && chdir(cwd) != 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {}
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r->out = slurp(outp, NULL);
    r->err = slurp(errp, NULL);
    if (!r->out) r->out = strdup("");
    if (!r->err) r->err = strdup("");
    remove_dir(tmp);
    free(tmp);
    return 0;
}

void spawn_free(spawn_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
