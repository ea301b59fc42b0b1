/* test-utf8.c - the one sanitizer of names on their way out: valid UTF-8
 * passes as is, every byte that starts no valid sequence becomes U+FFFD. */
#include <string.h>

#include "check-main.h"
#include "src/textesc.h"
#include "src/utf8.h"

#define R XP_UTF8_REPLACEMENT

static const char *clean(const char *s, size_t len)
{
	static char out[256];

	xp_utf8_sanitize(out, sizeof(out), s, len);
	return out;
}

START_TEST(valid_text_passes)
{
	static const char s[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80z";   /* a é € 😀 z */

	ck_assert_int_eq(xp_utf8_valid(s, sizeof(s) - 1), 1);
	ck_assert_str_eq(clean(s, sizeof(s) - 1), s);
	ck_assert_uint_eq(xp_utf8_seq("\xc3\xa9", 2), 2);
	ck_assert_uint_eq(xp_utf8_seq("\xe2\x82\xac", 3), 3);
	ck_assert_uint_eq(xp_utf8_seq("\xf0\x9f\x98\x80", 4), 4);
	ck_assert_uint_eq(xp_utf8_seq("\xf4\x8f\xbf\xbf", 4), 4);     /* U+10FFFF */
}
END_TEST

START_TEST(invalid_bytes_replaced)
{
	static const struct { const char *in; const char *out; } cases[] = {
		{ "a\xff" "b", "a" R "b" },                 /* never in UTF-8 */
		{ "\x80x", R "x" },                         /* stray continuation */
		{ "\xc0\xaf", R R },                        /* overlong '/' */
		{ "\xe0\x80\xaf", R R R },                  /* overlong, 3 bytes */
		{ "\xed\xa0\x80", R R R },                  /* a surrogate */
		{ "\xf4\x90\x80\x80", R R R R },            /* past U+10FFFF */
		{ "\xef\xbf\xbe", R R R },                  /* U+FFFE: not in XML */
		{ "ok\xe2\x82", "ok" R R },                 /* cut short at the end */
		{ "\xe2\x82z", R R "z" },                   /* cut short inside */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(xp_utf8_valid(cases[i].in, strlen(cases[i].in)), 0);
		ck_assert_str_eq(clean(cases[i].in, strlen(cases[i].in)), cases[i].out);
		ck_assert_int_eq(xp_utf8_valid(clean(cases[i].in, strlen(cases[i].in)),
					       strlen(cases[i].out)), 1);
	}
}
END_TEST

START_TEST(output_bounded_whole_sequences)
{
	char out[5];

	/* room for "ab" and one replacement: the second does not fit whole */
	ck_assert_uint_eq(xp_utf8_sanitize(out, sizeof(out), "ab\xff\xff", 4), 2 + 0);
	ck_assert_str_eq(out, "ab");
	ck_assert_uint_eq(xp_utf8_sanitize(out, 6, "a\xff\xff", 3), 4);
	ck_assert_str_eq(out, "a" R);
	ck_assert_uint_eq(xp_utf8_sanitize(out, 1, "abc", 3), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(fput_writes_one_sequence)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const char *s = "\xc3\xa9\xff!";

	s = xp_utf8_fput(f, s);
	s = xp_utf8_fput(f, s);
	ck_assert_str_eq(s, "!");
	fclose(f);
	ck_assert_str_eq(buf, "\xc3\xa9" R);
	free(buf);
}
END_TEST

/* text outputs: controls escaped byte by byte, everything else kept */
START_TEST(controls_escaped)
{
	const char *clean = "main;py::step:train.py \xc3\xa9\xe2\x80\xa6";

	ck_assert_ptr_eq(xp_esc(clean), clean);             /* no copy when clean */
	ck_assert_ptr_null(xp_esc(NULL));
	ck_assert_str_eq(xp_esc("a\x1b]0;t\x07" "b\r\n\tc\x7f"), "a\\x1b]0;t\\x07b\\x0d\\x0a\\x09c\\x7f");
	/* C1 as UTF-8 (U+009B, CSI) and as a lone byte; U+00A0 is text */
	ck_assert_str_eq(xp_esc("\xc2\x9b" "2J \x9b \xc2\xa0"), "\\xc2\\x9b" "2J \\x9b \xc2\xa0");
	ck_assert_str_eq(xp_escn("ab\x1b" "cdef", 4), "ab\\x1b" "c");
	ck_assert_str_eq(xp_escn("comm\0junk", 16), "comm");
	ck_assert_int_eq(xp_esc_needed("plain"), 0);
	ck_assert_int_eq(xp_esc_needed("\x1b"), 1);
	/* one printf's arguments stay apart */
	{
		const char *a = xp_esc("\x01"), *b = xp_esc("\x02");

		ck_assert_str_eq(a, "\\x01");
		ck_assert_str_eq(b, "\\x02");
	}
}
END_TEST

/* format characters reorder or hide text on a terminal: "gpt\u202ecod.exe"
 * shows as "gptexe.doc"; escaped byte by byte, as C1 is; the visible text
 * around them (CJK, emoji, combining marks) kept */
START_TEST(format_chars_escaped)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "a\xe2\x80\xae" "b", "a\\xe2\\x80\\xae" "b" },             /* U+202E RLO */
		{ "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad",        /* U+202A-D */
		  "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad" },
		{ "x\xe2\x81\xa6y\xe2\x81\xa9", "x\\xe2\\x81\\xa6y\\xe2\\x81\\xa9" },  /* U+2066, 2069 */
		{ "\xe2\x80\x8e\xe2\x80\x8f", "\\xe2\\x80\\x8e\\xe2\\x80\\x8f" },   /* LRM, RLM */
		{ "\xd8\x9c", "\\xd8\\x9c" },                                    /* U+061C ALM */
		{ "a\xe2\x80\x8b" "b\xe2\x80\x8d", "a\\xe2\\x80\\x8b" "b\\xe2\\x80\\x8d" }, /* ZWSP, ZWJ */
		{ "\xe2\x81\xa0\xe2\x81\xa4", "\\xe2\\x81\\xa0\\xe2\\x81\\xa4" },   /* U+2060, 2064 */
		{ "\xef\xbb\xbf" "f", "\\xef\\xbb\\xbf" "f" },                    /* BOM */
		{ "so\xc2\xad" "ft", "so\\xc2\\xad" "ft" },                        /* soft hyphen */
		{ "\xf3\xa0\x80\x81\xf3\xa0\x81\xbf",                               /* tags E0001, E007F */
		  "\\xf3\\xa0\\x80\\x81\\xf3\\xa0\\x81\\xbf" },
		{ "l\xe2\x80\xa8m", "l\\xe2\\x80\\xa8m" },                      /* U+2028 */
	};
	/* visible: U+00AC, U+2027, U+202F NNBSP, U+206F+1 = U+2070, CJK,
	 * emoji, a combining acute, U+E0080 (past the tags) */
	const char *kept = "\xc2\xac\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xb0\xe4\xb8\xad"
			   "\xf0\x9f\x99\x82" "e\xcc\x81\xf3\xa0\x82\x80";

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_int_eq(xp_esc_needed(cases[i].in), 1);
		ck_assert_str_eq(xp_esc(cases[i].in), cases[i].out);
	}
	ck_assert_ptr_eq(xp_esc(kept), kept);
	/* a format character cut short by xp_escn is an invalid byte, still escaped */
	ck_assert_str_eq(xp_escn("a\xe2\x80\xae", 3), "a\\xe2\\x80");
}
END_TEST

Suite *utf8_suite(void)
{
	Suite *s = suite_create("utf8");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, valid_text_passes);
	tcase_add_test(tc, invalid_bytes_replaced);
	tcase_add_test(tc, output_bounded_whole_sequences);
	tcase_add_test(tc, fput_writes_one_sequence);
	tcase_add_test(tc, controls_escaped);
	tcase_add_test(tc, format_chars_escaped);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(utf8_suite)
