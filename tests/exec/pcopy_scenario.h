#ifndef PCOPY_SCENARIO_H
#define PCOPY_SCENARIO_H
/* (v2.2) Per-frame copies laid out by dagc (pcopy.dag): pipelines of depth
 * 1-4, `frames` frames each, on 0, 1 and 3 workers, then an instance's
 * runs, G_run's, and the accessors outside their graph's frames. Each copy
 * read through the accessors is whole and of the right frame. Returns the
 * failed expectations (each printed to stderr). */
int pcopy_scenario(int frames);
#endif
