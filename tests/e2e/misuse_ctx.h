#ifndef MISUSE_CTX_H
#define MISUSE_CTX_H
#include <stdatomic.h>
#include "dagrt.h"
struct misuse_ctx {
    dagrt *rt;
    int mode;                 /* 0 plain, 1 nested call, 2 hold for a concurrent call */
    int nested_rc_first, nested_rc_second;
    _Atomic int holding;      /* mode 2: `first` is running and waits for `release` */
    _Atomic int release;
    _Atomic int runs;
};
#endif
