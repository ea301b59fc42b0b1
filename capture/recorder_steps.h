/* recorder_steps.h - the steps of xp_record() (recorder.h), shared by its
 * files; nothing outside capture/recorder*.c uses them. */
#ifndef XP_CAPTURE_RECORDER_STEPS_H
#define XP_CAPTURE_RECORDER_STEPS_H

#include <stdint.h>
#include <time.h>

#include "capture/recorder.h"

/* A line for the user through r->say (printf-style). */
void xp_recorder_say(const struct xp_recorder *r, enum xp_say kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The failure's line into r->err; returns status. */
int xp_recorder_fail(struct xp_recorder *r, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint64_t xp_recorder_clock_ns(clockid_t id);

/* recorder_check.c: 1. what may be recorded (after the options): -1 to go
 * on, else the exit status. */
int xp_recorder_check(struct xp_recorder *r);
/* recorder_env.c: the command's environment (perf maps, injection library). */
void xp_recorder_build_env(struct xp_recorder *r);
/* recorder_arm.c: 4. opens everything: 0 or the exit status. */
int xp_recorder_arm(struct xp_recorder *r);
/* recorder_end.c: 6. waits for the end: xpcap's exit status; 7. detaches,
 * empties the rings, writes the run: 0 or the exit status. */
int xp_recorder_wait(struct xp_recorder *r);
int xp_recorder_finish(struct xp_recorder *r);
/* recorder_end.c: the lines after the run (what was written; a CUDA
 * program whose GPU work went unrecorded). */
void xp_recorder_say_written(const struct xp_recorder *r);
void xp_recorder_say_gpu_end(const struct xp_recorder *r);

#endif
