/* error.c - names for dagrt's error codes, from the one list in dagrt.h. */
#include "dagrt.h"

const char *dagrt_strerror(int err)
{
    switch (err) {
#define RT_ERR_CASE(name, value, msg) case DAGRT_##name: return msg;
    DAGRT_ERRNO_MAP(RT_ERR_CASE)
#undef RT_ERR_CASE
    default: return "unknown error";
    }
}
