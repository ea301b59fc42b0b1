/* mappings.h - each process's executable mappings over time, from the run's
 * XP_REC_MMAP / EXEC / FORK records, so that a user IP is mapped through the
 * mapping that was in place when the sample fired (dlopen, dlclose, exec all
 * change what an address means).
 *
 *   struct xp_mappings *ms = xp_mappings_new();
 *   xp_mappings_add(ms, pid, ts, addr, len, pgoff, module_id, from_proc);
 *   xp_mappings_exec(ms, pid, exec_ts);
 *   const struct xp_mapping *m = xp_mappings_lookup(ms, pid, sample_ts, ip);
 *   if (m) file_offset = ip - m->start + m->pgoff;
 *   xp_mappings_free(ms);
 */
#ifndef XP_MAPPINGS_H
#define XP_MAPPINGS_H

#include <stdint.h>

struct xp_mapping {
	uint64_t start, end;        /* [start, end) in the process */
	uint64_t pgoff;             /* file offset of start */
	uint64_t ts_start;          /* valid from (0 when read from /proc at start) */
	uint64_t ts_end;            /* valid until (UINT64_MAX while live) */
	uint32_t module;            /* caller's module id (path + build id) */
	uint32_t id;                /* dense, unique over all processes */
};

struct xp_mappings;

struct xp_mappings *xp_mappings_new(void);   /* NULL: out of memory */
void xp_mappings_free(struct xp_mappings *ms);
/* 0, -EINVAL for an empty or wrapping range, -ENOMEM, -E2BIG past the
 * bound on mappings per run. A new mapping ends the ones it overlaps. */
int xp_mappings_add(struct xp_mappings *ms, uint32_t pid, uint64_t ts,
		    uint64_t start, uint64_t len, uint64_t pgoff,
		    uint32_t module, int from_proc);
/* exec replaced the address space of pid at ts. The BPF exec record fires
 * after the new image is mapped: where the exec's comm (taken before the
 * new mappings) came first, the image changed then. 0 or -ENOMEM. */
int xp_mappings_exec(struct xp_mappings *ms, uint32_t pid, uint64_t ts);
/* An exec's comm record (XP_COMM_EXEC) at ts, before its new mappings. */
int xp_mappings_comm_exec(struct xp_mappings *ms, uint32_t pid, uint64_t ts);
/* pid was forked from ppid at ts: until it maps something itself, or execs,
 * its addresses mean what they meant in the parent. 0 or -ENOMEM. */
int xp_mappings_fork(struct xp_mappings *ms, uint32_t pid, uint32_t ppid,
		     uint64_t ts);
/* The mapping of pid containing ip at time ts, or NULL. A sample slightly
 * older than its mmap record (side-band and samples are not strictly
 * ordered) falls back to the earliest mapping containing ip. */
const struct xp_mapping *xp_mappings_lookup(const struct xp_mappings *ms,
					    uint32_t pid, uint64_t ts, uint64_t ip);
/* The pid whose own mappings give pid's addresses at ts: pid, or the
 * parent (grandparent, ...) it was forked from when it mapped nothing of
 * its own and did not exec before ts. Processes with the same answer have
 * one layout (the unwinder shares their libdwfl session). */
uint32_t xp_mappings_layout_owner(const struct xp_mappings *ms, uint32_t pid, uint64_t ts);
/* Whether addresses of pid may mean different things at different times
 * (overlapping mappings, exec, fork): then results must not be cached by
 * (pid, ip) alone. */
int xp_mappings_time_dependent(const struct xp_mappings *ms, uint32_t pid);
uint32_t xp_mappings_count(const struct xp_mappings *ms);

#define XP_MAPPINGS_MAX (4u << 20)

#endif
