/* test-reckinds.c - the table of record kinds (src/runnames.h) against the
 * run format's headers, and `xpcorr dump` against the table: every
 * XP_REC_* enumerator has its row, and a record of each kind dumps as its
 * name and exactly the fields its row declares. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "src/runfile.h"
#include "src/runnames.h"

/* XP_REC_* = N of the three format headers: how many found. */
static unsigned header_types(uint32_t *types, unsigned cap)
{
	static const char *const headers[] = { "runfmt.h", "runfmt_gpu.h", "runfmt_py.h" };
	const char *dir = getenv("XP_SRC_DIR");
	char path[4096], line[512], name[64];
	unsigned n = 0, v;

	ck_assert_msg(dir != NULL, "XP_SRC_DIR: the source tree's src/ (meson sets it)");
	for (unsigned i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, headers[i]);
		f = fopen(path, "r");
		ck_assert_msg(f != NULL, "cannot read %s", path);
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, " XP_REC_%63[A-Z0-9_] = %u", name, &v) == 2 && n < cap)
				types[n++] = v;
		fclose(f);
	}
	return n;
}

START_TEST(every_enumerator_has_a_row)
{
	uint32_t types[128];
	unsigned n = header_types(types, 128);

	ck_assert_uint_ge(n, 30);    /* the headers were read */
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(xp_rec_kind_of(types[i]) != NULL, "XP_REC_ type %u has no row",
			      types[i]);
	ck_assert_uint_eq(xp_rec_nkinds, n);    /* and no row without its enumerator */
}
END_TEST

START_TEST(rows_are_whole)
{
	for (unsigned i = 0; i < xp_rec_nkinds; i++) {
		const struct xp_rec_kind *k = &xp_rec_kinds[i];

		if (i)      /* xp_rec_kind_of searches by halves */
			ck_assert_uint_gt(k->type, xp_rec_kinds[i - 1].type);
		ck_assert_ptr_eq(xp_rec_kind_of(k->type), k);
		ck_assert_uint_eq(xp_rec_kind_of_name(k->name), k->type);
		ck_assert_uint_ge(k->fixed, 8);
		ck_assert_uint_eq(k->fixed % 8, 0);
		ck_assert(k->streams & XP_STREAM_ANY);
		ck_assert_uint_le(k->ntimes, 3);
		ck_assert(!k->span || k->ntimes >= 2);
		for (unsigned t = 0; t < k->ntimes; t++)
			ck_assert_uint_le(k->times[t] + 8u, k->fixed);
		/* only compressed blocks never reach dump: readers expand them */
		ck_assert((k->dump == NULL) == (k->type == XP_REC_ZBLOCK));
	}
	ck_assert_ptr_null(xp_rec_kind_of(0));
	ck_assert_ptr_null(xp_rec_kind_of(1000));
}
END_TEST

/* Whether the keys of a dump line (after the name) are the row's dump
 * fields in order; [key ...] in the row: keys the record may leave out. */
static int keys_match(const char *declared, char *line, char *why, size_t whylen)
{
	char decl[512], *save1 = NULL, *save2 = NULL, *want, *got;
	int optional = 0;

	snprintf(decl, sizeof(decl), "%s", declared);
	got = strtok_r(line, " \n", &save2);
	for (want = strtok_r(decl, " ", &save1); want; want = strtok_r(NULL, " ", &save1)) {
		size_t wl;

		if (*want == '[') {
			optional = 1;
			want++;
		}
		wl = strcspn(want, "]");
		if (got && !strncmp(got, want, wl) && got[wl] == '=') {
			got = strtok_r(NULL, " \n", &save2);
		} else if (!optional) {
			snprintf(why, whylen, "expected %.*s= at \"%s\"", (int)wl, want,
				 got ? got : "(end)");
			return 0;
		}
		if (want[wl] == ']')
			optional = 0;
	}
	if (got) {
		snprintf(why, whylen, "undeclared field \"%s\"", got);
		return 0;
	}
	return 1;
}

START_TEST(dump_names_every_kind)
{
	const char *xpcorr = getenv("XPCORR");
	char path[] = "/tmp/xp-test-reckinds-XXXXXX", cmd[4200], line[4096], why[256];
	unsigned char payload[1024];
	struct xp_writer *w;
	unsigned lines = 0, dumped = 0;
	FILE *out;
	int fd;

	ck_assert_msg(xpcorr != NULL, "XPCORR: the xpcorr to test (meson sets it)");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	ck_assert_int_eq(xp_writer_open(&w, path, XP_STREAM_CPU, 1), 0);
	/* each kind's fixed part and 8 zero bytes: empty paths, stacks, texts */
	memset(payload, 0, sizeof(payload));
	for (unsigned i = 0; i < xp_rec_nkinds; i++) {
		if (!xp_rec_kinds[i].dump)
			continue;
		ck_assert_uint_le(xp_rec_kinds[i].fixed + 8, sizeof(payload));
		ck_assert_int_eq(xp_writer_append(w, xp_rec_kinds[i].type, payload,
						  xp_rec_kinds[i].fixed + 8, NULL, 0), 0);
		dumped++;
	}
	ck_assert_int_eq(xp_writer_close(w), 0);
	snprintf(cmd, sizeof(cmd), "'%s' dump '%s' 2>&1", xpcorr, path);
	out = popen(cmd, "r");
	ck_assert_ptr_nonnull(out);
	for (unsigned i = 0; i < xp_rec_nkinds; i++) {
		const struct xp_rec_kind *k = &xp_rec_kinds[i];
		size_t nl = strlen(k->name);

		if (!k->dump)
			continue;
		if (!fgets(line, sizeof(line), out))
			break;
		lines++;
		ck_assert_msg(!strncmp(line, k->name, nl) && (line[nl] == ' ' || line[nl] == '\n'),
			      "kind %u (%s) dumped as: %s", k->type, k->name, line);
		ck_assert_msg(keys_match(k->dump, line + nl, why, sizeof(why)),
			      "%s: %s", k->name, why);
	}
	ck_assert_int_eq(pclose(out), 0);
	ck_assert_uint_eq(lines, dumped);
	unlink(path);
}
END_TEST

/* The key matcher itself: optional groups, order, extra and missing keys. */
START_TEST(keys_match_is_strict)
{
	char why[128], l1[] = " a=1 b=2 c=3\n", l2[] = " a=1 c=3", l3[] = " a=1 c=3 b=2",
	     l4[] = " a=1", l5[] = " a=1 b=2 c=3 d=4";

	ck_assert(keys_match("a [b] c", l1, why, sizeof(why)));
	ck_assert(keys_match("a [b] c", l2, why, sizeof(why)));
	ck_assert(!keys_match("a b c", l3, why, sizeof(why)));
	ck_assert(!keys_match("a b", l4, why, sizeof(why)));
	ck_assert(!keys_match("a b c", l5, why, sizeof(why)));
}
END_TEST

static Suite *reckinds_suite(void)
{
	Suite *s = suite_create("reckinds");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, every_enumerator_has_a_row);
	tcase_add_test(tc, rows_are_whole);
	tcase_add_test(tc, keys_match_is_strict);
	tcase_add_test(tc, dump_names_every_kind);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(reckinds_suite)
