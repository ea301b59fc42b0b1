/* gpu_strings.c - a GPU stream's strings: its own ids mapped to StringIds
 * (a string always precedes its first use; a redefinition wins), and kernel
 * names demangled and shortened once per name, as nsys keeps them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/gpu_loader.h"
#include "ingest/symbolize.h"
#include "src/array.h"

void xp_short_name(const char *dm, char *out, size_t outlen)
{
	static const char anon[] = "(anonymous namespace)";
	size_t n = strlen(dm), end = n, start = 0;
	int depth = 0;

	/* the name ends at the parameter list: the first '(' outside <> */
	for (size_t i = 0; i < n; i++) {
		if (dm[i] == '<')
			depth++;
		else if (dm[i] == '>' && depth > 0)
			depth--;
		else if (dm[i] == '(' && depth == 0) {
			if (!strncmp(dm + i, anon, sizeof(anon) - 1)) {
				i += sizeof(anon) - 2;
				continue;
			}
			end = i;
			break;
		}
	}
	/* drop template arguments at the end: k<int, 4> -> k */
	if (end > 0 && dm[end - 1] == '>') {
		depth = 0;
		for (size_t i = end; i-- > 0;) {
			if (dm[i] == '>')
				depth++;
			else if (dm[i] == '<' && --depth == 0) {
				end = i;
				break;
			}
		}
	}
	/* the last component: after the last "::" or space outside <> */
	depth = 0;
	for (size_t i = 0; i < end; i++) {
		if (dm[i] == '<')
			depth++;
		else if (dm[i] == '>' && depth > 0)
			depth--;
		else if (depth == 0 && dm[i] == ' ')
			start = i + 1;
		else if (depth == 0 && dm[i] == ':' && i + 1 < end && dm[i + 1] == ':')
			start = i + 2;
	}
	if (start >= end) {
		start = 0;
		end = n;
	}
	if (outlen == 0)
		return;
	n = end - start < outlen - 1 ? end - start : outlen - 1;
	memcpy(out, dm + start, n);
	out[n] = '\0';
}
int xp_gpuload_str_add(struct gpu_loader *L, uint32_t id, const char *text, size_t len)
{
	uint64_t *slot;
	int fresh;
	char *t;
	int64_t sid;

	if (xp_array__reserve((void **)&L->tab, &L->cap, L->used + 1, sizeof(*L->tab), 1024) ||
	    xp_u64map_upsert(&L->tab_index, id, 0, &slot, &fresh))
		return -ENOMEM;
	t = strndup(text, len);
	if (!t)
		return -ENOMEM;
	sid = L->ops->intern_string(L->ctx, t);
	if (sid < 0) {
		free(t);
		return (int)(sid < -4095 ? -EIO : sid);
	}
	if (fresh)
		*slot = ++L->used;
	else                        /* redefined: the last wins */
		free(L->tab[*slot - 1].text);
	L->tab[*slot - 1] = (struct str_entry){ .id = id, .sid = sid, .demangled = -1,
						.shortname = -1, .text = t };
	return 0;
}

/* StringIds id for a stream string id; 0 stays NULL-ish "no name" = -1. */
struct str_entry *xp_gpuload_str_get(struct gpu_loader *L, uint32_t id)
{
	uint64_t *slot = id ? xp_u64map_find(&L->tab_index, id, 0) : NULL;

	return slot ? &L->tab[*slot - 1] : NULL;
}

static int64_t unknown_sid(struct gpu_loader *L)
{
	if (L->unknown_sid < 0)
		L->unknown_sid = L->ops->intern_string(L->ctx, "[unknown]");
	return L->unknown_sid;
}

int64_t xp_gpuload_name_sid(struct gpu_loader *L, uint32_t id)
{
	struct str_entry *e = xp_gpuload_str_get(L, id);

	if (e)
		return e->sid;
	if (id)
		L->st->unknown_strings++;
	return unknown_sid(L);
}

int xp_gpuload_kernel_names(struct gpu_loader *L, uint32_t id, int64_t *mangled, int64_t *dem,
			int64_t *shrt)
{
	struct str_entry *e = xp_gpuload_str_get(L, id);
	char *d, sn[512];

	if (!e) {
		if (id)
			L->st->unknown_strings++;
		*mangled = *dem = *shrt = unknown_sid(L);
		return *mangled < 0 ? -EIO : 0;
	}
	if (e->demangled < 0) {
		d = xp_demangle_dup(e->text);
		if (!d)
			return -ENOMEM;
		xp_short_name(d, sn, sizeof(sn));
		e->demangled = L->ops->intern_string(L->ctx, d);
		e->shortname = L->ops->intern_string(L->ctx, sn);
		free(d);
		if (e->demangled < 0 || e->shortname < 0)
			return -EIO;
	}
	*mangled = e->sid;
	*dem = e->demangled;
	*shrt = e->shortname;
	return 0;
}
