/* core/error.c - names for dagrt's error codes, from the one list in dagrt.h,
 * and the system's reason behind the last error of each thread
 * (dagrt_last_os_error: dagrt.h says which calls set it). */
#include "dagrt.h"
#include "error.h"

#include "../os/os.h"

const char *dagrt_strerror(int err)
{
    switch (err) {
#define RT_ERR_CASE(name, value, msg) case DAGRT_##name: return msg;
    DAGRT_ERRNO_MAP(RT_ERR_CASE)
#undef RT_ERR_CASE
    default: return "unknown error";
    }
}

/* Per thread, as errno is: two threads' failures never mix. */
static _Thread_local int last_os;
static _Thread_local const char *last_what;

int rt_error_os(int os_error, const char *what)
{
    last_os = os_error;
    last_what = what;
    return DAGRT_EIO;
}

int rt_error_set(int code, int os_error)
{
    last_os = os_error;
    return code;
}

int rt_error_refuse(const char *what)
{
    last_os = 0;
    last_what = what;
    return DAGRT_EINVAL;
}

const char *rt_error_what(void)
{
    return last_what ? last_what : "";
}

int dagrt_last_os_error(void)
{
    return last_os;
}

const char *dagrt_os_strerror(int os_error, char *buf, size_t n)
{
    if (!buf || n == 0)
        return "";
    rt_os_strerror(os_error, buf, n);
    return buf;
}
