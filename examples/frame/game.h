/*
 * game.h - the example game's state: what the frame graph's tasks read and
 * write. Each task owns the arrays it writes; the graph's edges order the
 * readers after the writers, so no task needs a lock.
 */
#ifndef GAME_H
#define GAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define GAME_BODIES    4096
#define GAME_BOXES     8192
#define GAME_PARTICLES 16384
#define GAME_AGENTS    512
#define GAME_SKELETONS 128
#define GAME_BONES     32
#define GAME_AUDIO     512     /* samples mixed per frame */

typedef struct vec3 { float x, y, z; } vec3;

struct game {
    dagrt *rt;
    uint64_t frame;
    float dt;
    /* input (main) */
    float cam_yaw, cam_x, cam_z;
    bool quit;
    /* physics */
    vec3 pos[GAME_BODIES], vel[GAME_BODIES];
    /* animation */
    float bone[GAME_SKELETONS][GAME_BONES];
    /* ai */
    vec3 agent[GAME_AGENTS], target[GAME_AGENTS];
    /* audio: the mixer runs as a task and sets mixer_ready; the audio task
     * (a fiber) waits for that event */
    dagrt_event mixer_ready;
    float mix[GAME_AUDIO];
    float audio_out[GAME_AUDIO];
    uint64_t audio_frames;
    /* particles */
    vec3 ppos[GAME_PARTICLES], pvel[GAME_PARTICLES];
    /* streaming */
    uint64_t streamed;
    /* culling: boxes against the camera frustum */
    vec3 box_min[GAME_BOXES], box_max[GAME_BOXES];
    uint8_t visible[GAME_BOXES];
    uint32_t nvisible;
    /* shadows: on even frames only */
    uint64_t shadow_frames;
    uint32_t shadow_casters;
    /* ui */
    uint32_t ui_widgets;
    /* render + present (main) */
    uint64_t draw_calls, presented;
    double checksum;
    bool main_thread_ok;
};

void game_init(struct game *g, dagrt *rt);

#endif
