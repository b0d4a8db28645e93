#ifndef FMEM_SCENARIO_H
#define FMEM_SCENARIO_H
#include <stdint.h>
/* Frame memory (fmem_scenario.c): `frames` frames of each case; returns
 * the failed expectations (each printed to stderr). */
int fmem_scenario(int frames);
/* Under ASan with FMEM_UAF=1: uses a retired frame's memory, which ASan
 * must report (the process ends); else returns 0. */
int fmem_uaf(void);
/* Where frame memory's chunks come from (fmem_slab.c): 2 MiB slabs, the
 * reserve, the system's refusal; returns the failed expectations. */
int fmem_slab_case(void);
/* Per-frame copies (fcopy.dag): pipelines of depth 1-4, `frames` frames
 * each, every copy read whole (neither torn nor stale). */
int fcopy_scenario(int frames);
/* fmem.dag's context for a run of frames (big allocations one in 61). */
struct fmem_ctx;
struct dagrt;
void fmem_ctx_init(struct fmem_ctx *c, struct dagrt *rt, uint32_t per_task, uint32_t items);
#endif
