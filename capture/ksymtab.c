/* ksymtab.c - see ksymtab.h. The copy on disk: a header, the key, the
 * entries (sorted by address) and the strings they point into:
 *   "XPKSYM1\0" | u32 key_len | u32 0 | u64 count | u64 strings_len
 *   key (padded to 8) | count x struct entry | strings ("" first)
 * in this machine's byte order: it never leaves the boot it was made in. */
#include "capture/ksymtab.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/array.h"
#include "src/safeopen.h"

#define KSYMTAB_MAX_SYMS (4u << 20)
#define KSYMTAB_MAX_BYTES (256ull << 20)
#define KSYMTAB_LINE_MAX 1024
#define KSYMTAB_KEY_MAX (1u << 20)
#define KSYMTAB_FILE "kallsyms"

static const char magic[8] = "XPKSYM1";

struct entry {
	uint64_t addr;
	uint32_t name;              /* offsets into the strings */
	uint32_t module;            /* 0: "" (vmlinux) */
	char type;
	char pad[7];
};

struct header {
	char magic[8];
	uint32_t key_len;
	uint32_t zero;
	uint64_t count;
	uint64_t strings_len;
};

struct ksymtab {
	const struct entry *e;
	size_t count;
	const char *str;
	size_t str_len;
	const char *key;            /* the copy's key; NULL: read from the kernel */
	struct entry *own_e;        /* read: the arrays */
	size_t cap_e;
	char *own_str;
	size_t cap_str;
	void *map;                  /* loaded: the mapped copy */
	size_t map_len;
};

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int ksymtab_dir(const char *path, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* All of a small /proc file, NUL-terminated, in *out (malloc'd). */
static int slurp(const char *path, char **out, size_t *len)
{
	size_t cap = 0, n = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;
	ssize_t got = 1;

	if (fd < 0)
		return -errno;
	while (got > 0 && !err) {
		if (n + 4097 > KSYMTAB_KEY_MAX)
			err = -E2BIG;
		else if (!(err = xp_array__reserve((void **)&buf, &cap, n + 4097, 1, 8192)) &&
			 (got = read(fd, buf + n, 4096)) > 0)
			n += (size_t)got;
		else if (!err && got < 0)
			err = -errno;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* "name size refs deps state address [taint]": "name size address\n" */
static int module_line(char *line, char *out, size_t room)
{
	char *tok[6], *save = NULL;
	int n = 0;

	for (char *t = strtok_r(line, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		tok[n++] = t;
	if (n < 6)
		return -EINVAL;
	if (strcmp(tok[4], "Live"))
		return -EAGAIN;
	return snprintf(out, room, "%s %s %s\n", tok[0], tok[1], tok[5]) >= (int)room ?
	       -E2BIG : 0;
}

int ksymtab_key(char **key)
{
	char *boot = NULL, *mods = NULL, *k, *save = NULL;
	size_t blen, mlen, len;
	int err;

	*key = NULL;
	err = slurp("/proc/sys/kernel/random/boot_id", &boot, &blen);
	if (err)
		return err;
	err = slurp("/proc/modules", &mods, &mlen);
	if (err == -ENOENT) {           /* a kernel without modules */
		mods = NULL;
		mlen = 0;
		err = 0;
	}
	k = err ? NULL : malloc(blen + mlen + 2);
	if (!err && !k)
		err = -ENOMEM;
	if (!err) {
		boot[strcspn(boot, "\n")] = '\0';
		len = (size_t)snprintf(k, blen + 2, "%s\n", boot);
		for (char *l = mods ? strtok_r(mods, "\n", &save) : NULL; l && !err;
		     l = strtok_r(NULL, "\n", &save)) {
			err = module_line(l, k + len, blen + mlen + 2 - len);
			len += strlen(k + len);
		}
	}
	free(boot);
	free(mods);
	if (err) {
		free(k);
		return err;
	}
	*key = k;
	return 0;
}

/* ---- reading a kallsyms text ---- */

static int add_string(struct ksymtab *t, const char *s, size_t len, uint32_t *off)
{
	int err;

	if (t->str_len + len + 1 > KSYMTAB_MAX_BYTES)
		return -E2BIG;
	err = xp_array__reserve((void **)&t->own_str, &t->cap_str, t->str_len + len + 1, 1,
				1 << 20);
	if (err)
		return err;
	memcpy(t->own_str + t->str_len, s, len);
	t->own_str[t->str_len + len] = '\0';
	*off = (uint32_t)t->str_len;
	t->str_len += len + 1;
	return 0;
}

/* One line "ffffffff81000000 T name[\t[module]]" (no newline): kept when a
 * text symbol. The module string is shared with the line before's. */
static int add_line(struct ksymtab *t, char *line, uint32_t *last_mod)
{
	char *end, *name, *mod = NULL;
	size_t nlen, mlen = 0;
	struct entry e = { 0 };
	int err;

	errno = 0;
	e.addr = strtoull(line, &end, 16);
	if (errno || end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return 0;
	e.type = end[1];
	if (e.type != 't' && e.type != 'T' && e.type != 'w' && e.type != 'W')
		return 0;
	name = end + 3;
	nlen = strcspn(name, " \t");
	if (!nlen)
		return 0;
	if (name[nlen] && (mod = strchr(name + nlen, '[')))
		mlen = strcspn(++mod, "]");
	if (t->count >= KSYMTAB_MAX_SYMS)
		return -E2BIG;
	if ((err = add_string(t, name, nlen, &e.name)))
		return err;
	if (mlen && *last_mod && !strncmp(t->own_str + *last_mod, mod, mlen) &&
	    !t->own_str[*last_mod + mlen])
		e.module = *last_mod;
	else if (mlen && (err = add_string(t, mod, mlen, &e.module)))
		return err;
	if (mlen)
		*last_mod = e.module;
	if ((err = xp_array__reserve((void **)&t->own_e, &t->cap_e, t->count + 1, sizeof(e),
				     1 << 16)))
		return err;
	t->own_e[t->count++] = e;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;   /* the kernel's order */
}

static int parse_fd(struct ksymtab *t, int fd)
{
	size_t cap = 256 << 10, have = 0, total = 0;
	char *buf = malloc(cap);
	uint32_t last_mod = 0;
	bool skip = false;          /* in an overlong line: up to its end */
	ssize_t got;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && (got = read(fd, buf + have, cap - have)) != 0) {
		char *p = buf, *nl;

		if (got < 0) {
			err = errno == EINTR ? 0 : -errno;
			continue;
		}
		if ((total += (size_t)got) > KSYMTAB_MAX_BYTES) {
			err = -E2BIG;
			break;
		}
		have += (size_t)got;
		while (!err && (nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			*nl = '\0';
			/* a NUL inside is no line of the kernel's */
			if (!skip && nl - p < KSYMTAB_LINE_MAX && strlen(p) == (size_t)(nl - p))
				err = add_line(t, p, &last_mod);
			skip = false;
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		memmove(buf, p, have);
		if (have >= KSYMTAB_LINE_MAX) {
			have = 0;
			skip = true;
		}
	}
	free(buf);      /* a last line without its newline may be cut: dropped */
	return err;
}

int ksymtab_read(struct ksymtab **out, const char *path)
{
	struct ksymtab *t = calloc(1, sizeof(*t));
	uint32_t none;
	int fd, err;

	*out = NULL;
	if (!t)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : add_string(t, "", 0, &none);
	if (!err)
		err = parse_fd(t, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		ksymtab_free(t);
		return err;
	}
	if (t->count)
		qsort(t->own_e, t->count, sizeof(*t->own_e), by_addr);
	t->e = t->own_e;
	t->str = t->own_str;
	*out = t;
	return 0;
}

/* ---- the copy ---- */

static int check_copy(struct ksymtab *t, const char *key)
{
	const struct header *h = t->map;
	size_t klen = strlen(key), off;

	if (t->map_len < sizeof(*h) || memcmp(h->magic, magic, sizeof(magic)))
		return -ESTALE;
	if (h->key_len != klen || t->map_len < sizeof(*h) + klen ||
	    memcmp((const char *)t->map + sizeof(*h), key, klen))
		return -ESTALE;
	off = sizeof(*h) + pad8(klen);
	if (h->count > KSYMTAB_MAX_SYMS || h->strings_len < 1 ||
	    h->strings_len > KSYMTAB_MAX_BYTES ||
	    off + h->count * sizeof(struct entry) + h->strings_len != t->map_len)
		return -EINVAL;
	t->e = (const struct entry *)((const char *)t->map + off);
	t->count = (size_t)h->count;
	t->str = (const char *)(t->e + t->count);
	t->str_len = (size_t)h->strings_len;
	if (t->str[0] || t->str[t->str_len - 1])
		return -EINVAL;
	/* root's own file, yet checked: a bad one is never a wrong name */
	for (size_t i = 0; i < t->count; i++)
		if (t->e[i].name >= t->str_len || t->e[i].module >= t->str_len ||
		    (i && t->e[i].addr < t->e[i - 1].addr) ||
		    !t->e[i].type || !strchr("tTwW", t->e[i].type))
			return -EINVAL;
	return 0;
}

int ksymtab_load(struct ksymtab **out, int dirfd, const char *key)
{
	struct ksymtab *t;
	struct stat st;
	int fd, err;

	*out = NULL;
	fd = xp_open_regular(dirfd, KSYMTAB_FILE, 0, &st);
	if (fd < 0)
		return fd;
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return -EPERM;
	}
	if ((uint64_t)st.st_size < sizeof(struct header) ||
	    (uint64_t)st.st_size > 2 * KSYMTAB_MAX_BYTES) {
		close(fd);
		return -EINVAL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return -ENOMEM;
	}
	t->map_len = (size_t)st.st_size;
	t->map = mmap(NULL, t->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (t->map == MAP_FAILED) {
		t->map = NULL;
		err = -errno;
	} else {
		err = check_copy(t, key);
	}
	if (!err && !(t->key = strdup(key)))
		err = -ENOMEM;
	if (err) {
		ksymtab_free(t);
		return err;
	}
	*out = t;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

int ksymtab_save(const struct ksymtab *t, int dirfd, const char *key)
{
	struct header h = { .key_len = (uint32_t)strlen(key), .count = t->count,
			    .strings_len = t->str_len };
	static const char zeros[8];
	char tmp[64];
	int fd, err;

	if (strlen(key) > KSYMTAB_KEY_MAX)
		return -E2BIG;
	memcpy(h.magic, magic, sizeof(magic));
	snprintf(tmp, sizeof(tmp), KSYMTAB_FILE ".%d.tmp", (int)getpid());
	unlinkat(dirfd, tmp, 0);        /* left by a killed xpcap of this pid */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = write_all(fd, &h, sizeof(h));
	if (!err)
		err = write_all(fd, key, h.key_len);
	if (!err)
		err = write_all(fd, zeros, pad8(h.key_len) - h.key_len);
	if (!err)
		err = write_all(fd, t->e, t->count * sizeof(*t->e));
	if (!err)
		err = write_all(fd, t->str, t->str_len);
	if (close(fd) && !err)
		err = -errno;
	/* rename replaces the name, never what a link there points at */
	if (!err && renameat(dirfd, tmp, dirfd, KSYMTAB_FILE))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	return err;
}

/* ---- lookups ---- */

/* The index after the last entry at or below ip. */
static size_t upper(const struct ksymtab *t, uint64_t ip)
{
	size_t lo = 0, hi = t->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->e[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int ksymtab_find(const struct ksymtab *t, uint64_t ip, size_t *first, size_t *n)
{
	size_t end = upper(t, ip), i;

	if (!end)
		return -ENOENT;
	for (i = end - 1; i > 0 && t->e[i - 1].addr == t->e[end - 1].addr; i--)
		;
	*first = i;
	*n = end - i;
	return 0;
}

/* Whether the key lists module name ("\nname size address\n"). */
static bool listed(const char *key, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strchr(key, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
		if (!strncmp(p + 1, name, n) && p[1 + n] == ' ')
			return true;
	return false;
}

bool ksymtab_stable(const struct ksymtab *t, uint64_t ip)
{
	size_t end = upper(t, ip), i;
	const char *mod;

	if (!t->key)
		return true;
	if (!end || end == t->count)
		return false;
	/* the symbols below ip and the next one above: one owner */
	mod = t->str + t->e[end].module;
	for (i = end; i-- > 0 && t->e[i].addr == t->e[end - 1].addr;)
		if (strcmp(t->str + t->e[i].module, mod))
			return false;
	return !mod[0] || listed(t->key, mod);
}

size_t ksymtab_count(const struct ksymtab *t)
{
	return t ? t->count : 0;
}

void ksymtab_sym(const struct ksymtab *t, size_t i, struct ksym *s)
{
	s->addr = t->e[i].addr;
	s->type = t->e[i].type;
	s->name = t->str + t->e[i].name;
	s->module = t->str + t->e[i].module;
}

void ksymtab_free(struct ksymtab *t)
{
	if (!t)
		return;
	if (t->map)
		munmap(t->map, t->map_len);
	free(t->own_e);
	free(t->own_str);
	free((char *)t->key);
	free(t);
}
