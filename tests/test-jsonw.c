/* test-jsonw.c - the streaming JSON writer emits what jansson parses back,
 * with escapes, nesting and ns->us conversion exact. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "jsonw.h"

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

Suite *jsonw_suite(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, nested_values_and_escapes);
	tcase_add_test(tc, unbalanced_close_is_an_error);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(jsonw_suite)
