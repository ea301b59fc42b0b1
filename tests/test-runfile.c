/* test-runfile.c - the stream writer and reader agree, and the reader
 * reports truncation and corruption with the right offset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "src/runfile.h"
#include "src/runfile_zstd.h"

static char path[] = "/tmp/xp-test-runfile-XXXXXX";

static void make_path(void)
{
	int fd;

	strcpy(path, "/tmp/xp-test-runfile-XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
}

static void write_samples_with(int n, const struct xp_block_codec *codec)
{
	struct xp_writer *w;
	struct xp_sample s;
	uint64_t ips[3] = { 0x1000, 0x2000, 0x3000 };

	make_path();
	ck_assert_int_eq(xp_writer_open(&w, path, XP_STREAM_CPU, 0), 0);
	if (codec)
		ck_assert_int_eq(xp_writer_set_codec(w, codec), 0);
	for (int i = 0; i < n; i++) {
		memset(&s, 0, sizeof(s));
		s.ts = 1000 + (uint64_t)i;
		s.pid = 42;
		s.tid = 43 + (uint32_t)i;
		s.stack.user_depth = 2;
		s.stack.kernel_depth = 1;
		ck_assert_int_eq(xp_writer_append(w, XP_REC_SAMPLE, &s, sizeof(s), ips, sizeof(ips)), 0);
	}
	ck_assert_int_eq(xp_writer_close(w), 0);
}

static void write_samples(int n)
{
	write_samples_with(n, NULL);
}

static int count_records(int *err_out, uint64_t *err_offset)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	int n = 0, err;

	err = xp_reader_open(&r, path);
	while (err == 0 && (err = xp_reader_next(r, &h)) > 0) {
		const struct xp_sample *s = xp_record_payload(h);
		const uint64_t *ips = xp_record_stack_ips(h, sizeof(*s), &s->stack);

		ck_assert_int_eq(h->type, XP_REC_SAMPLE);
		ck_assert_ptr_nonnull(ips);
		ck_assert_uint_eq(ips[2], 0x3000);
		ck_assert_uint_eq(s->tid, 43 + (uint32_t)n);
		n++;
		err = 0;
	}
	*err_out = err;
	*err_offset = r ? xp_reader_offset(r) : 0;
	xp_reader_close(r);
	return n;
}

START_TEST(roundtrip_many_records)
{
	int err;
	uint64_t off;

	write_samples(100000);  /* several writer buffers */
	ck_assert_int_eq(count_records(&err, &off), 100000);
	ck_assert_int_eq(err, 0);
	unlink(path);
}
END_TEST

START_TEST(truncated_tail_keeps_whole_records)
{
	int err;
	uint64_t off;
	size_t rec = XP_ALIGN8(sizeof(struct xp_record_header) + sizeof(struct xp_sample) + 24);

	write_samples(10);
	ck_assert_int_eq(truncate(path, sizeof(struct xp_file_header) + 7 * rec + 5), 0);
	ck_assert_int_eq(count_records(&err, &off), 7);
	ck_assert_int_eq(err, -ENODATA);
	ck_assert_uint_eq(off, sizeof(struct xp_file_header) + 7 * rec);
	unlink(path);
}
END_TEST

START_TEST(huge_length_is_corruption_not_allocation)
{
	int err, fd;
	uint64_t off;
	uint32_t huge = 0xfffffff8u;

	write_samples(3);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	/* size field of the second record */
	ck_assert_int_eq(pwrite(fd, &huge, 4, sizeof(struct xp_file_header) + 4 +
				XP_ALIGN8(sizeof(struct xp_record_header) + sizeof(struct xp_sample) + 24)), 4);
	close(fd);
	ck_assert_int_eq(count_records(&err, &off), 1);
	ck_assert_int_eq(err, -EBADMSG);
	unlink(path);
}
END_TEST

START_TEST(bad_magic_and_future_version_refused)
{
	struct xp_reader *r = NULL;
	struct xp_file_header h;
	int fd;

	write_samples(1);
	fd = open(path, O_RDWR);
	ck_assert_int_eq(pread(fd, &h, sizeof(h), 0), sizeof(h));
	h.version = XP_FORMAT_VERSION + 1;
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	ck_assert_int_eq(xp_reader_open(&r, path), -EPROTO);
	xp_reader_close(r);
	h.magic[0] = 'Z';
	ck_assert_int_eq(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	r = NULL;
	ck_assert_int_eq(xp_reader_open(&r, path), -EBADMSG);
	ck_assert_str_eq(xp_reader_error(r), "not an xpcap record stream (bad magic)");
	xp_reader_close(r);
	unlink(path);
}
END_TEST

START_TEST(path_accessor_checks_bounds)
{
	unsigned char buf[64];
	struct xp_record_header *h = (void *)buf;
	char *p = (char *)(h + 1) + 8;

	memset(buf, 0, sizeof(buf));
	h->size = sizeof(buf);
	memcpy(p, "/bin/x", 7);
	ck_assert_str_eq(xp_record_path(h, 8, 6), "/bin/x");
	ck_assert_ptr_null(xp_record_path(h, 8, 5));     /* NUL inside */
	ck_assert_ptr_null(xp_record_path(h, 8, 60));    /* past the record */
}
END_TEST

/* A launch record with 2 user IPs and a copy of n bytes, as drain writes it. */
static size_t make_copy_record(unsigned char *buf, size_t cap, uint32_t n)
{
	struct xp_record_header *h = (void *)buf;
	struct xp_launch *l = (void *)(h + 1);
	uint64_t *ips = (uint64_t *)(l + 1);
	struct xp_user_regs_copy *r = (void *)(ips + 2);
	size_t size = sizeof(*h) + sizeof(*l) + 16 + sizeof(*r) + n;

	ck_assert_uint_le(size, cap);
	memset(buf, 0, size);
	h->type = XP_REC_LAUNCH;
	h->size = (uint32_t)XP_ALIGN8(size);
	l->stack.user_depth = 2;
	l->stack.flags = XP_STACK_HAS_USER_COPY;
	ips[0] = 0x1000;
	ips[1] = 0x2000;
	r->ip = 0x1000;
	r->sp = 0x7ff0;
	r->bp = 0x8000;
	r->size = n;
	if (n >= 8)
		memcpy(r + 1, &ips[1], 8);
	return size;
}

START_TEST(user_copy_accessor_checks_bounds)
{
	static unsigned char buf[256];
	struct xp_record_header *h = (void *)buf;
	struct xp_launch *l = (void *)(h + 1);
	struct xp_user_regs_copy regs, *r;
	const uint8_t *bytes;
	const char *why;
	uint64_t word;

	make_copy_record(buf, sizeof(buf), 64);
	ck_assert_int_eq(xp_record_check(h, &why), 0);
	ck_assert_int_eq(xp_record_user_copy(h, sizeof(*l), &l->stack, &regs, &bytes), 0);
	ck_assert_uint_eq(regs.size, 64);
	ck_assert_uint_eq(regs.sp, 0x7ff0);
	memcpy(&word, bytes, 8);
	ck_assert_uint_eq(word, 0x2000);
	/* no flag: no copy, and the record is still valid */
	l->stack.flags = 0;
	ck_assert_int_eq(xp_record_user_copy(h, sizeof(*l), &l->stack, &regs, &bytes), -ENOENT);
	ck_assert_int_eq(xp_record_check(h, &why), 0);
	l->stack.flags = XP_STACK_HAS_USER_COPY;
	/* a size past the record, not a multiple of 8, or above the maximum */
	r = (void *)((uint64_t *)(l + 1) + 2);
	r->size = 72;
	ck_assert_int_eq(xp_record_user_copy(h, sizeof(*l), &l->stack, &regs, &bytes), -EBADMSG);
	ck_assert_int_eq(xp_record_check(h, &why), -EBADMSG);
	r->size = 60;
	ck_assert_int_eq(xp_record_check(h, &why), -EBADMSG);
	r->size = 0xfffffff8u;
	ck_assert_int_eq(xp_record_check(h, &why), -EBADMSG);
	/* the regs themselves cut off */
	make_copy_record(buf, sizeof(buf), 0);
	h->size -= 8;
	ck_assert_int_eq(xp_record_check(h, &why), -EBADMSG);
}
END_TEST

static off_t file_size(void)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

/* The zblock record at off: its header and payload head. */
static void read_zblock(off_t off, struct xp_record_header *h, struct xp_zblock *z)
{
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, h, sizeof(*h), off), sizeof(*h));
	ck_assert_int_eq(pread(fd, z, sizeof(*z), off + sizeof(*h)), sizeof(*z));
	close(fd);
	ck_assert_uint_eq(h->type, XP_REC_ZBLOCK);
}

static void patch(off_t off, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, data, len, off), (ssize_t)len);
	close(fd);
}

static uint32_t read_zblock_size(off_t off)
{
	struct xp_record_header h;
	struct xp_zblock z;

	read_zblock(off, &h, &z);
	return h.size;
}

START_TEST(zstd_roundtrip)
{
	size_t rec = XP_ALIGN8(sizeof(struct xp_record_header) + sizeof(struct xp_sample) + 24);
	struct xp_record_header h;
	struct xp_zblock z;
	uint64_t off;
	int err;

	write_samples_with(100000, &xp_zstd_codec);   /* several blocks */
	ck_assert_int_eq(count_records(&err, &off), 100000);
	ck_assert_int_eq(err, 0);
	ck_assert_int_lt(file_size(), 100000 * (off_t)rec / 10);
	read_zblock(sizeof(struct xp_file_header), &h, &z);
	ck_assert_uint_le(z.raw_size, 1u << 20);
	ck_assert_uint_eq(z.raw_size % rec, 0);
	unlink(path);
}
END_TEST

/* Records read under budget b until the end or an error (*err). */
static uint64_t read_with_budget(struct xp_read_budget *b, int *err)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	uint64_t n = 0;

	ck_assert_int_eq(xp_reader_open(&r, path), 0);
	xp_reader_set_budget(r, b);
	while ((*err = xp_reader_next(r, &h)) > 0)
		n++;
	xp_reader_close(r);
	return n;
}

START_TEST(budget_of_records)
{
	struct xp_read_budget b = { .records = 1000 };
	int err;

	write_samples(5000);
	ck_assert_uint_eq(read_with_budget(&b, &err), 1000);
	ck_assert_int_eq(err, -E2BIG);
	ck_assert_uint_eq(b.records, 0);
	b.records = 5000;       /* exactly enough: a clean end */
	ck_assert_uint_eq(read_with_budget(&b, &err), 5000);
	ck_assert_int_eq(err, 0);
	unlink(path);
}
END_TEST

START_TEST(budget_of_expansion)
{
	/* 1.5M samples at zstd level 1 take ~4 bytes each on disk: within the
	 * default, over a budget of 100x (0.1 record a byte) once past the
	 * free first million */
	struct xp_read_budget b = { .records = UINT64_MAX, .expand = 100 };
	uint64_t n;
	int err;

	write_samples_with(1500000, &xp_zstd_codec);
	ck_assert_uint_eq(read_with_budget(NULL, &err), 1500000);
	ck_assert_int_eq(err, 0);
	n = read_with_budget(&b, &err);
	ck_assert_int_eq(err, -E2BIG);
	ck_assert_uint_ge(n, XP_READ_EXPAND_FREE_RECORDS);
	ck_assert_uint_lt(n, 1500000);
	ck_assert_uint_eq(b.records, UINT64_MAX - n);
	unlink(path);
}
END_TEST

START_TEST(zstd_corrupt_frame_reports_block_offset)
{
	off_t first = sizeof(struct xp_file_header);
	struct xp_record_header h;
	struct xp_zblock z;
	unsigned char junk[16];
	uint64_t off;
	int err;

	write_samples_with(30000, &xp_zstd_codec);
	/* garble the middle of the second block's frame: its records are
	 * lost, the first block's are not */
	read_zblock(first + read_zblock_size(first), &h, &z);
	memset(junk, 0x5a, sizeof(junk));
	patch(first + read_zblock_size(first) + (off_t)(sizeof(h) + sizeof(z) + z.frame_size / 2),
	      junk, sizeof(junk));
	ck_assert_int_eq(count_records(&err, &off) > 0, 1);
	ck_assert_int_eq(err, -EBADMSG);
	ck_assert_uint_eq(off, first + read_zblock_size(first));
	unlink(path);
}
END_TEST

START_TEST(zstd_truncated_and_huge_raw_size)
{
	off_t first = sizeof(struct xp_file_header);
	struct xp_record_header h;
	struct xp_zblock z;
	uint64_t off, huge = 65ull << 20;
	int err, n;

	write_samples_with(30000, &xp_zstd_codec);
	read_zblock(first, &h, &z);
	n = (int)(z.raw_size / XP_ALIGN8(sizeof(struct xp_record_header) +
					 sizeof(struct xp_sample) + 24));
	/* cut inside the second block: the first block's records, then -ENODATA */
	ck_assert_int_eq(truncate(path, first + h.size + 100), 0);
	ck_assert_int_eq(count_records(&err, &off), n);
	ck_assert_int_eq(err, -ENODATA);
	ck_assert_uint_eq(off, first + h.size);
	/* a raw size past the limit is corruption, not an allocation */
	patch(first + 8, &huge, sizeof(huge));
	ck_assert_int_eq(count_records(&err, &off), 0);
	ck_assert_int_eq(err, -EBADMSG);
	ck_assert_uint_eq(off, first);
	unlink(path);
}
END_TEST

START_TEST(zstd_incompressible_written_plain)
{
	struct xp_writer *w;
	unsigned char data[4096];
	struct xp_reader *r;
	const struct xp_record_header *h;
	unsigned seed = 1;
	int n = 0, err;

	make_path();
	ck_assert_int_eq(xp_writer_open(&w, path, XP_STREAM_CPU, 0), 0);
	ck_assert_int_eq(xp_writer_set_codec(w, &xp_zstd_codec), 0);
	for (int i = 0; i < 600; i++) {
		for (size_t j = 0; j < sizeof(data); j++)
			data[j] = (unsigned char)(rand_r(&seed) >> 7);
		ck_assert_int_eq(xp_writer_append(w, 200, data, sizeof(data), NULL, 0), 0);
	}
	ck_assert_int_eq(xp_writer_close(w), 0);
	ck_assert_int_eq(xp_reader_open(&r, path), 0);
	while ((err = xp_reader_next(r, &h)) > 0) {
		ck_assert_uint_eq(h->type, 200);
		n++;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(n, 600);
	xp_reader_close(r);
	/* nothing was worth compressing: plain records, no zblock */
	ck_assert_int_eq(file_size(), sizeof(struct xp_file_header) +
			 600 * (sizeof(struct xp_record_header) + sizeof(data)));
	unlink(path);
}
END_TEST

/* A disk that fills mid-block (here RLIMIT_FSIZE, which fails write() the
 * same way without root): the file is cut back to its last whole block,
 * reads to a clean end, and the writer says what it dropped. */
static void fill_until_limit(const struct xp_block_codec *codec, rlim_t limit,
			     int *appended, uint64_t *dropped, uint64_t *bytes, int *close_err)
{
	struct rlimit old, small;
	struct xp_writer *w;
	struct xp_sample s;
	uint64_t ips[3] = { 0x1000, 0x2000, 0x3000 };

	make_path();
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = limit;
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(xp_writer_open(&w, path, XP_STREAM_CPU, 0), 0);
	if (codec)
		ck_assert_int_eq(xp_writer_set_codec(w, codec), 0);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
	*appended = 0;
	for (int i = 0; i < 100000; i++) {
		memset(&s, 0, sizeof(s));
		s.ts = 1000 + (uint64_t)i;
		s.pid = 42;
		s.tid = 43 + (uint32_t)i;
		s.stack.user_depth = 2;
		s.stack.kernel_depth = 1;
		*appended += xp_writer_append(w, XP_REC_SAMPLE, &s, sizeof(s), ips, sizeof(ips)) == 0;
	}
	*dropped = xp_writer_dropped(w);
	*bytes = xp_writer_bytes(w);
	*close_err = xp_writer_close(w);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
}

START_TEST(write_error_cuts_back_to_last_whole_block)
{
	size_t rec = XP_ALIGN8(sizeof(struct xp_record_header) + sizeof(struct xp_sample) + 24);
	int appended, close_err, err;
	uint64_t dropped, bytes, off;
	int n;

	/* 2.5 MiB: two 1 MiB buffers fit, the third is cut off mid-write */
	fill_until_limit(NULL, (5u << 20) / 2, &appended, &dropped, &bytes, &close_err);
	ck_assert_int_eq(close_err, -EFBIG);
	ck_assert_uint_eq(file_size(), bytes);
	ck_assert_uint_eq((bytes - sizeof(struct xp_file_header)) % rec, 0);
	n = count_records(&err, &off);
	ck_assert_int_eq(err, 0);       /* a clean end, not a truncated record */
	ck_assert_uint_eq(sizeof(struct xp_file_header) + (uint64_t)n * rec, bytes);
	ck_assert_int_gt(n, 0);
	ck_assert_int_lt(n, appended);  /* the cut-off buffer's records are gone */
	ck_assert_uint_eq(dropped, 100000 - (uint64_t)appended);
	unlink(path);
}
END_TEST

START_TEST(write_error_in_first_zblock_leaves_header)
{
	int appended, close_err, err;
	uint64_t dropped, bytes, off;

	/* room for the header only: the first compressed block fails */
	fill_until_limit(&xp_zstd_codec, sizeof(struct xp_file_header) + 100, &appended, &dropped,
			 &bytes, &close_err);
	ck_assert_int_eq(close_err, -EFBIG);
	ck_assert_uint_eq(file_size(), sizeof(struct xp_file_header));
	ck_assert_uint_eq(bytes, sizeof(struct xp_file_header));
	ck_assert_int_eq(count_records(&err, &off), 0);
	ck_assert_int_eq(err, 0);
	unlink(path);
}
END_TEST

/* A run may come from someone else: its files are read only when they are
 * regular files, never through a link. */
START_TEST(run_files_not_links_fifos_or_directories)
{
	char link[64], fifo[64], dir[64];
	struct xp_reader *r = NULL;
	int fd;

	write_samples(3);
	snprintf(link, sizeof(link), "%s.link", path);
	snprintf(fifo, sizeof(fifo), "%s.fifo", path);
	snprintf(dir, sizeof(dir), "%s.dir", path);
	ck_assert_int_eq(symlink(path, link), 0);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	fd = xp_run_file_open(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(xp_run_file_open(link), -ELOOP);
	ck_assert_int_eq(xp_run_file_open(fifo), -ENXIO);   /* and no hang */
	ck_assert_int_eq(xp_run_file_open(dir), -ENXIO);
	ck_assert_int_eq(xp_reader_open(&r, link), -ELOOP);
	ck_assert_ptr_null(xp_run_file_fopen(fifo));
	ck_assert_int_eq(errno, ENXIO);
	unlink(link);
	unlink(fifo);
	rmdir(dir);
	unlink(path);
}
END_TEST

Suite *runfile_suite(void)
{
	Suite *s = suite_create("runfile");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, roundtrip_many_records);
	tcase_add_test(tc, truncated_tail_keeps_whole_records);
	tcase_add_test(tc, huge_length_is_corruption_not_allocation);
	tcase_add_test(tc, bad_magic_and_future_version_refused);
	tcase_add_test(tc, path_accessor_checks_bounds);
	tcase_add_test(tc, user_copy_accessor_checks_bounds);
	tcase_add_test(tc, zstd_roundtrip);
	tcase_add_test(tc, budget_of_records);
	tcase_add_test(tc, budget_of_expansion);
	tcase_add_test(tc, zstd_corrupt_frame_reports_block_offset);
	tcase_add_test(tc, zstd_truncated_and_huge_raw_size);
	tcase_add_test(tc, zstd_incompressible_written_plain);
	tcase_add_test(tc, write_error_cuts_back_to_last_whole_block);
	tcase_add_test(tc, write_error_in_first_zblock_leaves_header);
	tcase_add_test(tc, run_files_not_links_fifos_or_directories);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(runfile_suite)
