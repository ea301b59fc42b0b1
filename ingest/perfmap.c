/* perfmap.c - parse and search perf-PID.map files; see perfmap.h. */
#include "ingest/perfmap.h"
#include "src/readline.h"
#include "src/array.h"
#include "src/runfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PERFMAP_LINE_MAX 4096

struct pm_entry {
	uint64_t start, end;        /* [start, end) */
	size_t seq;                 /* line number: later lines win on overlap */
	char *name;                 /* owned */
};

struct xp_perfmap {
	struct pm_entry *e;
	size_t count, cap, skipped;
};

static int cmp_entry(const void *a, const void *b)
{
	const struct pm_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int xp_perfmap_parse(struct xp_perfmap **out, FILE *f)
{
	return xp_perfmap_parse_budget(out, f, NULL);
}

int xp_perfmap_parse_budget(struct xp_perfmap **out, FILE *f, struct xp_perfmap_budget *b)
{
	struct xp_perfmap *m = calloc(1, sizeof(*m));
	char line[PERFMAP_LINE_MAX];
	uint64_t bytes = 0;
	size_t seq = 0;
	int err = 0, got;

	if (!m)
		return -ENOMEM;
	while ((got = xp_read_line(f, line, sizeof(line), &bytes, NULL)) >= 0) {
		uint64_t start, size;
		char *p = line, *end;
		size_t len = strlen(line);

		seq++;
		if (b && (bytes > b->bytes || seq > b->lines)) {
			err = -E2BIG;
			goto fail;
		}
		if (got) {
			m->skipped++;
			continue;
		}
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		errno = 0;
		start = strtoull(p, &end, 16);
		if (errno || end == p || *end != ' ') {
			m->skipped++;
			continue;
		}
		p = end + 1;
		size = strtoull(p, &end, 16);
		if (errno || end == p || *end != ' ' || !end[1] || size == 0 ||
		    start + size < start) {
			m->skipped++;
			continue;
		}
		err = m->count >= XP_PERFMAP_MAX ? -E2BIG :
		      xp_array__reserve((void **)&m->e, &m->cap, m->count + 1, sizeof(*m->e), 1024);
		if (err)
			goto fail;
		m->e[m->count].name = strdup(end + 1);
		if (!m->e[m->count].name) {
			err = -ENOMEM;
			goto fail;
		}
		m->e[m->count].start = start;
		m->e[m->count].end = start + size;
		m->e[m->count].seq = seq;
		m->count++;
	}
	if (m->count)
		qsort(m->e, m->count, sizeof(*m->e), cmp_entry);
	if (b) {
		b->bytes -= bytes;
		b->lines -= seq;
	}
	*out = m;
	return 0;
fail:
	xp_perfmap_free(m);
	return err;
}

int xp_perfmap_load(struct xp_perfmap **out, const char *path)
{
	FILE *f = xp_run_file_fopen(path);
	int err;

	if (!f)
		return -errno;
	err = xp_perfmap_parse(out, f);
	fclose(f);
	return err;
}

const char *xp_perfmap_lookup(const struct xp_perfmap *m, uint64_t ip)
{
	size_t lo = 0, hi = m ? m->count : 0;
	const struct pm_entry *best = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* entries are short and rarely overlap: look back a few for the latest
	 * line that contains ip */
	for (size_t i = lo, n = 0; i > 0 && n < 64; i--, n++) {
		const struct pm_entry *e = &m->e[i - 1];

		if (ip < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best ? best->name : NULL;
}

size_t xp_perfmap_count(const struct xp_perfmap *m)
{
	return m ? m->count : 0;
}

size_t xp_perfmap_skipped(const struct xp_perfmap *m)
{
	return m ? m->skipped : 0;
}

void xp_perfmap_free(struct xp_perfmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->count; i++)
		free(m->e[i].name);
	free(m->e);
	free(m);
}
