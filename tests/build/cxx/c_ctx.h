/* A C context type: the header dagc --cxx writes for c_graph.dag is
 * included from C (c_main.c) and from C++ (the generated c_graph.cpp). */
#ifndef DAGC_TEST_C_CTX_H
#define DAGC_TEST_C_CTX_H
struct c_ctx {
    int in[100];
    int out[100];
    long sum;
};
#endif
