/* bench_frame_alloc.c's loop over dagrt_frame_alloc's call form
 * (bench_frame_alloc_call.c): n allocations of size bytes, a byte
 * written in each; 0, or 1 when one failed. */
#include <stddef.h>

int bench_frame_alloc_calls(size_t n, size_t size);
