/* test-unwind.c - the offline unwinder on this very process: a known call
 * chain copies its own registers and stack (as the BPF program does in
 * dwarf mode), then xp_unwind walks the copy through CFI, and through the
 * frame pointer of the one function that has no CFI, and the symbolized
 * frames must be the chain in order. Damaged copies must end the walk
 * early, never crash it. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check-main.h"
#include "capture/procmaps.h"
#include "ingest/symbolize.h"
#include "ingest/unwind.h"
#include "unwind/chain.h"

#define COPY 16384

struct procs {
	struct xp_symbolizer *sym;
	struct xp_mappings *maps;
};

static void add_mapping(void *ctx, const struct xp_mmap *m, const char *path)
{
	struct procs *p = ctx;
	uint32_t mod;

	if (path[0] != '/')
		return;
	ck_assert_int_eq(xp_symbolizer_module(p->sym, path, m->build_id, m->build_id_size, &mod), 0);
	ck_assert_int_eq(xp_mappings_add(p->maps, m->pid, 0, m->addr, m->len, m->pgoff, mod, 1), 0);
}

static uint64_t stack_end(void)
{
	char line[4096 + 128];
	struct procmaps_entry e;
	uint64_t end = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f))
		if (procmaps_parse_line(line, &e) == 0 && strcmp(e.path, "[stack]") == 0)
			end = e.end;
	fclose(f);
	ck_assert_uint_ne(end, 0);
	return end;
}

/* Symbolizes ips[i] of this process (return addresses looked up at ip - 1). */
static void name_of(struct procs *p, const uint64_t *ips, int i, char *buf, size_t len)
{
	uint64_t ip = i ? ips[i] - 1 : ips[i];
	const struct xp_mapping *m = xp_mappings_lookup(p->maps, (uint32_t)getpid(), 1, ip);

	snprintf(buf, len, "?");
	if (m)
		xp_symbolizer_lookup(p->sym, m->module, ip - m->start + m->pgoff, buf, len);
}

static struct procs procs_of_self(void)
{
	struct procs p = { xp_symbolizer_new(NULL), xp_mappings_new() };

	ck_assert_ptr_nonnull(p.sym);
	ck_assert_ptr_nonnull(p.maps);
	ck_assert_int_eq(procmaps_walk(getpid(), 0, add_mapping, &p), 0);
	return p;
}

static void procs_free(struct procs *p)
{
	xp_mappings_free(p->maps);
	xp_symbolizer_free(p->sym);
}

START_TEST(walks_cfi_and_frame_pointer_frames)
{
	static const char *const want[] = { "chain_capture", "chain_inner", "chain_middle",
					    "chain_outer" };
	uint8_t *buf = malloc(COPY);
	struct xp_user_regs_copy regs;
	struct procs p;
	struct xp_unwinder *uw;
	uint64_t ips[XP_MAX_STACK_DEPTH];
	char name[256];
	int n;

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(chain_outer(&regs, buf, COPY, stack_end()), 4);
	p = procs_of_self();
	uw = xp_unwinder_new(p.maps, p.sym);
	ck_assert_ptr_nonnull(uw);
	n = xp_unwind(uw, (uint32_t)getpid(), 1, &regs, buf, ips, XP_MAX_STACK_DEPTH);
	ck_assert_int_ge(n, 5);
	ck_assert_uint_eq(ips[0], regs.ip);
	for (int i = 0; i < 4; i++) {
		name_of(&p, ips, i, name, sizeof(name));
		ck_assert_msg(strcmp(name, want[i]) == 0, "frame %d is %s, not %s", i, name, want[i]);
	}
	/* and on past the chain, into this test function */
	name_of(&p, ips, 4, name, sizeof(name));
	ck_assert_msg(strstr(name, "walks_cfi_and_frame_pointer_frames"), "frame 4 is %s", name);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->copies, 1);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->unwound, 1);

	/* a second walk of the same process reuses its session and agrees */
	uint64_t again[XP_MAX_STACK_DEPTH];

	ck_assert_int_eq(xp_unwind(uw, (uint32_t)getpid(), 2, &regs, buf, again, XP_MAX_STACK_DEPTH), n);
	ck_assert_mem_eq(again, ips, (size_t)n * sizeof(ips[0]));
	/* max bounds the walk */
	ck_assert_int_eq(xp_unwind(uw, (uint32_t)getpid(), 3, &regs, buf, again, 2), 2);
	xp_unwinder_free(uw);
	procs_free(&p);
	free(buf);
}
END_TEST

START_TEST(short_or_damaged_copies_end_the_walk)
{
	uint8_t *buf = malloc(COPY);
	struct xp_user_regs_copy regs, cut;
	struct procs p;
	struct xp_unwinder *uw;
	uint64_t ips[XP_MAX_STACK_DEPTH];
	int full, n;

	ck_assert_ptr_nonnull(buf);
	chain_outer(&regs, buf, COPY, stack_end());
	p = procs_of_self();
	uw = xp_unwinder_new(p.maps, p.sym);
	full = xp_unwind(uw, (uint32_t)getpid(), 1, &regs, buf, ips, XP_MAX_STACK_DEPTH);

	/* a copy that ends inside the chain: fewer frames, the leaf first */
	cut = regs;
	cut.size = 64;
	n = xp_unwind(uw, (uint32_t)getpid(), 1, &cut, buf, ips, XP_MAX_STACK_DEPTH);
	ck_assert_int_ge(n, 1);
	ck_assert_int_lt(n, full);
	ck_assert_uint_eq(ips[0], regs.ip);

	/* no bytes at all, and bytes that are noise: never a crash */
	cut.size = 0;
	ck_assert_int_ge(xp_unwind(uw, (uint32_t)getpid(), 1, &cut, buf, ips, XP_MAX_STACK_DEPTH), 1);
	for (size_t i = 0; i < COPY; i++)
		buf[i] = (uint8_t)(i * 131 + 7);
	ck_assert_int_ge(xp_unwind(uw, (uint32_t)getpid(), 1, &regs, buf, ips, XP_MAX_STACK_DEPTH), 1);

	/* a copy the registers cannot describe */
	cut = regs;
	cut.size = 12;
	ck_assert_int_eq(xp_unwind(uw, (uint32_t)getpid(), 1, &cut, buf, ips, XP_MAX_STACK_DEPTH), -EINVAL);
	cut.sp = UINT64_MAX - 8;
	cut.size = 64;
	ck_assert_int_eq(xp_unwind(uw, (uint32_t)getpid(), 1, &cut, buf, ips, XP_MAX_STACK_DEPTH), -EINVAL);
	xp_unwinder_free(uw);
	procs_free(&p);
	free(buf);
}
END_TEST

/* A process the unwinder knows no mapping of: the leaf alone. */
START_TEST(unknown_process_gives_the_leaf)
{
	uint8_t *buf = malloc(COPY);
	struct xp_user_regs_copy regs;
	struct xp_symbolizer *sym = xp_symbolizer_new(NULL);
	struct xp_mappings *maps = xp_mappings_new();
	struct xp_unwinder *uw = xp_unwinder_new(maps, sym);
	uint64_t ips[XP_MAX_STACK_DEPTH];
	int n;

	chain_outer(&regs, buf, COPY, stack_end());
	n = xp_unwind(uw, 4242, 1, &regs, buf, ips, XP_MAX_STACK_DEPTH);
	ck_assert_int_ge(n, 1);
	ck_assert_uint_eq(ips[0], regs.ip);
	xp_unwinder_free(uw);
	xp_mappings_free(maps);
	xp_symbolizer_free(sym);
	free(buf);
}
END_TEST

/* Open fds of this process. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = -1;         /* the directory's own */

	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n - 2;       /* . and .. */
}

static int lowest_free_fd(void)
{
	int fd = dup(0);

	ck_assert_int_ge(fd, 0);
	close(fd);
	return fd;
}

struct as_pid {
	struct procs *p;
	uint32_t pid;
};

static void add_mapping_as(void *ctx, const struct xp_mmap *m, const char *path)
{
	struct as_pid *a = ctx;
	uint32_t mod;

	if (path[0] != '/')
		return;
	ck_assert_int_eq(xp_symbolizer_module(a->p->sym, path, m->build_id, m->build_id_size,
					      &mod), 0);
	ck_assert_int_eq(xp_mappings_add(a->p->maps, a->pid, 0, m->addr, m->len, m->pgoff, mod, 1),
			 0);
}

#define MANY 300
#define FAKE_PID 100000u

/* This process's mappings under MANY more pids: as many processes of one
 * program, each with its own address space. */
static struct procs procs_many(void)
{
	struct procs p = procs_of_self();

	for (uint32_t i = 0; i < MANY; i++) {
		struct as_pid a = { &p, FAKE_PID + i };

		ck_assert_int_eq(procmaps_walk(getpid(), 0, add_mapping_as, &a), 0);
	}
	return p;
}

/* Issue 29: one libdwfl session per process, never closed: 250 short
 * processes held 19,999 fds. Sessions are bounded and closed at exit; the
 * walks are the same as with a session each. */
START_TEST(sessions_are_bounded)
{
	uint8_t *buf = malloc(COPY);
	struct xp_user_regs_copy regs;
	struct procs p;
	struct xp_unwinder *uw;
	uint64_t ips[XP_MAX_STACK_DEPTH], again[XP_MAX_STACK_DEPTH];
	int n, base, one, peak = 0;

	ck_assert_ptr_nonnull(buf);
	chain_outer(&regs, buf, COPY, stack_end());
	p = procs_many();
	uw = xp_unwinder_new(p.maps, p.sym);
	n = xp_unwind(uw, FAKE_PID, 1, &regs, buf, ips, XP_MAX_STACK_DEPTH);
	ck_assert_int_ge(n, 5);
	base = open_fds();
	ck_assert_int_eq(xp_unwind(uw, FAKE_PID + 1, 1, &regs, buf, again, XP_MAX_STACK_DEPTH), n);
	one = open_fds() - base;      /* what one session holds */
	ck_assert_int_gt(one, 0);
	for (uint32_t i = 2; i < MANY; i++) {
		ck_assert_int_eq(xp_unwind(uw, FAKE_PID + i, 1, &regs, buf, again, XP_MAX_STACK_DEPTH), n);
		ck_assert_mem_eq(again, ips, (size_t)n * sizeof(ips[0]));
		if (open_fds() > peak)
			peak = open_fds();
	}
	/* at most 16 sessions open (the first is in base) */
	ck_assert_msg(peak - base <= 15 * one, "%d fds over %d, %d a session", peak - base, base, one);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->unwound, MANY);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->sessions_opened, MANY);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->no_fd + xp_unwinder_stats(uw)->not_walked, 0);
	/* the processes exit: their sessions close, their fds with them */
	for (uint32_t i = 0; i < MANY; i++)
		xp_unwinder_exited(uw, FAKE_PID + i);
	ck_assert_int_le(open_fds(), base - one);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->sessions_closed, MANY);
	xp_unwinder_free(uw);
	procs_free(&p);
	free(buf);
}
END_TEST

/* With few fds left (ulimit -n), sessions give theirs back before a walk
 * would go without: every walk is done, or counted when even one session
 * cannot get its files. */
START_TEST(few_fds_every_walk_done_or_counted)
{
	uint8_t *buf = malloc(COPY);
	struct xp_user_regs_copy regs;
	struct procs p;
	struct xp_unwinder *uw;
	struct rlimit rl;
	uint64_t ips[XP_MAX_STACK_DEPTH], again[XP_MAX_STACK_DEPTH];
	int n, base, one, full = 0;

	ck_assert_ptr_nonnull(buf);
	chain_outer(&regs, buf, COPY, stack_end());
	p = procs_many();
	uw = xp_unwinder_new(p.maps, p.sym);
	n = xp_unwind(uw, FAKE_PID, 1, &regs, buf, ips, XP_MAX_STACK_DEPTH);
	base = open_fds();
	ck_assert_int_eq(xp_unwind(uw, FAKE_PID + 1, 1, &regs, buf, again, XP_MAX_STACK_DEPTH), n);
	one = open_fds() - base;
	xp_unwinder_free(uw);
	/* room for the open fds and two sessions more, not 16 */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	rl.rlim_cur = (rlim_t)(lowest_free_fd() + 2 * one + 2);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	uw = xp_unwinder_new(p.maps, p.sym);
	for (uint32_t i = 0; i < 60; i++) {
		int got = xp_unwind(uw, FAKE_PID + i, 1, &regs, buf, again, XP_MAX_STACK_DEPTH);

		full += got == n && memcmp(again, ips, (size_t)n * sizeof(ips[0])) == 0;
	}
	ck_assert_uint_eq(xp_unwinder_stats(uw)->copies, 60);
	ck_assert_msg(full == 60, "%d of 60 walks whole, %" PRIu64 " counted without fds", full,
		      xp_unwinder_stats(uw)->no_fd);
	/* and no room for even one session: the walks are counted (the
	 * limit is on fd numbers: the lowest free one leaves none) */
	for (uint32_t i = 0; i < MANY; i++)
		xp_unwinder_exited(uw, FAKE_PID + i);
	rl.rlim_cur = (rlim_t)lowest_free_fd();
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	for (uint32_t i = 100; i < 110; i++)
		xp_unwind(uw, FAKE_PID + i, 1, &regs, buf, again, XP_MAX_STACK_DEPTH);
	ck_assert_uint_eq(xp_unwinder_stats(uw)->no_fd, 10);
	xp_unwinder_free(uw);
	procs_free(&p);
	free(buf);
}
END_TEST

static Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, walks_cfi_and_frame_pointer_frames);
	tcase_add_test(tc, short_or_damaged_copies_end_the_walk);
	tcase_add_test(tc, unknown_process_gives_the_leaf);
	tcase_add_test(tc, sessions_are_bounded);
	tcase_add_test(tc, few_fds_every_walk_done_or_counted);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(unwind_suite)
