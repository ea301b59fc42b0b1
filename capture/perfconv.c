/* perfconv.c - perf side-band records to run-format records; see
 * perfconv.h. Only executable mappings are kept (what symbolization needs).
 * Time comes from the sample_id trailer (TID|TIME: pid, tid, time), which
 * the events are opened with, in CLOCK_MONOTONIC like the BPF records. */
#include "capture/perfconv.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>

#define SAMPLE_ID_LEN 16            /* u32 pid, u32 tid, u64 time */

struct perf_mmap2 {                 /* PERF_RECORD_MMAP2 body, see perf_event.h */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	union {
		struct { uint32_t maj, min; uint64_t ino, ino_generation; };
		struct { uint8_t build_id_size, res1; uint16_t res2; uint8_t build_id[20]; };
	};
	uint32_t prot, flags;
	char filename[];
};

struct perf_task {                  /* PERF_RECORD_FORK / EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct perf_comm {
	uint32_t pid, tid;
	char comm[];
};

struct perf_lost {
	uint64_t id, lost;
};

static uint64_t trailer_time(const unsigned char *rec, size_t len)
{
	uint64_t t;

	memcpy(&t, rec + len - sizeof(t), sizeof(t));
	return t;
}

static int convert_mmap2(const unsigned char *rec, size_t len, uint16_t misc,
			 struct perfconv_rec *out)
{
	const struct perf_mmap2 *m = (const void *)(rec + sizeof(struct perf_event_header));
	size_t fixed = sizeof(struct perf_event_header) + sizeof(*m);
	struct xp_mmap *x = &out->u.mmap;

	if (len < fixed + SAMPLE_ID_LEN)
		return -EBADMSG;
	if (!(m->prot & PROT_EXEC))
		return 0;
	out->type = XP_REC_MMAP;
	out->fixed_len = sizeof(*x);
	x->ts = trailer_time(rec, len);
	x->pid = m->pid;
	x->tid = m->tid;
	x->addr = m->addr;
	x->len = m->len;
	x->pgoff = m->pgoff;
	x->prot = m->prot;
	if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		x->build_id_size = m->build_id_size > XP_BUILD_ID_MAX ? XP_BUILD_ID_MAX
								       : m->build_id_size;
		memcpy(x->build_id, m->build_id, x->build_id_size);
		x->flags |= XP_MMAP_HAS_BUILD_ID;
	} else {
		out->maj = m->maj;
		out->min = m->min;
		out->ino = m->ino;
	}
	out->path = m->filename;
	out->path_len = strnlen(m->filename, len - fixed - SAMPLE_ID_LEN);
	if (out->path_len > UINT16_MAX)
		out->path_len = UINT16_MAX;
	x->path_len = (uint16_t)out->path_len;
	/* anonymous JIT code ("//anon", "[vdso]") has no file to read */
	out->needs_build_id = !(x->flags & XP_MMAP_HAS_BUILD_ID) && out->path_len &&
			      m->filename[0] == '/';
	return 0;
}

int perfconv_convert(const void *buf, size_t len, struct perfconv_rec *out)
{
	const unsigned char *rec = buf;
	const struct perf_event_header *h = buf;
	const unsigned char *body = rec + sizeof(*h);
	size_t body_len;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(*h) || h->size > len || h->size < sizeof(*h))
		return -EBADMSG;
	len = h->size;
	body_len = len - sizeof(*h);
	switch (h->type) {
	case PERF_RECORD_MMAP2:
		return convert_mmap2(rec, len, h->misc, out);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		const struct perf_task *t = (const void *)body;

		if (body_len < sizeof(*t))
			return -EBADMSG;
		out->type = h->type == PERF_RECORD_FORK ? XP_REC_FORK : XP_REC_EXIT;
		out->fixed_len = sizeof(out->u.task);
		out->u.task.ts = t->time;
		out->u.task.pid = t->pid;
		out->u.task.ppid = t->ppid;
		out->u.task.tid = t->tid;
		out->u.task.ptid = t->ptid;
		return 0;
	}
	case PERF_RECORD_COMM: {
		const struct perf_comm *c = (const void *)body;

		if (body_len < sizeof(*c) + SAMPLE_ID_LEN)
			return -EBADMSG;
		out->type = XP_REC_COMM;
		out->fixed_len = sizeof(out->u.comm);
		out->u.comm.ts = trailer_time(rec, len);
		out->u.comm.pid = c->pid;
		out->u.comm.tid = c->tid;
		out->u.comm.flags = (h->misc & PERF_RECORD_MISC_COMM_EXEC) ? XP_COMM_EXEC : 0;
		strncpy(out->u.comm.comm, c->comm,
			body_len - sizeof(*c) - SAMPLE_ID_LEN < XP_COMM_LEN
				? body_len - sizeof(*c) - SAMPLE_ID_LEN : XP_COMM_LEN);
		return 0;
	}
	case PERF_RECORD_LOST: {
		const struct perf_lost *l = (const void *)body;

		if (body_len < sizeof(*l) + SAMPLE_ID_LEN)
			return -EBADMSG;
		out->type = XP_REC_LOST;
		out->fixed_len = sizeof(out->u.lost);
		out->u.lost.ts = trailer_time(rec, len);
		out->u.lost.kind = 0;   /* side-band: any of mmap/fork/exit/comm */
		out->u.lost.reason = XP_LOST_PERF_LOST;
		out->u.lost.count = l->lost;
		return 0;
	}
	default:
		return 0;
	}
}
