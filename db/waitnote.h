/* waitnote.h - the note frame of a launch placed at the line its Python
 * thread waited in (ingest/waitlines.h): "[launched by a runtime thread
 * while this line waited]", XP_FRAME_NOTE in module "[waits]". Ingest
 * writes it; the exports tell such GPU time apart from launches whose own
 * stack reached Python (export/names/pyreach.h).
 *
 *   if (xp_wait_note(f.kind, f.sym)) ...    // a frame of such a stack
 */
#ifndef XP_WAITNOTE_H
#define XP_WAITNOTE_H

#include <string.h>

#include "db/db_schema.h"

#define XP_WAIT_NOTE_MODULE "[waits]"
#define XP_WAIT_NOTE_OPEN "[launched by "
#define XP_WAIT_NOTE_CLOSE " while this line waited]"

static inline int xp_wait_note(int kind, const char *sym)
{
	size_t n = sym ? strlen(sym) : 0, c = sizeof(XP_WAIT_NOTE_CLOSE) - 1;

	return kind == XP_FRAME_NOTE && n > c &&
	       !strncmp(sym, XP_WAIT_NOTE_OPEN, sizeof(XP_WAIT_NOTE_OPEN) - 1) &&
	       !strcmp(sym + n - c, XP_WAIT_NOTE_CLOSE);
}

#endif
