/* error.c - names for dagrt's error codes. */
#include "dagrt.h"

const char *dagrt_strerror(int err)
{
    switch (err) {
    case DAGRT_OK:        return "success";
    case DAGRT_EINVAL:    return "invalid argument";
    case DAGRT_ENOMEM:    return "out of memory";
    case DAGRT_ETHREAD:   return "thread creation failed";
    case DAGRT_EBUSY:     return "graph is already running";
    case DAGRT_ENESTED:   return "called from inside a running task";
    case DAGRT_ENOTFIBER: return "not inside a fiber task";
    case DAGRT_EDEADLK:   return "wait can never complete";
    case DAGRT_EVERSION:  return "graph descriptor version mismatch";
    case DAGRT_EPERM:     return "not allowed from this thread";
    default:              return "unknown error";
    }
}
