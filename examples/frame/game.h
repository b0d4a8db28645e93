/*
 * game.h - the example game's state: what the frame graph's tasks read and
 * write, made safe for several frames in flight (frame_pipeline_submit).
 *
 * Two rules keep it free of locks:
 * - Each task owns the state it writes (physics the bodies, ai the
 *   agents, ...). A node runs once per frame and, in a pipeline, frame N+1's
 *   node waits for frame N's, so a task's own state is never touched by two
 *   frames at once, and each task counts its own runs to know its frame.
 * - What a task hands to other tasks is a per-frame resource of frame.dag: one
 *   copy per frame in flight, holding only what the readers need (a snapshot:
 *   physics keeps the bodies and hands over their heights). The camera, the
 *   mixer's block and the streamed cells are typed (struct game_camera,
 *   struct game_mix, struct game_cells): dagc keeps their copies in the
 *   instance or pipeline that runs the frame, and a task reaches its frame's
 *   copy with frame_camera_copy(), frame_mix_copy() or frame_cells_copy(),
 *   the previous frame's with frame_cells_prev_copy(). The
 *   others go into the frame's slot here, one of GAME_SLOTS: frame n uses slot
 *   n % GAME_SLOTS. With D frames in flight frame n is submitted only after
 *   frame n-D finished, so with D + 1 slots a slot is reused only after the
 *   frame after it finished too, and a task may read the previous frame's slot
 *   when it waits for the writer (`prev` in frame.dag).
 * The context is the same `struct game *` for every frame.
 *
 * Each task's state, and each writer's part of a slot, starts on a cache
 * line of its own (GAME_LINE): tasks of one frame run on two threads at
 * once, and a counter on the line another thread writes (false sharing)
 * would move that line between the cores at every write.
 */
#ifndef GAME_H
#define GAME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dagrt.h"

#define GAME_BODIES    4096
#define GAME_BOXES     8192
#define GAME_PARTICLES 16384
#define GAME_PSAMPLE   256     /* render draws every 256th particle */
#define GAME_AGENTS    512
#define GAME_SKELETONS 128
#define GAME_BONES     32
#define GAME_AUDIO     512     /* samples mixed per frame */
#define GAME_CELLS     16      /* streaming grid: 16 x 16 cells of 32 units */
#define GAME_SLOTS     (DAGRT_MAX_IN_FLIGHT + 1)
#define GAME_CELL_BYTES 4096   /* one streamed cell's data in the asset files */
#define GAME_LINE      64      /* a cache line: see the top */

typedef struct vec3 { float x, y, z; } vec3;

/* The typed per-frame resources (frame.dag): dagc lays out their copies,
 * zeroed when the instance or pipeline is initialised (so the frame before
 * the first is all zeros: no cell loaded). */
struct game_camera {                             /* input */
    float yaw, x, z;
};
struct game_mix {                                /* mixer */
    float sample[GAME_AUDIO];                    /* this frame's block */
};
struct game_cells {                              /* streaming */
    uint8_t resident[GAME_CELLS][GAME_CELLS];    /* cells loaded in this frame */
    /* The frame (streaming's count) that finished this copy, stored at its
     * end: cull, reading it as the previous copy, checks it is the frame
     * before its own, finished. */
    _Atomic uint64_t done;
};

/* The nodes whose completion a `prev` reader checks (game_slot.done). */
enum { GAME_DONE_PHYSICS, GAME_DONE_RENDER, GAME_NDONE };

/* One frame's untyped hand-offs, each field written by one task (named),
 * each writer's fields on lines of their own. */
struct game_slot {
    /* physics: the bodies' heights after this frame, the snapshot of the
     * bodies that shadows and animation read (the positions themselves are
     * physics' own, in struct game; frame_physics says how it writes
     * these) */
    _Alignas(GAME_LINE) float height[GAME_BODIES];
    _Alignas(GAME_LINE) uint8_t visible[GAME_BOXES]; /* cull */
    uint32_t nvisible;                           /* cull */
    _Alignas(GAME_LINE) uint32_t shadow_casters; /* shadows (0 when skipped) */
    _Alignas(GAME_LINE) float psample[GAME_PARTICLES / GAME_PSAMPLE]; /* particles: the heights render draws */
    _Alignas(GAME_LINE) float audio_out[GAME_AUDIO]; /* audio: the block presented with the frame */
    _Alignas(GAME_LINE) uint32_t ui_widgets, hud_draws; /* ui */
    _Alignas(GAME_LINE) uint64_t draw_calls;     /* render */
    /* The frame each of those nodes last finished in this slot, stored at
     * its end: a `prev` reader checks the writer really finished. */
    _Alignas(GAME_LINE) _Atomic uint64_t done[GAME_NDONE];
};

/* The streamed world's files (assets.c): one per row x of the grid, cell z
 * at offset z * GAME_CELL_BYTES, opened once and shared by every game
 * (reads at an offset never move a handle's position). */
struct game_assets {
    dagrt_handle row[GAME_CELLS];
    /* Each cell's checksum (game_cell_sum), from how it was generated. */
    uint64_t sum[GAME_CELLS][GAME_CELLS];
    char dir[1024];
    int written;           /* files the open had to write (first run) */
};

/* Opens the files in dir, writing those that are missing or of the wrong
 * size first; 0, or -1 with the reason in why. */
int game_assets_open(struct game_assets *a, dagrt *rt, const char *dir, char *why, size_t len);
void game_assets_close(struct game_assets *a, dagrt *rt);
uint64_t game_cell_sum(const unsigned char *b, size_t n);

/* What physics hands over (struct game.handover): GAME_HEIGHTS, the
 * snapshot, is the game; GAME_WHOLE_BODIES is the form it had until
 * 2026-12-05, kept so that bench_example_frame can time both in one run
 * (docs/example.md): the bodies' positions themselves in per-frame copies
 * (slot_pos), physics reading the last frame's copy and writing this
 * frame's body by body, animation and shadows reading the positions. */
enum game_handover { GAME_HEIGHTS, GAME_WHOLE_BODIES };

struct game {
    dagrt *rt;
    const struct game_assets *assets;
    float dt;
    int handover;          /* enum game_handover: set after game_init, before the first frame */
    struct game_slot slot[GAME_SLOTS];
    /* input (main) */
    _Alignas(GAME_LINE) uint64_t input_n;
    float cam_yaw, cam_x, cam_z;
    /* physics: the bodies are its own; each frame's heights are made here,
     * then copied to the frame's slot at once (game.c says why) */
    _Alignas(GAME_LINE) uint64_t physics_n;
    vec3 pos[GAME_BODIES], vel[GAME_BODIES];
    float height[GAME_BODIES];
    /* animation: bones lean with last frame's heights (prev physics) */
    _Alignas(GAME_LINE) uint64_t animation_n, animation_prev_missed;
    float bone[GAME_SKELETONS][GAME_BONES];
    /* ai */
    _Alignas(GAME_LINE) uint64_t ai_n;
    vec3 agent[GAME_AGENTS], target[GAME_AGENTS];
    /* mixer: counts its frames; its block goes to the frame's copy of
     * `mix` (typed: frame_mix_copy()) */
    _Alignas(GAME_LINE) uint64_t mixer_n;
    /* audio (a fiber, after mixer): the last block it handed over, clamped */
    _Alignas(GAME_LINE) uint64_t audio_n;
    float mix[GAME_AUDIO];
    uint64_t audio_frames;
    /* particles (the count function counts the frames) */
    _Alignas(GAME_LINE) uint64_t particles_n;
    vec3 ppos[GAME_PARTICLES], pvel[GAME_PARTICLES];
    /* streaming (a fiber): cells loaded over all frames, each read from
     * the asset files through the reactor into cell_buf and checked */
    _Alignas(GAME_LINE) uint64_t streaming_n, streamed;
    uint64_t stream_bytes, stream_bad, stream_hash;
    unsigned char cell_buf[GAME_CELL_BYTES];
    /* cull: boxes against the camera frustum, in the cells streamed in by
     * the previous frame (prev streaming); the boxes never move */
    _Alignas(GAME_LINE) uint64_t cull_n, cull_prev_missed;
    vec3 box_min[GAME_BOXES], box_max[GAME_BOXES];
    uint8_t box_cell[GAME_BOXES][2];
    /* shadows: on even frames only (the predicate counts the frames) */
    _Alignas(GAME_LINE) uint64_t shadows_n, shadow_frames;
    /* ui: the HUD shows the previous frame's draw calls (prev render) */
    _Alignas(GAME_LINE) uint64_t ui_n, ui_prev_missed;
    /* render + present (main); each sums in frame order */
    _Alignas(GAME_LINE) uint64_t render_n, present_n, draw_calls, presented;
    double render_sum, present_sum;
    bool main_thread_ok;   /* written by the main-thread tasks only */
    /* Optional, set by the caller: for frame n (from 1) <= stamp_cap,
     * input stores its start in input_at[n - 1] and present its end in
     * present_at[n - 1] (game_now_us), each where not NULL. */
    double *input_at, *present_at;
    uint64_t stamp_cap;
    /* GAME_WHOLE_BODIES only: the bodies after frame n in slot_pos[n %
     * GAME_SLOTS] (physics), read by animation (the last frame's) and
     * shadows; untouched otherwise. */
    _Alignas(GAME_LINE) vec3 slot_pos[GAME_SLOTS][GAME_BODIES];
};

void game_init(struct game *g, dagrt *rt, const struct game_assets *assets);

/* A hash of the simulated world (bodies, bones, agents, particles, mixer,
 * counters, sums): equal for two games that ran the same frames, however
 * they were scheduled. */
uint64_t game_digest(const struct game *g);

/* Times `prev` inputs were found not finished (0 when they are honoured). */
uint64_t game_prev_missed(const struct game *g);

/* CLOCK_MONOTONIC in us. */
double game_now_us(void);

#endif
