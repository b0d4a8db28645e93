#ifndef DAGC_TEST_TICK_CTX_H
#define DAGC_TEST_TICK_CTX_H
struct tick_ctx {
    int started;
    int stepped;
};
#endif
