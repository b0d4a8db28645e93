/* tsan_driver.c - plain host for the runtime scenarios (suite `tsan`):
 * `tsan_driver NAME` runs one scenario, exit status 0 when it saw no
 * violations. An alarm turns a hang (a lost wake-up) into a failure. */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#if defined(_WIN32)
#  include <pthread.h>
#endif

#include "scenarios.h"

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "tsan_driver: timed out (hang or lost wake-up)\n";
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

static void start_alarm(unsigned s)
{
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)s) == 0)
        pthread_detach(t);
}
#else
static void start_alarm(unsigned s)
{
    signal(SIGALRM, on_alarm);
    alarm(s);
}
#endif

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s SCENARIO\n", argv[0]);
        return 2;
    }
    start_alarm(600);
    for (const scenario *s = scenarios; s->name; s++)
        if (strcmp(s->name, argv[1]) == 0) {
            int v = s->fn();
            if (v)
                fprintf(stderr, "%s: %d violations\n", s->name, v);
            return v ? 1 : 0;
        }
    fprintf(stderr, "unknown scenario %s\n", argv[1]);
    return 2;
}
