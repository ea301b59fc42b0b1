/* ownframes.h - the recorder's own frames at the leaf of a stack: a launch
 * stack taken inside CUPTI's callback ends in CUPTI's frames and ours
 * (xpc_api_callback, xpc_stack_take), an off-CPU stack taken by our BPF
 * program ends in it and the tracepoint's plumbing. They are not the
 * user's code: ingest cuts them, and readers of older databases skip them.
 *
 *   uint8_t own[n];                      // leaf first
 *   for (i = 0; i < n; i++) own[i] = xp_own_frame(kind[i], sym[i], module[i]);
 *   size_t cut = xp_own_cut(own, n);     // frames to drop from the leaf
 */
#ifndef XP_OWNFRAMES_H
#define XP_OWNFRAMES_H

#include <stddef.h>
#include <stdint.h>

enum xp_own {
	XP_OWN_NONE = 0,
	XP_OWN_RECORDER,            /* libxpcupti.so */
	XP_OWN_CUPTI,               /* libcupti.so, named or module+offset */
	XP_OWN_BPF_PROG,            /* our BPF program: bpf_prog_TAG_xp_NAME */
	XP_OWN_BPF_TRACE,           /* the tracepoint's way into it */
	XP_OWN_PROBE,               /* libxpcupti.so's xpc_stack_take: where launch stacks are taken */
};

/* What a frame of xp_frames kind (db_schema.h), symbol and module is. */
enum xp_own xp_own_frame(int kind, const char *symbol, const char *module);

/* Of n frames' classes, leaf first: how many to cut from the leaf. Ours
 * only when CUPTI's frames call them (CUPTI's callback: our writer thread
 * stays ours), our BPF program with the plumbing above it; never all n,
 * but for a stack of the launch probe and nothing after ours and CUPTI's
 * (the user's frames could not be read): then all n, no stack. */
size_t xp_own_cut(const uint8_t *own, size_t n);

#endif
