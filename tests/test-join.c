/* test-join.c - the correlation join against the races and losses that
 * broke the old per-CPU design, each built as synthetic input. */
#include <string.h>

#include "check-main.h"
#include "correlate/join.h"

struct sample_list {
	const struct xc_sample *s;
	size_t n, i;
	/* what on_sample_in_api saw: sample id -> API corr */
	uint64_t tagged[16];
	int64_t tagged_id[16];
	size_t n_tagged;
};

static int next_sample(void *ctx, struct xc_sample *out)
{
	struct sample_list *l = ctx;

	if (l->i == l->n)
		return 0;
	*out = l->s[l->i++];
	return 1;
}

static int on_in_api(void *ctx, const struct xc_sample *s, const struct xc_api *a)
{
	struct sample_list *l = ctx;

	ck_assert_uint_lt(l->n_tagged, 16);
	l->tagged_id[l->n_tagged] = s->id;
	l->tagged[l->n_tagged++] = a->corr;
	return 0;
}

static const struct xc_attr *attr_of(const struct xc_input *in, const struct xc_result *r,
				     uint32_t pid, uint64_t corr)
{
	size_t i;

	ck_assert_ptr_nonnull(xc_find_api(in, pid, corr, &i));
	return &r->api_attr[i];
}

static struct xc_input input(struct xc_launch *l, size_t nl, struct xc_api *a, size_t na,
			     struct sample_list *sl)
{
	return (struct xc_input){ .launches = l, .n_launches = nl, .apis = a, .n_apis = na,
				  .next_sample = sl ? next_sample : NULL, .sample_ctx = sl,
				  .on_sample_in_api = sl ? on_in_api : NULL, .in_api_ctx = sl,
				  .window_ns = 1000, .slack_ns = 0 };
}

START_TEST(two_threads_launch_on_one_cpu_between_samples)
{
	/* the old design kept one "last correlation id" per CPU: B's launch
	 * overwrote A's, and A's sample was labelled with B's call */
	struct xc_api a[] = {
		{ .start = 100, .end = 200, .corr = 1, .pid = 7, .tid = 10, .id = 1 },
		{ .start = 140, .end = 220, .corr = 2, .pid = 7, .tid = 11, .id = 2 },
	};
	struct xc_launch l[] = {
		{ .ts = 150, .corr = 2, .pid = 7, .tid = 11, .stack_id = 200 },
		{ .ts = 101, .corr = 1, .pid = 7, .tid = 10, .stack_id = 100 },
	};
	struct xc_sample s[] = {
		{ .ts = 160, .pid = 7, .tid = 10, .stack_id = 1000, .id = 1 },
		{ .ts = 170, .pid = 7, .tid = 11, .stack_id = 1001, .id = 2 },
		{ .ts = 165, .pid = 7, .tid = 12, .stack_id = 1002, .id = 3 },  /* same CPU, no call */
	};
	struct sample_list sl = { .s = s, .n = 3 };
	struct xc_input in = input(l, 2, a, 2, &sl);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_int_eq(attr_of(&in, &r, 7, 1)->stack_id, 100);
	ck_assert_int_eq(attr_of(&in, &r, 7, 1)->how, XC_EXACT);
	ck_assert_int_eq(attr_of(&in, &r, 7, 2)->stack_id, 200);
	ck_assert_uint_eq(sl.n_tagged, 2);
	ck_assert_int_eq(sl.tagged_id[0], 1);
	ck_assert_uint_eq(sl.tagged[0], 1);
	ck_assert_int_eq(sl.tagged_id[1], 2);
	ck_assert_uint_eq(sl.tagged[1], 2);
	ck_assert_uint_eq(r.samples_in_api, 2);
	xc_result_free(&r);
}
END_TEST

START_TEST(launch_claiming_another_threads_call_is_rejected)
{
	/* a thread migrated between the uprobe and the sample: a record that
	 * says tid 11 made call 1 (made by tid 10) is rejected, not trusted */
	struct xc_api a[] = { { .start = 100, .end = 200, .corr = 1, .pid = 7, .tid = 10 } };
	struct xc_launch l[] = { { .ts = 150, .corr = 1, .pid = 7, .tid = 11, .stack_id = 5 } };
	struct xc_sample s[] = { { .ts = 120, .pid = 7, .tid = 10, .stack_id = 42 } };
	struct sample_list sl = { .s = s, .n = 1 };
	struct xc_input in = input(l, 1, a, 1, &sl);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_uint_eq(r.reasons[XC_LAUNCH_WRONG_TID], 1);
	ck_assert_int_eq(r.api_attr[0].how, XC_INFERRED);
	ck_assert_int_eq(r.api_attr[0].stack_id, 42);
	ck_assert_int_eq(r.api_attr[0].distance_ns, 0);
	xc_result_free(&r);
}
END_TEST

START_TEST(launch_outside_the_call_time_is_rejected)
{
	struct xc_api a[] = { { .start = 100, .end = 200, .corr = 1, .pid = 7, .tid = 10 } };
	struct xc_launch l[] = { { .ts = 900, .corr = 1, .pid = 7, .tid = 10, .stack_id = 5 } };
	struct xc_input in = input(l, 1, a, 1, NULL);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_uint_eq(r.reasons[XC_LAUNCH_OUTSIDE_CALL], 1);
	ck_assert_uint_eq(r.reasons[XC_API_NO_EVIDENCE], 1);
	ck_assert_int_eq(r.api_attr[0].how, XC_UNATTRIBUTED);
	ck_assert_int_eq(r.api_attr[0].stack_id, XC_NO_STACK);
	xc_result_free(&r);
}
END_TEST

/* Each launch record's own verdict, so a filtered report can count the
 * rejections of one process or time range. */
START_TEST(each_launch_record_has_its_verdict)
{
	struct xc_api a[] = {
		{ .start = 100, .end = 200, .corr = 1, .pid = 7, .tid = 10 },
		{ .start = 300, .end = 400, .corr = 2, .pid = 7, .tid = 10 },
	};
	struct xc_launch l[] = {
		{ .ts = 150, .corr = 1, .pid = 7, .tid = 10, .id = 501 },   /* ok */
		{ .ts = 160, .corr = 1, .pid = 7, .tid = 10, .id = 502 },   /* duplicate */
		{ .ts = 350, .corr = 2, .pid = 7, .tid = 11, .id = 503 },   /* wrong thread */
		{ .ts = 900, .corr = 2, .pid = 7, .tid = 10, .id = 504 },   /* outside */
		{ .ts = 150, .corr = 9, .pid = 7, .tid = 10, .id = 505 },   /* no call */
	};
	static const uint8_t want[] = { [1] = XC_OK, [2] = XC_LAUNCH_DUPLICATE,
		[3] = XC_LAUNCH_WRONG_TID, [4] = XC_LAUNCH_OUTSIDE_CALL, [5] = XC_LAUNCH_NO_API };
	struct xc_input in = input(l, 5, a, 2, NULL);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	for (size_t i = 0; i < 5; i++)      /* launches are sorted in place: go by id */
		ck_assert_int_eq(r.launch_reason[i], want[in.launches[i].id - 500]);
	ck_assert_uint_eq(r.reasons[XC_OK], 1);
	ck_assert_uint_eq(r.reasons[XC_LAUNCH_DUPLICATE], 1);
	xc_result_free(&r);
}
END_TEST

START_TEST(correlation_ids_reused_by_two_processes)
{
	struct xc_api a[] = {
		{ .start = 100, .end = 200, .corr = 5, .pid = 1, .tid = 1 },
		{ .start = 100, .end = 200, .corr = 5, .pid = 2, .tid = 2 },
	};
	struct xc_launch l[] = {
		{ .ts = 150, .corr = 5, .pid = 2, .tid = 2, .stack_id = 22 },
		{ .ts = 150, .corr = 5, .pid = 1, .tid = 1, .stack_id = 11 },
	};
	struct xc_input in = input(l, 2, a, 2, NULL);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_int_eq(attr_of(&in, &r, 1, 5)->stack_id, 11);
	ck_assert_int_eq(attr_of(&in, &r, 2, 5)->stack_id, 22);
	ck_assert_uint_eq(r.reasons[XC_OK], 2);
	xc_result_free(&r);
}
END_TEST

START_TEST(out_of_order_records_across_cpus)
{
	/* launches arrive in any order (per-CPU buffers); samples that break
	 * the promised order are counted, not silently used */
	struct xc_api a[4];
	struct xc_launch l[4];
	struct xc_sample s[] = {
		{ .ts = 250, .pid = 3, .tid = 3, .stack_id = 9 },
		{ .ts = 150, .pid = 3, .tid = 3, .stack_id = 8 },  /* goes backwards */
	};
	struct sample_list sl = { .s = s, .n = 2 };
	struct xc_input in;
	struct xc_result r;

	for (int i = 0; i < 4; i++) {
		a[i] = (struct xc_api){ .start = 100u * i, .end = 100u * i + 50, .corr = (uint64_t)i,
					.pid = 3, .tid = 3 };
		l[3 - i] = (struct xc_launch){ .ts = 100u * i + 10, .corr = (uint64_t)i, .pid = 3,
					       .tid = 3, .stack_id = 100 + i };
	}
	in = input(l, 4, a, 4, &sl);
	ck_assert_int_eq(xc_join(&in, &r), 0);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(attr_of(&in, &r, 3, (uint64_t)i)->stack_id, 100 + i);
	ck_assert_uint_eq(r.samples_out_of_order, 1);
	xc_result_free(&r);
}
END_TEST

START_TEST(unpartnered_records_counted_and_fallback_bounded)
{
	struct xc_api a[] = {
		{ .start = 1000, .end = 1100, .corr = 1, .pid = 4, .tid = 4 },  /* no launch, sample 400 ns before */
		{ .start = 9000, .end = 9100, .corr = 2, .pid = 4, .tid = 4 },  /* no launch, sample 3000 ns before */
	};
	struct xc_launch l[] = { { .ts = 50, .corr = 77, .pid = 4, .tid = 4, .stack_id = 1 } };  /* no API */
	struct xc_sample s[] = { { .ts = 600, .pid = 4, .tid = 4, .stack_id = 60 },
				 { .ts = 6000, .pid = 4, .tid = 4, .stack_id = 61 } };
	struct sample_list sl = { .s = s, .n = 2 };
	struct xc_input in = input(l, 1, a, 2, &sl);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_uint_eq(r.reasons[XC_LAUNCH_NO_API], 1);
	ck_assert_int_eq(attr_of(&in, &r, 4, 1)->how, XC_INFERRED);
	ck_assert_int_eq(attr_of(&in, &r, 4, 1)->stack_id, 60);
	ck_assert_int_eq(attr_of(&in, &r, 4, 1)->distance_ns, 400);
	ck_assert_int_eq(attr_of(&in, &r, 4, 2)->how, XC_UNATTRIBUTED);  /* beyond the 1000 ns window */
	ck_assert_uint_eq(r.reasons[XC_API_NO_LAUNCH], 1);
	ck_assert_uint_eq(r.reasons[XC_API_NO_EVIDENCE], 1);
	xc_result_free(&r);
}
END_TEST

START_TEST(second_launch_for_one_call_is_a_duplicate)
{
	struct xc_api a[] = { { .start = 100, .end = 200, .corr = 1, .pid = 7, .tid = 10 } };
	struct xc_launch l[] = { { .ts = 150, .corr = 1, .pid = 7, .tid = 10, .stack_id = 5 },
				 { .ts = 160, .corr = 1, .pid = 7, .tid = 10, .stack_id = 6 } };
	struct xc_input in = input(l, 2, a, 1, NULL);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_int_eq(r.api_attr[0].stack_id, 5);
	ck_assert_uint_eq(r.reasons[XC_LAUNCH_DUPLICATE], 1);
	xc_result_free(&r);
}
END_TEST

START_TEST(empty_input)
{
	struct xc_input in = input(NULL, 0, NULL, 0, NULL);
	struct xc_result r;

	ck_assert_int_eq(xc_join(&in, &r), 0);
	ck_assert_ptr_null(xc_find_api(&in, 1, 1, NULL));
	xc_result_free(&r);
}
END_TEST

Suite *join_suite(void)
{
	Suite *s = suite_create("join");
	TCase *tc = tcase_create("races");

	tcase_add_test(tc, two_threads_launch_on_one_cpu_between_samples);
	tcase_add_test(tc, launch_claiming_another_threads_call_is_rejected);
	tcase_add_test(tc, launch_outside_the_call_time_is_rejected);
	tcase_add_test(tc, each_launch_record_has_its_verdict);
	tcase_add_test(tc, correlation_ids_reused_by_two_processes);
	tcase_add_test(tc, out_of_order_records_across_cpus);
	tcase_add_test(tc, unpartnered_records_counted_and_fallback_bounded);
	tcase_add_test(tc, second_launch_for_one_call_is_a_duplicate);
	tcase_add_test(tc, empty_input);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(join_suite)
