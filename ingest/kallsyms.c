/* kallsyms.c - parse "ffffffff81000000 T _stext [module]" lines. Only text
 * symbols (t, T, w, W) are kept: data symbols would capture IPs that fall
 * after the end of the last function. */
#include "ingest/kallsyms.h"
#include "src/readline.h"
#include "src/array.h"
#include "src/runfile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A kernel has a few hundred thousand symbols in 5-20 MB: a copy past
 * these bounds is not one (a received run is hostile input). */
#define KALLSYMS_MAX_SYMS (4u << 20)
#define KALLSYMS_MAX_BYTES (256ull << 20)
#define KALLSYMS_LINE_MAX 1024

struct ksym {
	uint64_t addr;
	char *name;                 /* owned */
	char *module;               /* owned, or NULL for vmlinux */
};

struct xp_kallsyms {
	struct ksym *syms;
	size_t count, cap, skipped;
	uint64_t bytes;             /* read */
	int complete;               /* the last line ended with a newline */
	int truncated;              /* nothing is known past the last symbol */
};

/* Symbols that mark where a kind of text ends: nothing lives at or after
 * them until the next symbol ("_etext", "_einittext", "__entry_text_end"). */
static int end_marker(const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(name, "_end") || (n > 9 && !strcmp(name + n - 9, "_text_end")))
		return 1;
	while (*name == '_')
		name++;
	n = strlen(name);
	return name[0] == 'e' && n >= 5 && !strcmp(name + n - 4, "text") && !strchr(name, '_');
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);   /* stable order for aliases */
}

/* Parses one line into *sym; 1 kept, 0 skipped, -ENOMEM. */
static int parse_line(char *line, struct ksym *sym)
{
	char *end, *name, *mod;
	size_t len;
	uint64_t addr;
	char type;

	errno = 0;
	addr = strtoull(line, &end, 16);
	if (errno || end == line || *end != ' ')
		return 0;
	type = end[1];
	if (!type || end[2] != ' ')
		return 0;
	if (type != 't' && type != 'T' && type != 'w' && type != 'W')
		return 0;
	name = end + 3;
	len = strcspn(name, " \n");
	mod = name[len] == ' ' ? strchr(name + len + 1, '[') : NULL;
	name[len] = '\0';
	if (!len)
		return 0;
	sym->addr = addr;
	sym->name = strdup(name);
	sym->module = NULL;
	if (!sym->name)
		return -ENOMEM;
	if (mod) {
		size_t n = strcspn(mod + 1, "]");

		sym->module = strndup(mod + 1, n);
		if (!sym->module) {
			free(sym->name);
			return -ENOMEM;
		}
	}
	return 1;
}

int xp_kallsyms_parse(struct xp_kallsyms **out, FILE *f)
{
	struct xp_kallsyms *k = calloc(1, sizeof(*k));
	char line[KALLSYMS_LINE_MAX];
	int err = 0, got, newline = 1;

	if (!k)
		return -ENOMEM;
	while ((got = xp_read_line(f, line, sizeof(line), &k->bytes, &newline)) >= 0) {
		struct ksym sym;
		int r;

		if (k->bytes > KALLSYMS_MAX_BYTES) {
			err = -E2BIG;
			goto fail;
		}
		if (!newline) {
			/* cut in the middle: "ffffffff81003000 T fu" is not "fu" */
			k->skipped++;
			break;
		}
		if (got) {
			/* overlong line, or a NUL in it: count it */
			k->skipped++;
			continue;
		}
		/* the tab before [module] is turned into a space for the parser */
		for (char *p = line; *p; p++)
			if (*p == '\t')
				*p = ' ';
		r = parse_line(line, &sym);
		if (r < 0) {
			err = r;
			goto fail;
		}
		if (r == 0) {
			k->skipped++;
			continue;
		}
		err = k->count >= KALLSYMS_MAX_SYMS ? -E2BIG :
		      xp_array__reserve((void **)&k->syms, &k->cap, k->count + 1, sizeof(*k->syms),
					4096);
		if (err) {
			free(sym.name);
			free(sym.module);
			goto fail;
		}
		k->syms[k->count++] = sym;
	}
	k->complete = newline;
	if (k->count)
		qsort(k->syms, k->count, sizeof(*k->syms), cmp_ksym);
	*out = k;
	return 0;
fail:
	xp_kallsyms_free(k);
	return err;
}

int xp_kallsyms_load(struct xp_kallsyms **out, const char *path)
{
	FILE *f = xp_run_file_fopen(path);
	int err;

	if (!f)
		return -errno;
	err = xp_kallsyms_parse(out, f);
	fclose(f);
	return err;
}

const char *xp_kallsyms_lookup(const struct xp_kallsyms *k, uint64_t ip,
			       const char **module)
{
	size_t lo = 0, hi = k ? k->count : 0;

	if (module)
		*module = NULL;
	/* first symbol above ip, then step back one */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || k->syms[lo - 1].addr == 0)
		return NULL;
	if ((k->truncated && lo == k->count && ip > k->syms[lo - 1].addr) ||
	    ip - k->syms[lo - 1].addr >= XP_KSYM_MAX_EXTENT)
		return NULL;
	/* aliases at one address: the first in sorted order that is not an
	 * end marker names them all */
	while (lo > 1 && k->syms[lo - 2].addr == k->syms[lo - 1].addr)
		lo--;
	for (size_t i = lo - 1; i < k->count && k->syms[i].addr == k->syms[lo - 1].addr; i++) {
		if (end_marker(k->syms[i].name))
			continue;
		if (module)
			*module = k->syms[i].module;
		return k->syms[i].name;
	}
	return NULL;
}

int xp_kallsyms_beyond(const struct xp_kallsyms *k, uint64_t ip)
{
	return k && k->truncated && k->count && ip > k->syms[k->count - 1].addr;
}

uint64_t xp_kallsyms_bytes(const struct xp_kallsyms *k)
{
	return k ? k->bytes : 0;
}

int xp_kallsyms_complete(const struct xp_kallsyms *k)
{
	return k ? k->complete : 0;
}

void xp_kallsyms_set_truncated(struct xp_kallsyms *k)
{
	if (k)
		k->truncated = 1;
}

size_t xp_kallsyms_count(const struct xp_kallsyms *k)
{
	return k ? k->count : 0;
}

size_t xp_kallsyms_skipped(const struct xp_kallsyms *k)
{
	return k ? k->skipped : 0;
}

void xp_kallsyms_free(struct xp_kallsyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->count; i++) {
		free(k->syms[i].name);
		free(k->syms[i].module);
	}
	free(k->syms);
	free(k);
}
