#ifndef DAGC_TEST_ENGINE_H
#define DAGC_TEST_ENGINE_H
/* The engine library's public header: it includes the generated headers,
 * so dagc_add_graph(... PUBLIC) puts their directory on the include path
 * of whatever links the library. */
#include "render.h"
#include "audio.h"

int engine_frame(dagrt *rt, struct engine_ctx *ctx);
#endif
