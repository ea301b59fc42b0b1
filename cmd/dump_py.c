/* dump_py.c - `xpcorr dump` lines of the Python records of launch-PID.xpr
 * and pyframes.xpr (runfmt_py.h): frames as code_id@offset (+e for
 * XP_PYFRAME_ENTRY), code objects with their line table in hex, the
 * interpreter facts, PyTorch's autograd node at a launch (its C++ type name
 * as written, mangled).
 *   pystack ts=... pid=4000 tid=4000 corr=7 flags=0 frames=1003@12+e,1001@40
 *   pystack ts=... pid=4000 tid=4000 corr=9 flags=2 key=3 frames=(the key's)
 */
#include "cmd/dump_py.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "src/runfile.h"
#include "src/runfmt_py.h"
#include "src/textesc.h"

/* What the library found of libtorch. */
static int dump_autograd_info(const struct xp_autograd_info *in, uint32_t len)
{
	if (len < sizeof(*in) || in->reason_len > len - sizeof(*in))
		return -EBADMSG;
	printf(" ts=%" PRIu64 " pid=%" PRIu32 " flags=%" PRIu32 " nodes=%" PRIu64
	       " rejected=%" PRIu64 " reason=%s", in->ts, in->pid, in->flags, in->nodes,
	       in->rejected, xp_escn((const char *)(in + 1), in->reason_len));
	return 1;
}

/* PyTorch's autograd at a launch, with the node that ran if one did. */
static int dump_autograd(const struct xp_autograd *a, uint32_t len)
{
	const struct xp_autograd_node *n = (const void *)(a + 1);

	if (len < sizeof(*a))
		return -EBADMSG;
	printf(" corr=%" PRIu64 " tid=%" PRIu32 " flags=%" PRIu32 " thread=%" PRIu64
	       " seq_next=%" PRIu64, a->correlation_id, a->tid, a->flags, a->thread_id, a->seq_next);
	if (!(a->flags & XP_AUTOGRAD_NODE))
		return 1;
	if (len - sizeof(*a) < sizeof(*n) || n->name_len > len - sizeof(*a) - sizeof(*n))
		return -EBADMSG;
	printf(" node_seq=%" PRIu64 " node_thread=%" PRIu64 " node=%s", n->node_seq,
	       n->node_thread, xp_escn((const char *)(n + 1), n->name_len));
	return 1;
}

int xp_dump_py_record(const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_AUTOGRAD:
		return dump_autograd(p, len);
	case XP_REC_AUTOGRAD_INFO:
		return dump_autograd_info(p, len);
	case XP_REC_PYSTACK:
	case XP_REC_PYSAMPLE: {
		const struct xp_pystack *s = p;
		const struct xp_pyframe *f = (const void *)(s + 1);

		if (len < sizeof(*s) || (uint64_t)s->nframes * sizeof(*f) > len - sizeof(*s))
			return -EBADMSG;
		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " corr=%" PRIu64 " flags=%u",
		       s->ts, s->pid, s->tid, s->correlation_id, s->flags);
		if (s->key)
			printf(" key=%" PRIu32, s->key);
		printf(" frames=%s", s->flags & XP_PYSTACK_BORROWED ? "(the key's)" : "");
		for (unsigned i = 0; i < s->nframes; i++)
			printf("%s%" PRIx64 "@%" PRIu32 "%s", i ? "," : "", f[i].code_id,
			       f[i].instr_offset, f[i].flags & XP_PYFRAME_ENTRY ? "+e" : "");
		return 1;
	}
	case XP_REC_PYCODE: {
		const struct xp_pycode *c = p;
		const char *s = (const char *)(c + 1);
		const uint8_t *t = (const uint8_t *)s + c->filename_len + c->qualname_len;

		if (len < sizeof(*c) ||
		    (uint64_t)c->filename_len + c->qualname_len + c->linetable_len > len - sizeof(*c))
			return -EBADMSG;
		printf(" pid=%" PRIu32 " code=%" PRIx64 " version=%u.%u first_line=%" PRIu32
		       " file=%s qualname=%s linetable=", c->pid, c->code_id, c->py_version >> 8,
		       c->py_version & 0xff, c->first_line, xp_escn(s, c->filename_len),
		       xp_escn(s + c->filename_len, c->qualname_len));
		for (uint32_t i = 0; i < c->linetable_len; i++)
			printf("%02x", t[i]);
		return 1;
	}
	case XP_REC_PYINFO: {
		const struct xp_pyinfo *in = p;

		if (len < sizeof(*in) || in->reason_len > len - sizeof(*in))
			return -EBADMSG;
		printf(" ts=%" PRIu64 " pid=%" PRIu32 " version=%u.%u.%u supported=%d reason=%s",
		       in->ts, in->pid, in->py_hexversion >> 24, in->py_hexversion >> 16 & 0xff,
		       in->py_hexversion >> 8 & 0xff, !!(in->flags & XP_PYINFO_SUPPORTED),
		       xp_escn((const char *)(in + 1), in->reason_len));
		return 1;
	}
	case XP_REC_PYWAIT: {
		const struct xp_pywait *w = p;

		if (len < sizeof(*w))
			return -EBADMSG;
		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " syscall=%" PRId32
		       " pc=0x%" PRIx64 " sp=0x%" PRIx64, w->ts, w->pid, w->tid, w->syscall, w->pc, w->sp);
		return 1;
	}
	default:
		return 0;
	}
}
