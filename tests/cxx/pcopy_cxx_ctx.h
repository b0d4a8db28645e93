/* The context and per-frame resource of pcopy_cxx.dag (cxx_perframe.cpp). */
#ifndef PCOPY_CXX_CTX_H
#define PCOPY_CXX_CTX_H
struct pcx_state {
    unsigned long long number;   /* the frame that wrote it */
    unsigned long long check;    /* number * 3 + 1: 0 in a copy never written */
    unsigned long long words[64];
};
struct pcx_ctx {
    int unused;
};
#endif
