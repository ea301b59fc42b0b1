/* test-jsonw.c - the streaming JSON writer emits what jansson parses back,
 * with escapes, nesting and ns->us conversion exact. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "export/render/jsonw.h"

static char *buf;
static size_t len;

static FILE *open_mem(void)
{
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	return f;
}

START_TEST(nested_values_and_escapes)
{
	FILE *f = open_mem();
	struct jsonw w;

	jsonw_init(&w, f);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "traceEvents");
	jsonw_arr_begin(&w);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "name"); jsonw_str(&w, "k<\"q\\\n\x01>");
	jsonw_key(&w, "ts"); jsonw_ns_as_us(&w, 1234567);
	jsonw_key(&w, "dur"); jsonw_ns_as_us(&w, -5);
	jsonw_key(&w, "n"); jsonw_int(&w, -3);
	jsonw_obj_end(&w);
	jsonw_uint(&w, 9007199254740993ull);
	jsonw_bool(&w, 1);
	jsonw_null(&w);
	jsonw_arr_end(&w);
	jsonw_obj_end(&w);
	ck_assert_int_eq(jsonw_error(&w), 0);
	fclose(f);
	ck_assert_str_eq(buf, "{\"traceEvents\":[{\"name\":\"k<\\\"q\\\\\\n\\u0001>\","
			      "\"ts\":1234.567,\"dur\":-0.005,\"n\":-3},9007199254740993,true,null]}");
	{
		json_error_t err;
		json_t *root = json_loads(buf, 0, &err);
		json_t *ev;

		ck_assert_msg(root != NULL, "jansson: %s", err.text);
		ev = json_array_get(json_object_get(root, "traceEvents"), 0);
		ck_assert_str_eq(json_string_value(json_object_get(ev, "name")), "k<\"q\\\n\x01>");
		json_decref(root);
	}
	free(buf);
}
END_TEST

START_TEST(unbalanced_close_is_an_error)
{
	FILE *f = open_mem();
	struct jsonw w;

	jsonw_init(&w, f);
	jsonw_arr_begin(&w);
	jsonw_arr_end(&w);
	jsonw_arr_end(&w);
	ck_assert_int_ne(jsonw_error(&w), 0);
	fclose(f);
	free(buf);
}
END_TEST

/* The same values, written through a small buffer and straight to stdio,
 * give the same bytes and the same count; a string longer than the buffer
 * and newlines between values included. */
static void sample_values(struct jsonw *w, const char *long_str)
{
	jsonw_arr_begin(w);
	for (int i = 0; i < 50; i++) {
		jsonw_newline(w);
		jsonw_obj_begin(w);
		jsonw_key(w, "i"); jsonw_int(w, i * -1234567);
		jsonw_key(w, "u"); jsonw_uint(w, UINT64_MAX - (uint64_t)i);
		jsonw_key(w, "ts"); jsonw_ns_as_us(w, INT64_MIN + i);
		jsonw_key(w, "f"); jsonw_fixed(w, i / 7.0, 3);
		jsonw_key(w, "s"); jsonw_str(w, i % 10 ? "a\tb" : long_str);
		jsonw_obj_end(w);
	}
	jsonw_arr_end(w);
}

START_TEST(buffered_output_is_the_same)
{
	char small[16], long_str[100];
	char *plain, *buffered;
	size_t plain_len;
	FILE *f;
	struct jsonw w;

	memset(long_str, 'x', sizeof(long_str) - 1);
	long_str[sizeof(long_str) - 1] = '\0';
	f = open_mem();
	jsonw_init(&w, f);
	sample_values(&w, long_str);
	ck_assert_int_eq(jsonw_error(&w), 0);
	fclose(f);
	plain = buf;
	plain_len = len;
	ck_assert_uint_eq(w.bytes, plain_len);

	f = open_mem();
	jsonw_init(&w, f);
	jsonw_buffer(&w, small, sizeof(small));
	sample_values(&w, long_str);
	ck_assert_int_eq(jsonw_flush(&w), 0);
	fclose(f);
	buffered = buf;
	ck_assert_uint_eq(w.bytes, plain_len);
	ck_assert_uint_eq(len, plain_len);
	ck_assert_mem_eq(buffered, plain, plain_len);
	ck_assert_ptr_nonnull(strstr(plain, "\"ts\":-9223372036854775.808"));
	free(plain);
	free(buffered);
}
END_TEST

START_TEST(write_errors_are_kept)
{
	char b[64];
	FILE *f = fopen("/dev/full", "w");
	struct jsonw w;

	if (!f) {
		printf("write_errors_are_kept: no /dev/full here, not checked\n");
		return;
	}
	setvbuf(f, NULL, _IONBF, 0);
	jsonw_init(&w, f);
	jsonw_buffer(&w, b, sizeof(b));
	sample_values(&w, "x");
	ck_assert_int_eq(jsonw_flush(&w), -ENOSPC);
	fclose(f);
}
END_TEST

/* A stream that takes nothing and gives no reason (errno unset, as a
 * cookie or a broken stdio can): the code is -ENOSPC, never -EIO, which the
 * commands read as "the database failed, ask sqlite3_errmsg". */
static ssize_t takes_nothing(void *c, const char *buf, size_t n)
{
	(void)c;
	(void)buf;
	(void)n;
	errno = 0;
	return 0;
}

START_TEST(write_error_without_errno_is_not_eio)
{
	FILE *f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = takes_nothing });
	struct jsonw w;

	ck_assert_ptr_nonnull(f);
	setvbuf(f, NULL, _IONBF, 0);
	jsonw_init(&w, f);
	sample_values(&w, "x");
	ck_assert_int_eq(jsonw_error(&w), -ENOSPC);
	/* a failed write beside the writer's, its errno gone by the check */
	jsonw_init(&w, f);
	errno = 0;
	ck_assert_int_eq(jsonw_error(&w), -ENOSPC);
	fclose(f);
}
END_TEST

START_TEST(invalid_utf8_is_replacement)
{
	/* a symbol name with bytes that are not UTF-8: the trace must stay
	 * JSON (jansson, like browsers, refuses invalid UTF-8) */
	FILE *f = open_mem();
	json_error_t jerr;
	struct jsonw w;
	json_t *j;

	jsonw_init(&w, f);
	jsonw_arr_begin(&w);
	jsonw_str(&w, "a\xff\xc3\xa9\xed\xa0\x80z\xe2\x82");
	jsonw_key(&w, "\xfe");     /* keys too (inside an array: not valid, unused) */
	jsonw_arr_end(&w);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"a\\ufffd\xc3\xa9\\ufffd\\ufffd\\ufffdz\\ufffd\\ufffd\""));
	free(buf);

	f = open_mem();
	jsonw_init(&w, f);
	jsonw_obj_begin(&w);
	jsonw_key(&w, "n\xff");
	jsonw_str(&w, "\x80\x80x");
	jsonw_obj_end(&w);
	fclose(f);
	j = json_loadb(buf, len, 0, &jerr);
	ck_assert_msg(j != NULL, "not JSON: %s (%s)", jerr.text, buf);
	ck_assert_str_eq(json_string_value(json_object_get(j, "n\xef\xbf\xbd")),
			 "\xef\xbf\xbd\xef\xbf\xbdx");
	json_decref(j);
	free(buf);
}
END_TEST

Suite *jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, nested_values_and_escapes);
	tcase_add_test(tc, unbalanced_close_is_an_error);
	tcase_add_test(tc, buffered_output_is_the_same);
	tcase_add_test(tc, write_errors_are_kept);
	tcase_add_test(tc, write_error_without_errno_is_not_eio);
	tcase_add_test(tc, invalid_utf8_is_replacement);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(jsonw_suite)
