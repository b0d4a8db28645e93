/* scenario.c - the plain driver's work (scenario.h), shared by every suite. */
#include "scenario.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>
#if defined(_WIN32)
#  include <pthread.h>
#else
#  include <signal.h>
#endif

/* Long enough for any scenario at full scale under TSan on a loaded machine;
 * Meson's own timeout is the tighter one. */
#define WATCHDOG_S 600

const scenario *scenario_find(const scenario *list, const char *name)
{
    for (const scenario *s = list; s->name; s++)
        if (strcmp(s->name, name) == 0)
            return s;
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "scenario driver: timed out (hang or lost wake-up)\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    _exit(3);
}

#if defined(_WIN32)
/* No SIGALRM on Windows: a watchdog thread does the alarm's work. */
static void *watchdog(void *arg)
{
    sleep((unsigned)(uintptr_t)arg);
    on_alarm(0);
    return NULL;
}

static void start_watchdog(unsigned s)
{
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)s) == 0)
        pthread_detach(t);
}
#else
static void start_watchdog(unsigned s)
{
    signal(SIGALRM, on_alarm);
    alarm(s);
}
#endif

static int run_one(const scenario *s)
{
    int v = s->fn();
    printf("%-24s %s (%d violations)\n", s->name, v ? "FAIL" : "ok", v);
    fflush(stdout);
    return v != 0;
}

int scenario_main(int argc, char **argv, const scenario *list)
{
    /* A child process: its entry decides everything, exit status included. */
    if (argc == 2 || argc == 3) {
        const scenario *c = scenario_find(list, argv[1]);
        if (c && c->child)
            return c->child(argc == 3 ? argv[2] : "");
    }
    for (int a = 1; a < argc; a++) {
        const scenario *s = scenario_find(list, argv[a]);
        if (!s || !s->fn) {
            fprintf(stderr, "%s: unknown scenario %s\n", argv[0], argv[a]);
            return 2;
        }
    }
    start_watchdog(WATCHDOG_S);
    int failed = 0;
    if (argc < 2) {
        for (const scenario *s = list; s->name; s++)
            if (s->fn)
                failed += run_one(s);
    } else {
        for (int a = 1; a < argc; a++)
            failed += run_one(scenario_find(list, argv[a]));
    }
    return failed ? 1 : 0;
}
