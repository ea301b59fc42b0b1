/* gtid.h - Nsight Systems' global ids, as the database stores them:
 * globalPid = pid << 24, globalTid = pid << 24 | tid (24 bits of tid;
 * Linux pids stay below 2^22). In C and as SQL text, so that no query
 * writes the shift by hand.
 *
 *   sqlite3_bind_int64(st, 1, xp_gtid(pid, tid));
 *   "SELECT " XP_SQL_GTID_PID("r.globalTid") ", " XP_SQL_GTID_TID("r.globalTid") " FROM ..."
 */
#ifndef XP_GTID_H
#define XP_GTID_H

#include <stdint.h>

#define XP_GTID_SHIFT 24
#define XP_GTID_TID_MASK 0xffffffLL

static inline int64_t xp_gpid(uint64_t pid)
{
	return (int64_t)(pid << XP_GTID_SHIFT);
}

static inline int64_t xp_gtid(uint64_t pid, uint64_t tid)
{
	return xp_gpid(pid) | (int64_t)(tid & XP_GTID_TID_MASK);
}

static inline uint32_t xp_gtid_pid(int64_t gtid)
{
	return (uint32_t)(gtid >> XP_GTID_SHIFT);
}

static inline uint32_t xp_gtid_tid(int64_t gtid)
{
	return (uint32_t)(gtid & XP_GTID_TID_MASK);
}

/* A job merged from several runs (xpcorr merge) keeps each run's pids
 * apart: run i stores i << XP_PID_LOCAL_BITS | pid (Linux pids stay below
 * 2^22), so that two hosts' pid 4242 stay two processes; up to
 * XP_MERGE_MAX_RUNS runs keep every pid within 32 bits. */
#define XP_PID_LOCAL_BITS 22
#define XP_MERGE_MAX_RUNS 1024

static inline uint32_t xp_pid_local(uint64_t pid)
{
	return (uint32_t)(pid & ((1u << XP_PID_LOCAL_BITS) - 1));
}

static inline uint32_t xp_pid_run(uint64_t pid)
{
	return (uint32_t)(pid >> XP_PID_LOCAL_BITS);
}

/* The same in SQL, for column expressions (parenthesized). */
#define XP_SQL_GPID(pid) "(" pid " << 24)"
#define XP_SQL_GTID(pid, tid) "(" pid " << 24 | (" tid " & 16777215))"
#define XP_SQL_GTID_PID(g) "(" g " >> 24)"
#define XP_SQL_GTID_TID(g) "(" g " & 16777215)"
#define XP_SQL_PID_LOCAL(pid) "(" pid " & 4194303)"

#endif
