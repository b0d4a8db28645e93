/*
 * outputs.c - dagc never damages a file (docs/language.md, "Outputs"): an
 * output that is an input is refused; symlinks, devices and FIFOs keep
 * their kind; a failure at any point leaves every old file as it was; an
 * interrupt removes the temporaries; every write error (standard output's
 * included) is exit 2 with the OS's reason; --templates reads bounded
 * regular files; the input '-' reads standard input.
 */
#define _XOPEN_SOURCE 700 /* mknod */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "spawn.h"

static const char *dagc(void)
{
    const char *p = getenv("DAGC");
    cr_assert_not_null(p, "DAGC must be set");
    return p;
}

static char *at(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void put(const char *dir, const char *name, const char *text)
{
    char *path = at(dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
    free(path);
}

static char *get(const char *dir, const char *name)
{
    char *path = at(dir, name);
    char *s = slurp(path, NULL);
    free(path);
    return s;
}

static mode_t kind_of(const char *dir, const char *name)
{
    char *path = at(dir, name);
    struct stat st;
    int rc = lstat(path, &st);
    free(path);
    return rc == 0 ? (st.st_mode & S_IFMT) : 0;
}

/* Names in DIR containing ".tmp-": temporaries left behind. */
static int temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".tmp-") != NULL;
    closedir(d);
    return n;
}

#define RUN(r, cwd, ...) do { \
        char *argv_[] = {(char *)dagc(), __VA_ARGS__, NULL}; \
        cr_assert_eq(spawn_capture(cwd, argv_, &(r)), 0); \
    } while (0)

#define OK_DAG "include \"inc.h\";\ngraph g { task a; task b after a; }\n"

Test(outputs, an_input_is_never_an_output)
{
    char *tmp = make_temp_dir();
    put(tmp, "s.dag", OK_DAG);
    put(tmp, "inc.h", "/* the include */\n");
    char *dag = at(tmp, "s.dag"), *lnk = at(tmp, "link.dag"), *hard = at(tmp, "hard.dag");
    cr_assert_eq(symlink("s.dag", lnk), 0);
    cr_assert_eq(link(dag, hard), 0);
    const char *opts[] = {"--dot", "--c", "--h", "-M"};
    const char *names[] = {"s.dag", "./s.dag", "link.dag", "hard.dag", "inc.h"};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
            spawn_result r;
            RUN(r, tmp, (char *)opts[i], (char *)names[k], "s.dag");
            cr_expect_eq(r.status, 2, "%s %s: exit %d", opts[i], names[k], r.status);
            /* (--c inc.h puts the header beside it: inc.h twice.) */
            cr_expect(strstr(r.err, "refusing to write") || strstr(r.err, "name the same file"),
                      "%s", r.err);
            spawn_free(&r);
        }
    /* -o DIR aimed at the input's own stem cannot hit the .dag (the outputs
     * are .h and .c), but an include named like one is refused. */
    put(tmp, "t.dag", "include \"t.h\";\ngraph t { task a; }\n");
    put(tmp, "t.h", "/* keep me */\n");
    spawn_result r;
    RUN(r, tmp, "t.dag");
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "refusing to write './t.h': it is the input 't.h'") != NULL, "%s", r.err);
    spawn_free(&r);
    char *s = get(tmp, "s.dag"), *inc = get(tmp, "inc.h"), *t = get(tmp, "t.h");
    cr_expect_str_eq(s, OK_DAG);
    cr_expect_str_eq(inc, "/* the include */\n");
    cr_expect_str_eq(t, "/* keep me */\n");
    cr_expect_eq(kind_of(tmp, "link.dag"), S_IFLNK);
    cr_expect_eq(count_entries(tmp), 6, "nothing written, no temporary");
    free(s); free(inc); free(t);
    free(dag); free(lnk); free(hard);
    remove_dir(tmp);
    free(tmp);
}

Test(outputs, one_file_named_twice_is_refused)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    spawn_result r;
    RUN(r, tmp, "--dot", "x", "-M", "x", "ok.dag");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "name the same output file") != NULL, "%s", r.err);
    spawn_free(&r);
    cr_expect_eq(count_entries(tmp), 1);
    remove_dir(tmp);
    free(tmp);
}

Test(outputs, a_symlink_stays_a_symlink)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    char *sub = at(tmp, "sub");
    cr_assert_eq(mkdir(sub, 0700), 0);
    put(sub, "real.dot", "old\n");
    char *l1 = at(tmp, "l1"), *l2 = at(tmp, "l2"), *dangling = at(tmp, "dangling");
    cr_assert_eq(symlink("sub/real.dot", l1), 0);
    cr_assert_eq(symlink("l1", l2), 0); /* a chain */
    cr_assert_eq(symlink("sub/new.dot", dangling), 0);
    spawn_result r;
    RUN(r, tmp, "--dot", "l2", "-M", "dangling", "ok.dag");
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    cr_expect_eq(kind_of(tmp, "l1"), S_IFLNK);
    cr_expect_eq(kind_of(tmp, "l2"), S_IFLNK);
    cr_expect_eq(kind_of(tmp, "dangling"), S_IFLNK);
    char *dot = get(sub, "real.dot"), *dep = get(sub, "new.dot");
    cr_assert_not_null(dot);
    cr_expect(strncmp(dot, "// Generated by dagc", 20) == 0, "%s", dot);
    cr_assert_not_null(dep);
    cr_expect_str_eq(dep, "l2: ok.dag\n");
    cr_expect_eq(temporaries(tmp) + temporaries(sub), 0);
    free(dot); free(dep);
    free(l1); free(l2); free(dangling); free(sub);
    remove_dir(tmp);
    free(tmp);
}

Test(outputs, devices_and_fifos_are_written_in_place, .timeout = 60)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    char *null = at(tmp, "null"), *fifo = at(tmp, "fifo");
    /* A /dev/null of our own (needs root; otherwise /dev/null itself, which
     * the run must not replace either). */
    const char *dev = null;
    int fd = -1;
    if (mknod(null, S_IFCHR | 0666, makedev(1, 3)) != 0 || (fd = open(null, O_WRONLY)) < 0)
        dev = "/dev/null"; /* not root, or a nodev file system */
    if (fd >= 0) close(fd);
    struct stat before, after;
    cr_assert_eq(stat(dev, &before), 0);
    spawn_result r;
    RUN(r, tmp, "--dot", (char *)dev, "ok.dag");
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    cr_assert_eq(stat(dev, &after), 0);
    cr_expect(S_ISCHR(after.st_mode), "still a character device");
    cr_expect_eq(before.st_ino, after.st_ino, "the same device node");

    /* A FIFO: a reader gets the whole output; the FIFO stays one. */
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    cr_assert_geq(reader, 0);
    if (reader == 0) {
        alarm(30); /* a dagc that never opens the FIFO must not hang the test */
        int in = open(fifo, O_RDONLY);
        char *copy = at(tmp, "copy");
        int out = open(copy, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[4096];
        ssize_t n;
        while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)n) != n) _exit(1);
        _exit(0);
    }
    RUN(r, tmp, "--dot", "fifo", "ok.dag");
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    int st;
    mode_t k = kind_of(tmp, "fifo");
    if (k != S_IFIFO) kill(reader, SIGKILL); /* replaced: nobody will write to the reader */
    cr_assert_eq(waitpid(reader, &st, 0), reader);
    cr_expect_eq(k, S_IFIFO);
    char *copy = get(tmp, "copy");
    cr_assert_not_null(copy);
    cr_expect(strncmp(copy, "// Generated by dagc", 20) == 0 && strstr(copy, "\n}\n"), "%s", copy);
    free(copy);
    cr_expect_eq(temporaries(tmp), 0);
    free(null); free(fifo);
    remove_dir(tmp);
    free(tmp);
}

Test(outputs, other_special_files_are_errors)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    char *d = at(tmp, "cdir");
    cr_assert_eq(mkdir(d, 0700), 0);
    put(tmp, "out.dot", "OLD\n");
    /* The case: the second output is a directory; the first must
     * not have been replaced. */
    spawn_result r;
    RUN(r, tmp, "--dot", "out.dot", "--c", "cdir", "ok.dag");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "cannot write 'cdir': Is a directory") != NULL, "%s", r.err);
    spawn_free(&r);
    char *old = get(tmp, "out.dot");
    cr_expect_str_eq(old, "OLD\n");
    free(old);
    cr_expect_eq(kind_of(tmp, "cdir"), S_IFDIR);
    cr_expect_eq(temporaries(tmp), 0);
    free(d);
    remove_dir(tmp);
    free(tmp);
}

/* A later output fails when written (the file size limit stands in for a
 * full disk): the earlier ones are not replaced, the reason is given. */
Test(outputs, a_failed_write_replaces_nothing)
{
    char *tmp = make_temp_dir();
    /* Enough tasks that the source is well over 16 KiB, the header under
     * 8 KiB. */
    char src[8192] = "graph g {\n";
    for (int i = 0; i < 150; i++)
        snprintf(src + strlen(src), sizeof src - strlen(src), "    task t%d;\n", i);
    strcat(src, "}\n");
    put(tmp, "big.dag", src);
    put(tmp, "out.h", "OLD H\n");
    put(tmp, "out.c", "OLD C\n");
    char cmd[2048];
    /* ulimit -f counts 512- or 1024-byte blocks depending on the shell: 16
     * blocks is at least 8 KiB and at most 16 KiB. SIGXFSZ ignored, so the
     * write fails with EFBIG instead of killing dagc. */
    snprintf(cmd, sizeof cmd, "trap '' XFSZ; ulimit -f 16; exec '%s' --h out.h --c out.c big.dag",
             dagc());
    char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    spawn_result r;
    cr_assert_eq(spawn_capture(tmp, argv, &r), 0);
    cr_expect_eq(r.status, 2, "%s", r.err);
    cr_expect(strstr(r.err, "cannot write 'out.c': File too large") != NULL, "%s", r.err);
    spawn_free(&r);
    const char *names[] = {"out.h", "out.c"}, *want[] = {"OLD H\n", "OLD C\n"};
    for (int i = 0; i < 2; i++) {
        char *s = get(tmp, names[i]);
        cr_expect_str_eq(s, want[i], "%s was touched", names[i]);
        free(s);
    }
    cr_expect_eq(temporaries(tmp), 0);
    remove_dir(tmp);
    free(tmp);
}

/* Standard output is an output like the others. */
Test(outputs, stdout_write_errors_are_io_errors)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    put(tmp, "out.dot", "OLD\n");
    char *cases[][5] = {
        {"--stats", "ok.dag", NULL},
        {"--help", NULL},
        {"--version", NULL},
        {"--dot", "-", "ok.dag", NULL},
        {"--stats", "--dot", "out.dot", "ok.dag", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[7] = {(char *)dagc()};
        for (int k = 0; cases[i][k]; k++) argv[k + 1] = cases[i][k];
        spawn_result r;
        cr_assert_eq(spawn_io(tmp, argv, NULL, "/dev/full", &r), 0);
        cr_expect_eq(r.status, 2, "%s: exit %d", cases[i][0], r.status);
        cr_expect_str_eq(r.err, "dagc: error: cannot write to standard output: No space left on device\n");
        spawn_free(&r);
    }
    char *dot = get(tmp, "out.dot");
    cr_expect_str_eq(dot, "OLD\n", "--stats failed before any output was committed");
    free(dot);
    remove_dir(tmp);
    free(tmp);
}

/* Starts dagc in DIR with stderr to /dev/null; returns its pid. */
static pid_t start(const char *dir, char *const argv[])
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        dup2(devnull, 1);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        if (chdir(dir) != 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* dagc blocks opening a FIFO nobody reads, after it wrote the DOT output
 * to its temporary: a signal then must remove the temporary and end dagc
 * with that signal. */
Test(outputs, a_signal_removes_the_temporaries, .timeout = 60)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        char *tmp = make_temp_dir();
        put(tmp, "ok.dag", "graph g { task a; }\n");
        put(tmp, "out.dot", "OLD\n");
        char *fifo = at(tmp, "fifo");
        cr_assert_eq(mkfifo(fifo, 0600), 0);
        char *argv[] = {(char *)dagc(), "--dot", "out.dot", "-M", "fifo", "ok.dag", NULL};
        pid_t pid = start(tmp, argv);
        /* Wait (up to 20 s) for the temporary to appear. */
        int seen = 0;
        for (int k = 0; k < 2000 && !seen; k++) {
            seen = temporaries(tmp) > 0;
            if (!seen) nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        }
        cr_assert(seen, "dagc never made its temporary");
        cr_assert_eq(kill(pid, sigs[i]), 0);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status 0x%x", sigs[i], st);
        cr_expect_eq(temporaries(tmp), 0, "signal %d left a temporary", sigs[i]);
        char *dot = get(tmp, "out.dot");
        cr_expect_str_eq(dot, "OLD\n");
        free(dot);
        free(fifo);
        remove_dir(tmp);
        free(tmp);
    }
}

Test(outputs, templates_are_bounded_regular_files)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    char *tdir = at(tmp, "tpl");
    cr_assert_eq(mkdir(tdir, 0700), 0);
    put(tdir, "source.c.tpl", "/* {{source}} */\n");
    char *h = at(tdir, "header.h.tpl");
    cr_assert_eq(symlink("/dev/zero", h), 0);
    spawn_result r;
    RUN(r, tmp, "--templates", "tpl", "ok.dag");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "cannot read 'tpl/header.h.tpl': not a regular file") != NULL, "%s", r.err);
    spawn_free(&r);
    unlink(h);
    FILE *f = fopen(h, "w");
    cr_assert_not_null(f);
    cr_assert_eq(ftruncate(fileno(f), (off_t)(1 << 20) + 1), 0);
    fclose(f);
    RUN(r, tmp, "--templates", "tpl", "ok.dag");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "cannot read 'tpl/header.h.tpl': file is larger than the 1 MiB limit") != NULL,
              "%s", r.err);
    spawn_free(&r);
    put(tdir, "header.h.tpl", "/* {{header_comment}} */\n");
    RUN(r, tmp, "--templates", "tpl", "ok.dag");
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    char *out = get(tmp, "ok.h");
    cr_expect_str_eq(out, "/* ok.h */\n");
    free(out);
    free(h);
    free(tdir);
    remove_dir(tmp);
    free(tmp);
}

Test(outputs, dash_reads_standard_input)
{
    char *tmp = make_temp_dir();
    put(tmp, "in.dag", "graph g { task a; }\n");
    put(tmp, "bad.dag", "graph g { task a after nope; }\n");
    char *in = at(tmp, "in.dag"), *bad = at(tmp, "bad.dag");
    char *argv[] = {(char *)dagc(), "-", "--dot", "-", NULL};
    spawn_result r;
    cr_assert_eq(spawn_io(tmp, argv, in, NULL, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect(strstr(r.out, "// Generated by dagc from <stdin>.") != NULL, "%s", r.out);
    spawn_free(&r);
    cr_assert_eq(spawn_io(tmp, argv, bad, NULL, &r), 0);
    cr_expect_eq(r.status, 1);
    cr_expect(strncmp(r.err, "<stdin>:1:24: error: unknown name 'nope'", 40) == 0, "%s", r.err);
    spawn_free(&r);
    /* C output is named after the stem "stdin". */
    char *argv2[] = {(char *)dagc(), "-", NULL};
    cr_assert_eq(spawn_io(tmp, argv2, in, NULL, &r), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    spawn_free(&r);
    char *h = get(tmp, "stdin.h");
    cr_expect(h && strstr(h, "generated by dagc from <stdin>"), "%s", h ? h : "(no stdin.h)");
    free(h);
    /* Standard input redirected from a file: that file is an input too. */
    char *argv3[] = {(char *)dagc(), "-", "--dot", "in.dag", NULL};
    cr_assert_eq(spawn_io(tmp, argv3, in, NULL, &r), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "refusing to write 'in.dag': it is the input '<stdin>'") != NULL, "%s", r.err);
    spawn_free(&r);
    char *s = get(tmp, "in.dag");
    cr_expect_str_eq(s, "graph g { task a; }\n");
    free(s);
    free(in);
    free(bad);
    remove_dir(tmp);
    free(tmp);
}

/* Standard output's reader is gone (a closed pipe) while other outputs
 * wait in their temporaries: dagc dies of SIGPIPE, leaving nothing. */
Test(outputs, a_closed_pipe_leaves_nothing, .timeout = 60)
{
    char *tmp = make_temp_dir();
    put(tmp, "ok.dag", "graph g { task a; }\n");
    put(tmp, "ok.h", "OLD\n");
    char *argv[] = {(char *)dagc(), "--dot", "-", "-o", ".", "ok.dag", NULL};
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    close(fds[0]);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);
        signal(SIGPIPE, SIG_DFL);
        if (chdir(tmp) != 0) _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "status 0x%x", st);
    cr_expect_eq(temporaries(tmp), 0);
    char *h = get(tmp, "ok.h");
    cr_expect_str_eq(h, "OLD\n");
    free(h);
    cr_expect_eq(count_entries(tmp), 2);
    remove_dir(tmp);
    free(tmp);
}
