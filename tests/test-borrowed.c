/* test-borrowed.c - the frames of launch-stack keys (ingest/borrowed.c):
 * a key gives back its latest copy's frames, by process; a copy of a key
 * already there is a check, the same or different by the stack id. And
 * the Python side (ingest/pystacks.c): a launch whose Python stack names
 * its key (XP_PYSTACK_BORROWED) gets the frames of the key's latest stack
 * before it, of its own process; none when no stack of the key came. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "ingest/borrowed.h"
#include "check-main.h"
#include "ingest/pystacks.h"
#include "src/runfmt_py.h"

START_TEST(keys_by_process)
{
	struct xp_borrowed *b = xp_borrowed_new();
	const uint64_t a[] = { 10, 20, 30 }, c[] = { 10, 21 };
	const uint64_t *got;
	unsigned n = 99;

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(xp_borrowed_get(b, 7, 1, &n));          /* never put: missing */
	ck_assert_uint_eq(n, 99);
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_ptr_null(xp_borrowed_get(b, 8, 1, &n));          /* another process's key 1 */
	got = xp_borrowed_get(b, 7, 1, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert(got[0] == 10 && got[1] == 20 && got[2] == 30);
	/* a check: the same stack id is the same frames, whatever the addresses */
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, c, 2, 5), XP_BORROWED_SAME);
	got = xp_borrowed_get(b, 7, 1, &n);
	ck_assert(n == 2 && got[1] == 21);                        /* the latest copy's */
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, a, 3, 6), XP_BORROWED_DIFFERED);
	ck_assert_int_eq(xp_borrowed_put(b, 8, 1, NULL, 0, 6), XP_BORROWED_NEW);
	ck_assert_ptr_nonnull(xp_borrowed_get(b, 8, 1, &n));      /* no frames is frames too */
	ck_assert_uint_eq(n, 0);
	/* key 0 is no key (ids start at 1): a damaged run's copy keeps nothing */
	ck_assert_int_eq(xp_borrowed_put(b, 0, 0, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_int_eq(xp_borrowed_put(b, 0, 0, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_ptr_null(xp_borrowed_get(b, 0, 0, &n));
	xp_borrowed_free(b);
}
END_TEST

/* One XP_REC_PYSTACK record of launch corr into the store: frames code
 * ids code[0..n) (instruction 2 * code id), key, flags. */
static void py_record(struct xp_pystore *s, uint32_t pid, uint64_t corr, uint32_t key,
		      uint16_t flags, const uint64_t *code, unsigned n)
{
	uint64_t buf[64] = { 0 };
	struct xp_record_header *h = (void *)buf;
	struct xp_pystack *ps = (void *)(h + 1);
	struct xp_pyframe *f = (void *)(ps + 1);

	ck_assert_uint_le(sizeof(*h) + sizeof(*ps) + n * sizeof(*f), sizeof(buf));
	h->type = XP_REC_PYSTACK;
	h->size = (uint32_t)(sizeof(*h) + sizeof(*ps) + n * sizeof(*f));
	*ps = (struct xp_pystack){ .ts = corr, .correlation_id = corr, .pid = pid, .tid = pid,
				   .nframes = (uint16_t)n, .flags = flags, .key = key };
	for (unsigned i = 0; i < n; i++)
		f[i] = (struct xp_pyframe){ code[i], (uint32_t)(2 * code[i]), 0 };
	ck_assert_int_eq(xp_pystore_record(s, pid, h), 1);
}

/* The instruction offsets of launch corr's Python stack, -1 when none. */
static int py_offsets(struct xp_pystore *s, uint32_t pid, uint64_t corr, uint32_t *off)
{
	struct xp_pystack_view v;
	int r = xp_pystore_launch(s, pid, corr, &v);

	ck_assert_int_ge(r, 0);
	if (!r)
		return -1;
	for (unsigned i = 0; i < v.n; i++)
		off[i] = v.frames[i].offset;
	return (int)v.n;
}

START_TEST(python_frames_by_key)
{
	struct xp_pystore *s = xp_pystore_new();
	const uint64_t a[] = { 5, 6, 7 }, b[] = { 8, 9 };
	uint32_t off[8];

	ck_assert_ptr_nonnull(s);
	py_record(s, 7, 1, 3, XP_PYSTACK_BORROWED, NULL, 0);     /* before any stack of key 3 */
	py_record(s, 7, 2, 3, 0, a, 3);                          /* key 3's copy */
	py_record(s, 7, 3, 3, XP_PYSTACK_BORROWED, NULL, 0);
	py_record(s, 8, 4, 3, XP_PYSTACK_BORROWED, NULL, 0);     /* another process's key 3 */
	py_record(s, 7, 5, 3, 0, b, 2);                          /* a check, other frames */
	py_record(s, 7, 6, 3, XP_PYSTACK_BORROWED, NULL, 0);
	py_record(s, 7, 7, 0, XP_PYSTACK_BORROWED, NULL, 0);     /* key 0: names nothing */
	ck_assert_int_eq(py_offsets(s, 7, 1, off), -1);
	ck_assert_int_eq(py_offsets(s, 7, 3, off), 3);
	ck_assert(off[0] == 10 && off[1] == 12 && off[2] == 14);
	ck_assert_int_eq(py_offsets(s, 8, 4, off), -1);
	ck_assert_int_eq(py_offsets(s, 7, 6, off), 2);            /* the latest stack's */
	ck_assert(off[0] == 16 && off[1] == 18);
	ck_assert_int_eq(py_offsets(s, 7, 7, off), -1);
	ck_assert_int_eq(py_offsets(s, 7, 2, off), 3);            /* the copies keep theirs */
	xp_pystore_free(s);
}
END_TEST

/* Many keys: every one survives the table's growth. */
START_TEST(many_keys)
{
	struct xp_borrowed *b = xp_borrowed_new();
	unsigned n;

	for (uint32_t k = 1; k <= 5000; k++) {
		uint64_t ip = k * 16;

		ck_assert_int_eq(xp_borrowed_put(b, k % 3, k, &ip, 1, k), XP_BORROWED_NEW);
	}
	for (uint32_t k = 1; k <= 5000; k++) {
		const uint64_t *got = xp_borrowed_get(b, k % 3, k, &n);

		ck_assert_ptr_nonnull(got);
		ck_assert(n == 1 && got[0] == k * 16);
		ck_assert_ptr_null(xp_borrowed_get(b, (k + 1) % 3, k, &n));
	}
	xp_borrowed_free(b);
	xp_borrowed_free(NULL);
}
END_TEST

Suite *borrowed_suite(void)
{
	Suite *s = suite_create("borrowed");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, keys_by_process);
	tcase_add_test(tc, many_keys);
	tcase_add_test(tc, python_frames_by_key);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(borrowed_suite)
