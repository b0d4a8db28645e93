/*
 * bench_frame_alloc_call.c - bench_frame_alloc's "frame_alloc(call)" mode:
 * dagrt_frame_alloc as the library's exported function (the form every
 * platform without the inline one gets), in a file of its own because
 * DAGRT_FRAME_ALLOC_CALL chooses the form for a whole file.
 */
#define DAGRT_FRAME_ALLOC_CALL 1
#include "dagrt.h"

#include "bench_frame_alloc.h"

int bench_frame_alloc_calls(size_t n, size_t size)
{
    for (size_t i = 0; i < n; i++) {
        char *p = dagrt_frame_alloc(size, 16);
        if (!p)
            return 1;
        p[0] = (char)i;
    }
    return 0;
}
