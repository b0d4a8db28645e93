#ifndef DAGC_TEST_ENGINE_CTX_H
#define DAGC_TEST_ENGINE_CTX_H
/* The context both of the engine library's graphs share. */
struct engine_ctx {
    int drawn;
    int presented;
    int mixed;
};
#endif
