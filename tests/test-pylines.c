/* test-pylines.c - Python lines offline (ingest/pylines.c) against the
 * interpreters' own answers: for every code object of tests/pylines/sample.py
 * as CPython 3.10, 3.11, 3.12 and 3.13 compiled it (lines-3.1x.txt, written by
 * gen-fixture.py from co_lines()/co_positions()), the line of every code unit
 * must be the interpreter's. Damaged tables give -1 or a line, never a read
 * past the table (ASan builds check that). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "pyfixture.h"
#include "ingest/pylines.h"

static const char *const versions[] = { "3.10", "3.11", "3.12", "3.13" };

static struct xp_pyfixture *load(int i)
{
	const char *dir = getenv("XP_PYLINES_DIR");
	struct xp_pyfixture *f = NULL;
	char path[4096];

	ck_assert_msg(dir, "XP_PYLINES_DIR not set (run through meson test)");
	snprintf(path, sizeof(path), "%s/lines-%s.txt", dir, versions[i]);
	ck_assert_int_eq(xp_pyfixture_load(&f, path), 0);
	return f;
}

/* Every code unit of every code object: the interpreter's line. */
START_TEST(every_unit_as_the_interpreter)
{
	struct xp_pyfixture *f = load(_i);
	size_t units = 0, none = 0, far = 0;

	for (size_t k = 0; k < f->ncodes; k++) {
		const struct xp_pycode_fx *c = &f->codes[k];

		ck_assert_uint_eq(c->version, 0x030a + (unsigned)_i);
		for (uint32_t off = 0; off < c->code_bytes; off += 2) {
			int want = xp_pyfixture_truth(c, off);
			int got = xp_pylines_line(c->version, c->table, c->table_len, c->first_line, off);

			ck_assert_msg(got == want, "%s %s offset %u: line %d, the interpreter says %d",
				      versions[_i], c->qualname, off, got, want);
			units++;
			none += want < 0;
			far += want > 200;
		}
		/* past the code: no line */
		ck_assert_int_eq(xp_pylines_line(c->version, c->table, c->table_len, c->first_line,
						 c->code_bytes + 64), -1);
	}
	/* the sample reaches what it was written for: lines past 200 (deltas over
	 * 127) and, from 3.11, instructions without a line */
	ck_assert_uint_gt(units, 500);
	ck_assert_uint_gt(far, 50);
	if (_i > 0)
		ck_assert_uint_gt(none, 0);
	xp_pyfixture_free(f);
}
END_TEST

/* Odd offsets name the unit they fall in, as the interpreter's byte offsets do. */
START_TEST(odd_offsets)
{
	struct xp_pyfixture *f = load(_i);
	const struct xp_pycode_fx *c = xp_pyfixture_find(f, "Model.forward");

	if (!c)
		c = xp_pyfixture_find(f, "forward");     /* 3.10: co_name */
	ck_assert_ptr_nonnull(c);
	for (uint32_t off = 1; off < c->code_bytes; off += 2)
		ck_assert_int_eq(xp_pylines_line(c->version, c->table, c->table_len, c->first_line, off),
				 xp_pyfixture_truth(c, off - 1));
	xp_pyfixture_free(f);
}
END_TEST

/* Every prefix of a real table and every byte flipped: no read past the
 * table (the sanitizers watch), an answer in range or -1. */
START_TEST(damaged_tables)
{
	struct xp_pyfixture *f = load(_i);

	for (size_t k = 0; k < f->ncodes; k++) {
		const struct xp_pycode_fx *c = &f->codes[k];
		uint8_t *copy;

		for (size_t len = 0; len < c->table_len; len++) {
			copy = malloc(len ? len : 1);
			ck_assert_ptr_nonnull(copy);
			memcpy(copy, c->table, len);
			for (uint32_t off = 0; off < c->code_bytes; off += 6)
				ck_assert_int_ge(xp_pylines_line(c->version, copy, len, c->first_line, off), -1);
			free(copy);
		}
		copy = malloc(c->table_len);
		ck_assert_ptr_nonnull(copy);
		for (size_t b = 0; b < c->table_len; b++) {
			memcpy(copy, c->table, c->table_len);
			copy[b] ^= 0xff;
			ck_assert_int_ge(xp_pylines_line(c->version, copy, c->table_len, c->first_line,
							 c->code_bytes / 2), -1);
		}
		free(copy);
	}
	xp_pyfixture_free(f);
}
END_TEST

START_TEST(unknown_versions)
{
	static const uint8_t t[] = { 0x08, 0x01 };

	ck_assert_int_eq(xp_pylines_line(0x030a, t, sizeof(t), 3, 0), 4);
	ck_assert_int_eq(xp_pylines_line(0x0309, t, sizeof(t), 3, 0), -1);
	ck_assert_int_eq(xp_pylines_line(0x030e, t, sizeof(t), 3, 0), -1);
	ck_assert_int_eq(xp_pylines_line(0x030a, NULL, 0, 3, 0), -1);
	ck_assert(!xp_pylines_known(0x0309) && xp_pylines_known(0x030d) && !xp_pylines_known(0x030e));
}
END_TEST

/* Appends a 3.11+ entry of one code unit whose start line moves by delta
 * (code 13: a signed varint after the first byte), in chunks chunks. */
static size_t put_delta(uint8_t *t, size_t at, int64_t delta, unsigned chunks)
{
	uint64_t u = delta < 0 ? (uint64_t)-delta << 1 | 1 : (uint64_t)delta << 1;

	t[at++] = 0x80 | 13 << 3;
	for (unsigned c = 0; c < chunks; c++, u >>= 6)
		t[at++] = (uint8_t)((u & 63) | (c + 1 < chunks ? 64 : 0));
	return at;
}

/* Issue 29: 11-chunk varints overflowed the running line (undefined
 * behaviour; `file.py:-1` in reports), and a line that left the int range
 * on the way and came back was taken. The interpreter's deltas are ints:
 * longer varints and lines outside 0 .. INT32_MAX make the table damaged. */
START_TEST(lines_out_of_range)
{
	uint8_t t[0xe8];
	size_t n = 0;

	/* 0xe8 bytes of 12-byte entries: 11-chunk varints of the largest deltas */
	while (n + 12 <= sizeof(t)) {
		t[n++] = 0x80 | 13 << 3;
		for (int c = 0; c < 11; c++)
			t[n++] = c < 10 ? 0x7f : 0x3e;
	}
	for (uint32_t off = 0; off < 2 * 20; off += 2)
		ck_assert_int_eq(xp_pylines_line(0x030c, t, n, 3, off), -1);
	/* +2^34 then -2^34 + 5: six chunks each, legal varints, but the line
	 * between them is no int */
	n = put_delta(t, 0, (int64_t)1 << 34, 6);
	n = put_delta(t, n, -((int64_t)1 << 34) + 5, 6);
	ck_assert_int_eq(xp_pylines_line(0x030c, t, n, 3, 2), -1);
	/* the same steps within the range are lines */
	n = put_delta(t, 0, INT32_MAX - 3, 6);
	n = put_delta(t, n, -(INT32_MAX - 3) + 5, 6);
	ck_assert_int_eq(xp_pylines_line(0x030c, t, n, 3, 0), INT32_MAX);
	ck_assert_int_eq(xp_pylines_line(0x030c, t, n, 3, 2), 8);
	/* below line 0 is no line either */
	n = put_delta(t, 0, -4, 1);
	ck_assert_int_eq(xp_pylines_line(0x030c, t, n, 3, 0), -1);
	/* a first line past the int range (a damaged record) gives none */
	n = put_delta(t, 0, 0, 1);
	ck_assert_int_eq(xp_pylines_line(0x030c, t, n, UINT32_MAX, 0), -1);
}
END_TEST

static Suite *pylines_suite(void)
{
	Suite *s = suite_create("pylines");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, every_unit_as_the_interpreter, 0, 4);
	tcase_add_loop_test(tc, odd_offsets, 0, 4);
	tcase_add_loop_test(tc, damaged_tables, 0, 4);
	tcase_add_test(tc, unknown_versions);
	tcase_add_test(tc, lines_out_of_range);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(pylines_suite)
