/*
 * core/error.h - the system's reason behind an error code (core/error.c): kept per
 * thread, handed out by dagrt_last_os_error.
 */
#ifndef DAGRT_ERROR_H
#define DAGRT_ERROR_H

/* Records os_error (the system's code, os/os.h) and what the runtime was
 * doing ("cannot create the temporary file", a static string) for the
 * calling thread; returns DAGRT_EIO so a failure path reads
 * `return rt_error_os(e, "...")`. */
int rt_error_os(int os_error, const char *what);
/* A refusal that is no system failure (a trace path naming a socket):
 * records `what` with no system error; returns DAGRT_EINVAL. */
int rt_error_refuse(const char *what);
/* Sets the calling thread's dagrt_last_os_error to os_error (0: the
 * result being returned is no system error) and returns code: the end of
 * every call that dagrt.h says sets it (`return rt_error_set(code, os)`). */
int rt_error_set(int code, int os_error);
/* The calling thread's last such `what`, or "". */
const char *rt_error_what(void);

#endif
