/* kernaddr.c - see kernaddr.h. */
#include "capture/kernaddr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/ksymtab.h"
#include "capture/rundir.h"

#define KERNADDR_KERNEL_HALF 0xffff000000000000ull

static int read_sysctl(const char *path, long *v)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fscanf(f, "%ld", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

bool kernaddr_user_sees(void)
{
	long restrict_, paranoid;

	if (read_sysctl("/proc/sys/kernel/kptr_restrict", &restrict_) ||
	    read_sysctl("/proc/sys/kernel/perf_event_paranoid", &paranoid))
		return false;
	return restrict_ == 0 && paranoid <= 1;
}

int kernaddr_rebase_delta(uint64_t *delta)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	uint64_t addr, text = 0, stext = 0;
	char type, name[128];

	if (!f)
		return -errno;
	while (!text && fscanf(f, "%" SCNx64 " %c %127s%*[^\n]", &addr, &type, name) == 3) {
		if (!strcmp(name, "_text"))
			text = addr;
		else if (!strcmp(name, "_stext") && !stext)
			stext = addr;
	}
	fclose(f);
	if (!text)
		text = stext;
	if (!text)
		return -ENOENT;
	*delta = KERNADDR_REBASED_TEXT - text;
	return 0;
}

/* Where the symbols come from: root's copy of this boot's (ksymtab.h)
 * when it names every IP as /proc/kallsyms would; else /proc/kallsyms,
 * which then replaces the copy (unless the modules changed meanwhile). */
static int symbols(struct ksymtab **t, const uint64_t *ips, size_t n, bool all)
{
	char *key = NULL, *again = NULL;
	int dir = -1, err;
	size_t i = 0;

	if (ksymtab_key(&key))
		key = NULL;
	if (key && !all && (dir = ksymtab_dir(KSYMTAB_DIR, false)) >= 0 &&
	    !ksymtab_load(t, dir, key)) {
		while (i < n && ksymtab_stable(*t, ips[i]))
			i++;
		if (i == n)
			goto out;
		ksymtab_free(*t);
		*t = NULL;
	}
	err = ksymtab_read(t, "/proc/kallsyms");
	if (err) {
		free(key);
		if (dir >= 0)
			close(dir);
		return err;
	}
	if (key && geteuid() == 0 && !ksymtab_key(&again) && !strcmp(key, again)) {
		if (dir < 0)
			dir = ksymtab_dir(KSYMTAB_DIR, true);
		if (dir >= 0)
			ksymtab_save(*t, dir, key);     /* or the next run reads again */
	}
out:
	free(again);
	free(key);
	if (dir >= 0)
		close(dir);
	return 0;
}

/* One symbol as /proc/kallsyms prints it, its address moved by delta (an
 * absolute symbol, below the kernel half, is no address: moved, it would
 * give the delta away). */
static void put_sym(FILE *out, const struct ksymtab *t, size_t i, uint64_t delta)
{
	struct ksym s;

	ksymtab_sym(t, i, &s);
	if (delta && s.addr >= KERNADDR_KERNEL_HALF)
		s.addr += delta;
	fprintf(out, "%016" PRIx64 " %c %s%s%s%s\n", s.addr, s.type, s.name,
		s.module[0] ? "\t[" : "", s.module, s.module[0] ? "]" : "");
}

/* ips sorted: their symbols come in address order, each group once. */
static int write_symbols(const struct ksymtab *t, int fd, const uint64_t *ips, size_t n,
			 bool all, uint64_t delta, uint64_t *bytes)
{
	FILE *out = fdopen(fd, "w");
	size_t first, count, done = 0;
	int err = 0;

	if (!out) {
		close(fd);
		return -errno;
	}
	for (size_t i = 0; all && i < ksymtab_count(t); i++)
		put_sym(out, t, i, delta);
	for (size_t i = 0; !all && i < n; i++) {
		if (ksymtab_find(t, ips[i], &first, &count) || first + count <= done)
			continue;
		for (size_t j = first; j < first + count; j++)
			put_sym(out, t, j, delta);
		done = first + count;
	}
	errno = 0;
	if (ferror(out))
		err = errno ? -errno : -EIO;
	if (!err)
		*bytes = (uint64_t)ftello(out);
	errno = 0;
	if (fclose(out) && !err)
		err = errno ? -errno : -EIO;    /* ENOSPC, as a plain copy says */
	return err;
}

int kernaddr_save_kallsyms(struct rundir *rd, uint64_t delta, const uint64_t *ips, size_t n,
			   bool all, uint64_t *bytes)
{
	struct ksymtab *t = NULL;
	uint64_t size = 0;
	int fd, err;

	err = symbols(&t, ips, n, all);
	if (err)
		return err;
	rundir_unlink(rd, "kallsyms.tmp");      /* left by a killed xpcap */
	fd = rundir_open_file(rd, "kallsyms.tmp", O_WRONLY | O_CREAT);
	err = fd < 0 ? fd : write_symbols(t, fd, ips, n, all, delta, &size);
	ksymtab_free(t);
	if (!err)
		err = rundir_rename(rd, "kallsyms.tmp", "kallsyms");
	if (err && fd >= 0)
		rundir_unlink(rd, "kallsyms.tmp");
	else if (!err)
		*bytes = size;
	return err;
}
