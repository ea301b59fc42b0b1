/* kernaddr.c - see kernaddr.h. */
#include "capture/kernaddr.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/rundir.h"
#include "src/runfile.h"
#include "src/runfmt.h"

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

/* "ADDR rest\n" with ADDR moved by delta, in the same width. */
static int rebase_line(const char *line, uint64_t delta, FILE *out)
{
	char *end;
	uint64_t addr = strtoull(line, &end, 16);

	/* an absolute symbol (a per-CPU offset, 0) is no address: moved, it
	 * would give the delta away */
	int n;

	errno = 0;
	if (end == line || *end != ' ' || addr < KERNADDR_KERNEL_HALF)
		n = fputs(line, out);
	else
		n = fprintf(out, "%0*" PRIx64 "%s", (int)(end - line), addr + delta, end);
	return n < 0 ? (errno ? -errno : -EIO) : 0;     /* ENOSPC, as the plain copy says */
}

static int write_rebased(FILE *in, int fd, uint64_t delta, uint64_t *bytes)
{
	FILE *out = fdopen(fd, "w");
	size_t cap = 0;
	char *line = NULL;
	int err = 0;

	if (!out) {
		close(fd);
		return -errno;
	}
	while (!err && getline(&line, &cap, in) > 0)
		err = rebase_line(line, delta, out);
	free(line);
	if (!err && ferror(in))
		err = -EIO;
	if (!err)
		*bytes = (uint64_t)ftello(out);
	errno = 0;
	if (fclose(out) && !err)
		err = errno ? -errno : -EIO;
	return err;
}

int kernaddr_save_kallsyms(struct rundir *rd, uint64_t delta, uint64_t *bytes)
{
	uint64_t n = 0;
	int fd, err;
	FILE *in;

	if (!delta)
		return rundir_copy_file(rd, "/proc/kallsyms", "kallsyms", bytes);
	in = fopen("/proc/kallsyms", "re");
	if (!in)
		return -errno;
	rundir_unlink(rd, "kallsyms.tmp");      /* left by a killed xpcap */
	fd = rundir_open_file(rd, "kallsyms.tmp", O_WRONLY | O_CREAT);
	err = fd < 0 ? fd : write_rebased(in, fd, delta, &n);
	fclose(in);
	if (!err)
		err = rundir_rename(rd, "kallsyms.tmp", "kallsyms");
	if (err && fd >= 0)
		rundir_unlink(rd, "kallsyms.tmp");
	else if (!err)
		*bytes = n;
	return err;
}

/* The stack that ends the fixed part of a stack record, or NULL. */
static const struct xp_stack *record_stack(const struct xp_record_header *h)
{
	size_t fixed;

	switch (h->type) {
	case XP_REC_SAMPLE: fixed = sizeof(struct xp_sample); break;
	case XP_REC_LAUNCH: fixed = sizeof(struct xp_launch); break;
	case XP_REC_SWITCH: fixed = sizeof(struct xp_switch); break;
	default: return NULL;
	}
	if (xp_record_payload_len(h) < fixed)
		return NULL;
	return (const void *)((const char *)xp_record_payload(h) + fixed - sizeof(struct xp_stack));
}

int kernaddr_stream_has_kernel_frames(struct rundir *rd, const char *stream)
{
	const struct xp_record_header *h;
	const struct xp_stack *st;
	struct xp_reader *rdr;
	char path[PATH_MAX];
	int err, found = 0;

	/* the reader follows no link: at worst another regular stream, for a
	 * yes or no (the directory is the invoking user's) */
	if (snprintf(path, sizeof(path), "%s/%s", rd->path, stream) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	err = xp_reader_open(&rdr, path);
	if (err)
		return err;
	while (!found && xp_reader_next(rdr, &h) == 1)
		found = (st = record_stack(h)) && st->kernel_depth > 0;
	xp_reader_close(rdr);
	return found;
}
