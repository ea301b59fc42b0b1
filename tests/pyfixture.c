/* pyfixture.c - the tests/pylines fixture reader; see pyfixture.h. */
#include "pyfixture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int parse_table(struct xp_pycode_fx *c, const char *hex)
{
	size_t n = strcspn(hex, "\n");

	if (n % 2)
		return -EBADMSG;
	c->table = malloc(n / 2 + 1);
	if (!c->table)
		return -ENOMEM;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EBADMSG;
		c->table[i] = (uint8_t)(hi << 4 | lo);
	}
	c->table_len = n / 2;
	return 0;
}

static int parse_lines(struct xp_pycode_fx *c, char *s)
{
	char *save = NULL, *tok[3];

	for (char *first = s;; first = NULL) {
		struct xp_pyrange_fx *r;

		for (int i = 0; i < 3; i++) {
			tok[i] = strtok_r(i ? NULL : first, " \n", &save);
			if (!tok[i])
				return i ? -EBADMSG : 0;
		}
		r = realloc(c->ranges, (c->nranges + 1) * sizeof(*r));
		if (!r)
			return -ENOMEM;
		c->ranges = r;
		r += c->nranges++;
		r->start = (uint32_t)strtoul(tok[0], NULL, 10);
		r->end = (uint32_t)strtoul(tok[1], NULL, 10);
		r->line = !strcmp(tok[2], "-") ? -1 : atoi(tok[2]);
	}
}

int xp_pyfixture_load(struct xp_pyfixture **out, const char *path)
{
	struct xp_pyfixture *f = calloc(1, sizeof(*f));
	struct xp_pycode_fx *c = NULL;
	char *line = NULL;
	size_t cap = 0;
	FILE *in;
	int err = 0;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	in = fopen(path, "re");
	if (!in) {
		free(f);
		return -errno;
	}
	while (!err && getline(&line, &cap, in) > 0) {
		if (!strncmp(line, "code ", 5)) {
			struct xp_pycode_fx *p = realloc(f->codes, (f->ncodes + 1) * sizeof(*p));
			unsigned v;

			if (!p) {
				err = -ENOMEM;
				break;
			}
			f->codes = p;
			c = memset(&f->codes[f->ncodes++], 0, sizeof(*c));
			if (sscanf(line + 5, "%x %u %u %127s", &v, &c->first_line, &c->code_bytes,
				   c->qualname) != 4)
				err = -EBADMSG;
			c->version = (uint16_t)v;
		} else if (!c && line[0] != '#') {
			err = -EBADMSG;
		} else if (!strncmp(line, "file ", 5)) {
			snprintf(c->filename, sizeof(c->filename), "%.*s",
				 (int)strcspn(line + 5, "\n"), line + 5);
		} else if (!strncmp(line, "table ", 6)) {
			err = parse_table(c, line + 6);
		} else if (!strncmp(line, "lines ", 6)) {
			err = parse_lines(c, line + 6);
		}
	}
	free(line);
	fclose(in);
	if (!err && !f->ncodes)
		err = -EBADMSG;
	if (err) {
		xp_pyfixture_free(f);
		return err;
	}
	*out = f;
	return 0;
}

void xp_pyfixture_free(struct xp_pyfixture *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->ncodes; i++) {
		free(f->codes[i].table);
		free(f->codes[i].ranges);
	}
	free(f->codes);
	free(f);
}

const struct xp_pycode_fx *xp_pyfixture_find(const struct xp_pyfixture *f, const char *qualname)
{
	for (size_t i = 0; i < f->ncodes; i++)
		if (!strcmp(f->codes[i].qualname, qualname))
			return &f->codes[i];
	return NULL;
}

int xp_pyfixture_truth(const struct xp_pycode_fx *c, uint32_t offset)
{
	for (size_t i = 0; i < c->nranges; i++)
		if (offset >= c->ranges[i].start && offset < c->ranges[i].end)
			return c->ranges[i].line;
	return -2;
}

int64_t xp_pyfixture_offset_of(const struct xp_pycode_fx *c, int line)
{
	for (size_t i = 0; i < c->nranges; i++)
		if (c->ranges[i].line == line)
			return c->ranges[i].start;
	return -1;
}
