#ifndef HELLO_CTX_H
#define HELLO_CTX_H
#include <stdatomic.h>
#include <stddef.h>
struct hello_ctx {
    int a[1000], b[1000];
    _Atomic long total;
    long reported;
};
#endif
