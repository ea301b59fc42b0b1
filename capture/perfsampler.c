/* perfsampler.c - see perfsampler.h. The sample layout follows
 * sample_type TID|TIME|CALLCHAIN[|REGS_USER|STACK_USER], in the kernel's
 * order (perf_output_sample): pid, tid; time; nr, ips[nr]; abi, regs[];
 * size, data[size], dyn_size. TID|TIME is also the sample_id trailer of
 * the side-band events, so the non-sample records these events put in
 * the shared rings (LOST, THROTTLE) read the same as theirs. */
#include "capture/perfsampler.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__)
#include <asm/perf_regs.h>
/* ascending bit order is the order in the record: bp, sp, ip */
#define USER_REGS_MASK ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | \
			(1ull << PERF_REG_X86_IP))
#define REG_FP 0
#define REG_SP 1
#define REG_IP 2
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
/* x29 (the frame pointer), sp, pc */
#define USER_REGS_MASK ((1ull << PERF_REG_ARM64_X29) | (1ull << PERF_REG_ARM64_SP) | \
			(1ull << PERF_REG_ARM64_PC))
#define REG_FP 0
#define REG_SP 1
#define REG_IP 2
#else
#define USER_REGS_MASK 0ull         /* no stack copies: frame pointers only */
#endif
#define USER_NREGS 3

enum perfsampler_level perfsampler_level(int *paranoid)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 0;

	*paranoid = -ENOENT;
	if (!f)
		return PERFSAMPLER_USER;
	if (fscanf(f, "%d", &level) == 1)
		*paranoid = level;
	fclose(f);
	if (*paranoid < -1)         /* unreadable: let perf_event_open decide */
		return PERFSAMPLER_USER;
	return level > 2 ? PERFSAMPLER_NONE : level == 2 ? PERFSAMPLER_USER
							 : PERFSAMPLER_KERNEL_TIME;
}

void perfsampler_attr(struct perf_event_attr *a, unsigned freq, uint32_t copy_bytes,
		      bool kernel_time)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = freq;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
	a->sample_id_all = 1;
	/* paranoid 2 refuses kernel-mode samples to a normal user; <= 1 allows
	 * them, and their user stack (where the syscall came from) is what we want */
	a->exclude_kernel = !kernel_time;
	a->exclude_hv = 1;
	a->exclude_callchain_kernel = 1;
	a->inherit = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;   /* the BPF records' clock */
	if (copy_bytes && USER_REGS_MASK) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = USER_REGS_MASK;
		a->sample_stack_user = copy_bytes;
	}
}

struct cursor {
	const unsigned char *p, *end;
};

static int take(struct cursor *c, void *out, size_t n)
{
	if ((size_t)(c->end - c->p) < n)
		return -EBADMSG;
	if (out)
		memcpy(out, c->p, n);
	c->p += n;
	return 0;
}

/* The callchain's user IPs (context markers dropped), leaf first. */
static int take_callchain(struct cursor *c, struct perfsample *out)
{
	struct xp_stack *st = &out->rec.s.stack;
	uint64_t nr, ip = 0;

	if (take(c, &nr, sizeof(nr)) || nr > (uint64_t)(c->end - c->p) / 8)
		return -EBADMSG;
	for (uint64_t i = 0; i < nr; i++) {
		take(c, &ip, sizeof(ip));
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue;
		if (st->user_depth == XP_MAX_STACK_DEPTH) {
			st->flags |= XP_STACK_USER_TRUNC;
			continue;
		}
		out->rec.ips[st->user_depth++] = ip;
	}
	if (!st->user_depth)
		st->flags |= XP_STACK_USER_ERR;
	return 0;
}

/* REGS_USER and STACK_USER: the copy an unwinder starts from, or none. */
static int take_copy(struct cursor *c, struct perfsample *out)
{
	uint64_t abi, regs[USER_NREGS] = { 0 }, size, dyn = 0;

	if (take(c, &abi, sizeof(abi)))
		return -EBADMSG;
	if (abi != PERF_SAMPLE_REGS_ABI_NONE && take(c, regs, sizeof(regs)))
		return -EBADMSG;
	if (take(c, &size, sizeof(size)) || size > (uint64_t)(c->end - c->p))
		return -EBADMSG;
	out->data = c->p;
	c->p += size;
	if (size && take(c, &dyn, sizeof(dyn)))
		return -EBADMSG;
	if (abi == PERF_SAMPLE_REGS_ABI_NONE || dyn > size)
		return 0;               /* no user context (or nonsense): no copy */
	out->regs.ip = regs[REG_IP];
	out->regs.sp = regs[REG_SP];
	out->regs.bp = regs[REG_FP];
	out->regs.size = (uint32_t)(dyn & ~7ull);
	if (out->regs.size > XP_USER_COPY_MAX)
		out->regs.size = XP_USER_COPY_MAX;
	out->rec.s.stack.flags |= XP_STACK_HAS_USER_COPY;
	return 0;
}

int perfsample_convert(const void *rec, size_t len, const struct perf_event_attr *a,
		       uint32_t cpu, struct perfsample *out)
{
	const struct perf_event_header *h = rec;
	struct cursor c = { (const unsigned char *)rec, (const unsigned char *)rec + len };
	uint32_t ids[2];
	uint64_t freq = a->freq ? a->sample_freq : 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (len < sizeof(*h) || h->size > len || h->size < sizeof(*h) ||
	    h->type != PERF_RECORD_SAMPLE)
		return -EBADMSG;
	c.end = c.p + h->size;
	take(&c, NULL, sizeof(*h));
	if (take(&c, ids, sizeof(ids)) || take(&c, &out->rec.s.ts, sizeof(out->rec.s.ts)))
		return -EBADMSG;
	out->rec.s.pid = ids[0];
	out->rec.s.tid = ids[1];
	out->rec.s.cpu = cpu;
	out->rec.s.period_ns = freq ? (uint32_t)(1000000000ull / freq)
				    : (uint32_t)a->sample_period;
	err = take_callchain(&c, out);
	if (!err && (a->sample_type & PERF_SAMPLE_STACK_USER))
		err = take_copy(&c, out);
	if (err)
		return err;
	if (!(out->rec.s.stack.flags & XP_STACK_HAS_USER_COPY))
		out->data = NULL;
	out->rec_len = sizeof(out->rec.s) + out->rec.s.stack.user_depth * 8u;
	return 0;
}
