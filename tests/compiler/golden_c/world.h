/* The context of tests/compiler/golden_c/clauses.dag. */
#ifndef GOLDEN_C_WORLD_H
#define GOLDEN_C_WORLD_H
struct world {
    int frame;
};
#endif
