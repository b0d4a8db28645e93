/* The context and the per-frame resource of pcopy.dag (pcopy_scenario.c). */
#ifndef PCOPY_CTX_H
#define PCOPY_CTX_H
#include <stdatomic.h>
#include <stdint.h>

#define PCOPY_WORDS 512
/* One frame's copy: its frame's number and words made from it; `tag` is
 * never 0 once written, so a copy no frame wrote (zeroed by the init)
 * shows. */
struct pcopy_snap {
    uint64_t tag;
    uint64_t number;
    uint64_t words[PCOPY_WORDS];
};

struct pcopy_ctx {
    _Atomic int bad;
    _Atomic uint64_t reads;            /* copies found whole and of the right frame */
    _Atomic uint64_t unwritten;        /* previous copies no frame had written yet */
    _Atomic int probe_null;            /* graph other's probe got NULL from both */
};
#endif
