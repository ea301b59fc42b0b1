/* pyobj.c - CPython objects read fault-free (see pyobj.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "src/pyobj.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "src/runfmt_py.h"

int xp_py_peek(pid_t pid, void *dst, uintptr_t src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* A str object: where its text is and an upper bound of its UTF-8 bytes. */
static int str_probe(const struct xp_pyproc *pp, uintptr_t obj, struct xp_pystr *s)
{
	unsigned char h[128];
	const struct xp_py_offsets *o = pp->o;
	uint32_t state;
	int64_t length;
	uintptr_t utf8;

	if (!xp_py_sane(obj) || o->str_compact_size > sizeof(h) ||
	    xp_py_peek(pp->pid, h, obj, o->str_compact_size))
		return -EFAULT;
	if (*(uintptr_t *)(h + o->ob_type) != pp->unicode_type)
		return -EINVAL;
	memcpy(&state, h + o->str_state, sizeof(state));
	memcpy(&length, h + o->str_length, sizeof(length));
	if (!(state >> o->str_compact_bit & 1) || length < 0)
		return -EINVAL;                 /* legacy strings: never a code object's */
	s->kind = (int)(state >> o->str_kind_bit & 7);
	if (state >> o->str_ascii_bit & 1) {
		s->data = obj + o->str_ascii_size;
		s->n = (uint64_t)length;
		s->kind = 0;
	} else {
		memcpy(&utf8, h + o->str_utf8, sizeof(utf8));
		if (utf8) {
			int64_t ulen;

			memcpy(&ulen, h + o->str_utf8_length, sizeof(ulen));
			s->data = utf8;
			s->n = ulen < 0 ? 0 : (uint64_t)ulen;
			s->kind = 0;
		} else {
			if (s->kind != 1 && s->kind != 2 && s->kind != 4)
				return -EINVAL;
			s->data = obj + o->str_compact_size;
			s->n = (uint64_t)length;
		}
	}
	if (!s->kind)
		s->bound = s->n < XP_PYSTR_MAX_BYTES ? (uint32_t)s->n : XP_PYSTR_MAX_BYTES;
	else
		s->bound = s->n * 4 < XP_PYSTR_MAX_BYTES ? (uint32_t)s->n * 4 : XP_PYSTR_MAX_BYTES;
	return 0;
}

static int utf8_put(char *dst, uint32_t at, uint32_t cap, uint32_t c)
{
	unsigned char b[4];
	int n;

	if (c >= 0xd800 && c < 0xe000)
		c = 0xfffd;             /* surrogates (surrogateescape): not UTF-8 */
	if (c < 0x80) {
		b[0] = (unsigned char)c, n = 1;
	} else if (c < 0x800) {
		b[0] = (unsigned char)(0xc0 | c >> 6), b[1] = (unsigned char)(0x80 | (c & 0x3f)), n = 2;
	} else if (c < 0x10000) {
		b[0] = (unsigned char)(0xe0 | c >> 12), b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (c & 0x3f)), n = 3;
	} else {
		if (c > 0x10ffff)
			c = 0xfffd;
		b[0] = (unsigned char)(0xf0 | c >> 18), b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f)), b[3] = (unsigned char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (at + (uint32_t)n > cap)
		return 0;
	memcpy(dst + at, b, (size_t)n);
	return n;
}

/* The text as UTF-8 into dst (s->bound bytes, whole characters only); its length. */
static int str_copy(pid_t pid, const struct xp_pystr *s, char *dst, uint16_t *len)
{
	unsigned char buf[1024];
	uint32_t out = 0, cap = s->bound;

	if (!s->kind) {
		uint32_t n = s->n < cap ? (uint32_t)s->n : cap;

		if (n && xp_py_peek(pid, dst, s->data, n))
			return -EFAULT;
		if (n < s->n) {         /* cut: drop a partial last character */
			uint32_t lead = n;
			unsigned char c;

			while (lead > 0 && ((unsigned char)dst[lead - 1] & 0xc0) == 0x80)
				lead--;
			c = lead ? (unsigned char)dst[lead - 1] : 0;
			if (lead && c >= 0xc0 && lead - 1 + (c >= 0xf0 ? 4u : c >= 0xe0 ? 3u : 2u) > n)
				n = lead - 1;
		}
		*len = (uint16_t)n;
		return 0;
	}
	for (uint64_t i = 0; i < s->n;) {
		uint64_t chunk = s->n - i < sizeof(buf) / (unsigned)s->kind ? s->n - i
				 : sizeof(buf) / (unsigned)s->kind;

		if (xp_py_peek(pid, buf, s->data + i * (unsigned)s->kind, chunk * (unsigned)s->kind))
			return -EFAULT;
		for (uint64_t j = 0; j < chunk; j++) {
			uint32_t c;
			int n;

			if (s->kind == 1)
				c = buf[j];
			else if (s->kind == 2)
				c = ((const uint16_t *)buf)[j];
			else
				c = ((const uint32_t *)buf)[j];
			n = utf8_put(dst, out, cap, c);
			if (!n)
				goto done;
			out += (uint32_t)n;
		}
		i += chunk;
	}
done:
	*len = (uint16_t)out;
	return 0;
}

int xp_pycode_probe(const struct xp_pyproc *pp, uintptr_t code, struct xp_pycode_src *s)
{
	const struct xp_py_offsets *o = pp->o;
	unsigned char h[512], lh[64];
	uintptr_t fname, qname;
	int64_t ltlen;

	if (o->co_linetable + 8 > sizeof(h) || o->bytes_sval > sizeof(lh) ||
	    xp_py_peek(pp->pid, h, code, o->co_linetable + 8))
		return -EFAULT;
	memcpy(&fname, h + o->co_filename, 8);
	memcpy(&qname, h + o->co_name, 8);
	memcpy(&s->table, h + o->co_linetable, 8);
	memcpy(&s->first_line, h + o->co_firstlineno, 4);
	if (str_probe(pp, fname, &s->file) || str_probe(pp, qname, &s->name))
		return -EINVAL;
	if (!xp_py_sane(s->table) || xp_py_peek(pp->pid, lh, s->table, o->bytes_sval) ||
	    *(uintptr_t *)(lh + o->ob_type) != pp->bytes_type)
		return -EINVAL;
	memcpy(&ltlen, lh + o->ob_size, 8);
	if (ltlen < 0)
		return -EINVAL;
	if ((uint64_t)ltlen > XP_PYCODE_RECORD_MAX)
		return -EMSGSIZE;
	s->table_len = (uint64_t)ltlen;
	s->need = (uint32_t)XP_ALIGN8(sizeof(struct xp_pycode) + s->file.bound + s->name.bound +
				      s->table_len);
	return s->need > XP_PYCODE_RECORD_MAX ? -EMSGSIZE : 0;
}

int xp_pycode_fill(const struct xp_pyproc *pp, const struct xp_pycode_src *s, uint64_t id,
		   void *dst)
{
	struct xp_pycode *pc = dst;
	char *p = (char *)(pc + 1);
	uint16_t flen, qlen;

	memset(pc, 0, sizeof(*pc));
	if (str_copy(pp->pid, &s->file, p, &flen) || str_copy(pp->pid, &s->name, p + flen, &qlen) ||
	    (s->table_len && xp_py_peek(pp->pid, p + flen + qlen, s->table + pp->o->bytes_sval,
					(size_t)s->table_len)))
		return -EFAULT;
	pc->code_id = id;
	pc->pid = (uint32_t)pp->pid;
	pc->first_line = (uint32_t)s->first_line;
	pc->py_version = (uint16_t)(pp->hexversion >> 16);
	pc->filename_len = flen;
	pc->qualname_len = qlen;
	pc->linetable_len = (uint32_t)s->table_len;
	return (int)(sizeof(*pc) + flen + qlen + s->table_len);
}

/* The prefix of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h)
 * that the walkers use, every field a uint64_t. */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime;
	struct { uint64_t size, id, next, threads_head, rest[9]; } interp;
	struct { uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
		 datastack_chunk, status; } ts;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } frame;
	struct { uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
		 localsplusnames, localspluskinds, co_code_adaptive; } code;
	struct { uint64_t size, ob_type; } pyobject;
	uint64_t type_object[4], tuple_object[3], list_object[3], dict_object[3],
		 float_object[2], long_object[3];
	struct { uint64_t size, ob_size, ob_sval; } bytes;
	struct { uint64_t size, state, length, asciiobject_size; } unicode;
};

int xp_py_check_debug_offsets(const struct xp_pyproc *pp, uintptr_t runtime, const char *vs,
			      char *why, size_t len)
{
	const struct xp_py_offsets *o = pp->o;
	struct debug_offsets_313 d;
	const char *what = NULL;

	if (xp_py_peek(pp->pid, &d, runtime, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8)) {
		snprintf(why, len, "Python %s: no _Py_DebugOffsets at _PyRuntime", vs);
		return -1;
	}
	if (d.version != pp->hexversion) {
		snprintf(why, len, "Python %s: _Py_DebugOffsets of another version", vs);
		return -1;
	}
	if (d.free_threaded) {
		snprintf(why, len, "Python %s free-threaded build: not supported", vs);
		return -1;
	}
#define SAME(field, value) do { if (!what && (uint64_t)o->field != (value)) what = #field; } while (0)
	SAME(rt_interp_head, d.runtime.interpreters_head);
	SAME(is_threads_head, d.interp.threads_head);
	SAME(ts_next, d.ts.next);
	SAME(ts_interp, d.ts.interp);
	SAME(ts_thread_id, d.ts.thread_id);
	SAME(ts_native_id, d.ts.native_thread_id);
	SAME(ts_frame, d.ts.current_frame);
	SAME(fr_previous, d.frame.previous);
	SAME(fr_code, d.frame.executable);
	SAME(fr_instr, d.frame.instr_ptr);
	SAME(fr_owner, d.frame.owner);
	SAME(co_filename, d.code.filename);
	SAME(co_name, d.code.qualname);
	SAME(co_linetable, d.code.linetable);
	SAME(co_firstlineno, d.code.firstlineno);
	SAME(co_code, d.code.co_code_adaptive);
	SAME(ob_type, d.pyobject.ob_type);
	SAME(ob_size, d.bytes.ob_size);
	SAME(bytes_sval, d.bytes.ob_sval);
	SAME(str_state, d.unicode.state);
	SAME(str_length, d.unicode.length);
	SAME(str_ascii_size, d.unicode.asciiobject_size);
#undef SAME
	if (what) {
		snprintf(why, len, "Python %s: _Py_DebugOffsets disagree with the offsets of %s (%s)",
			 vs, o->from, what);
		return -1;
	}
	return 0;
}
