/* idle_names.c - what --by idle's engine (idle_cause.c) calls the places
 * it charges time to: a stack's launch site, where a sample or a wait was
 * (the innermost Python line of the program's own files, else a library's,
 * else a native function), each text interned once and each stack's names
 * kept in its memo (idle_priv.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/launch.h"
#include "db/db_schema.h"
#include "export/names/framename.h"
#include "export/idle/idle_priv.h"
#include "export/names/pyreach.h"

/* text as one pointer per distinct text (causes are keyed by it); NULL:
 * out of memory. */
const char *xp_idle__intern(struct xp_idle *S, const char *text)
{
	int64_t id;
	int fresh;

	if (!S->names && !(S->names = xp_strtab_new()))
		return NULL;
	if (xp_strtab_intern(S->names, text, strlen(text), &id, &fresh))
		return NULL;
	return xp_strtab_get(S->names, id);
}

/* xp_idle__intern() of a string literal, found by its address after the first time
 * (these name a cause of most gaps: hashing the text each time showed). */
const char *xp_idle__intern_fixed(struct xp_idle *S, const char *literal)
{
	const char *text;

	for (size_t i = 0; i < S->nfixed; i++)
		if (S->fixed[i].literal == literal)
			return S->fixed[i].text;
	text = xp_idle__intern(S, literal);
	if (text && S->nfixed < sizeof(S->fixed) / sizeof(S->fixed[0]))
		S->fixed[S->nfixed++] = (struct fixed_text){ literal, text };
	return text;
}

/* A fresh memo's index + 1 in S->memos; 0 when out of memory. */
static size_t new_memo(struct xp_idle *S)
{
	if (S->nmemos >= UINT32_MAX ||
	    xp_array__reserve((void **)&S->memos, &S->memo_cap, S->nmemos + 1, sizeof(*S->memos), 256))
		return 0;
	S->memos[S->nmemos] = (struct stack_memo){ .readable = -1 };
	return ++S->nmemos;
}

/* The memo of stack (> 0); NULL: out of memory (a later look tries
 * again). The pointer holds until the next stack is looked up. */
struct stack_memo *xp_idle__memo(struct xp_idle *S, int64_t stack)
{
	uint64_t *slot;
	int fresh;

	if (stack >= 0 && (uint64_t)stack < S->memo_ids) {
		uint32_t *at = &S->memo_by_id[stack];

		if (!*at && !(*at = (uint32_t)new_memo(S)))
			return NULL;
		return &S->memos[*at - 1];
	}
	if (xp_u64map_upsert(&S->memo_at, (uint64_t)stack, 0, &slot, &fresh) ||
	    (!*slot && !(*slot = new_memo(S))))
		return NULL;
	return &S->memos[*slot - 1];
}

/* The direct index of stack memos, sized by the largest stack id where
 * that is not far beyond what a run holds: below 2^24 and twice the rows
 * (else all go through the map). 0 or -ENOMEM. */
int xp_idle__memo_index(struct xp_idle *S)
{
	static const char *const sql[] = { "SELECT count(*) FROM xp_stacks",
					   "SELECT max(id) FROM xp_stacks" };
	int64_t v[2] = { 0, 0 }, max;
	sqlite3_stmt *s;

	for (int i = 0; i < 2; i++)
		if (sqlite3_prepare_v2(S->db, sql[i], -1, &s, NULL) == SQLITE_OK) {
			if (sqlite3_step(s) == SQLITE_ROW)
				v[i] = sqlite3_column_int64(s, 0);
			sqlite3_finalize(s);
		}
	max = v[1];
	if (max <= 0 || max >= 1 << 24 || max > 2 * v[0] + 1024)
		return 0;
	S->memo_ids = (size_t)max + 1;
	return (S->memo_by_id = calloc(S->memo_ids, sizeof(*S->memo_by_id))) ? 0 : -ENOMEM;
}

/* The site of a stack as an interned string: stacks that read the same
 * are one cause. */
const char *xp_idle__site_of(struct xp_idle *S, int64_t stack, const char *none)
{
	struct stack_memo *m;
	const char *text;

	if (stack <= 0)
		return xp_idle__intern_fixed(S, none);
	if (!(m = xp_idle__memo(S, stack)))
		return NULL;
	if (!m->site && (text = xp_sites_get(S->sites, stack)))
		m->site = xp_idle__intern(S, text);
	return m->site;
}

/* Where a CPU sample (wait 0) or an off-CPU stack (wait 1) was, named as
 * every host cause is: the innermost Python line of the program's own
 * files ("train.py:42 step"), else of a library's, else the innermost
 * native function of the program's own code, else the innermost of all
 * ("function (module)"). A wait adds the call it blocked in, when that is
 * another frame: "clock_nanosleep (libc.so.6) at ckpt.py:29 save". */
static void name_host(struct xp_idle *S, int64_t id, int wait, char *buf, size_t len)
{
	char leaf[256] = "", own[256] = "", py[256] = "", pylib[256] = "", n[256];
	struct xp_frame_row fr;
	const char *site;

	while (!py[0] && id > 0 && xp_stackwalk_next(S->walk, &id, &fr)) {
		if (!fr.sym || fr.kind == XP_FRAME_KERNEL || fr.kind == XP_FRAME_KERNEL_UNRESOLVED ||
		    fr.kind == XP_FRAME_NOTE || fr.kind == XP_FRAME_GAP)
			continue;
		if (xp_is_python_frame(fr.kind, fr.sym)) {
			int lib = xp_frame_python_library(&fr);

			xp_frame_name(&fr, n, sizeof(n));

			if (!leaf[0])
				memcpy(leaf, n, sizeof(leaf));
			if (!lib)
				memcpy(py, n, sizeof(py));
			else if (!pylib[0])
				memcpy(pylib, n, sizeof(pylib));
			continue;
		}
		/* named only where it may be used: a stack is walked to its
		 * root when it has no Python frame */
		if (!leaf[0])
			xp_frame_name(&fr, leaf, sizeof(leaf));
		if (!own[0] && !xp_is_cuda_layer(fr.sym, fr.module) && !xp_is_library_frame(fr.sym, fr.module))
			xp_frame_name(&fr, own, sizeof(own));
	}
	xp_stackwalk_done(S->walk);
	site = py[0] ? py : pylib[0] ? pylib : own[0] ? own : leaf[0] ? leaf : "?";
	if (wait && leaf[0] && strcmp(leaf, site))
		snprintf(buf, len, "%s at %s", leaf, site);
	else
		snprintf(buf, len, "%s", site);
}

/* name_host of a stack, interned and kept in its memo; NULL: out of memory. */
const char *xp_idle__host_name(struct xp_idle *S, int64_t stack, int wait)
{
	struct stack_memo *m;
	const char *text;
	char buf[600];

	if (stack <= 0)
		return xp_idle__intern_fixed(S, wait ? "(wait without a stack)" : "(sample without a frame)");
	if (!(m = xp_idle__memo(S, stack)))
		return NULL;
	if (wait ? m->wait : m->host)
		return wait ? m->wait : m->host;
	name_host(S, stack, wait, buf, sizeof(buf));
	text = xp_idle__intern(S, buf);
	if ((m = xp_idle__memo(S, stack)))
		*(wait ? &m->wait : &m->host) = text;
	return text;
}

/* 1 if the sample's stack names what the host ran: a Python frame, or a
 * frame of the program's own code (a C++ program's function). Frame-pointer
 * samples stop in libraries built without them (libcuda, cuBLAS, libtorch):
 * those name nobody's line. */
int xp_idle__readable(struct xp_idle *S, int64_t stack)
{
	struct xp_frame_row fr;
	struct stack_memo *m;
	int64_t id = stack;
	int found = 0;

	if (stack <= 0)
		return 0;
	if (!(m = xp_idle__memo(S, stack))) {
		S->err = -ENOMEM;
		return 0;
	}
	if (m->readable >= 0)
		return m->readable;
	while (!found && id > 0 && xp_stackwalk_next(S->walk, &id, &fr))
		found = xp_is_python_frame(fr.kind, fr.sym) ||
			(fr.sym && fr.kind != XP_FRAME_KERNEL && fr.kind != XP_FRAME_KERNEL_UNRESOLVED &&
			 fr.kind != XP_FRAME_NOTE && fr.kind != XP_FRAME_GAP &&
			 !xp_is_cuda_layer(fr.sym, fr.module) && !xp_is_library_frame(fr.sym, fr.module));
	xp_stackwalk_done(S->walk);
	if ((m = xp_idle__memo(S, stack)))
		m->readable = found;
	return found;
}
