/* test-stacktree.c - stacks sharing callers share prefix-tree nodes. */
#include "check-main.h"
#include "ingest/stacktree.h"

static int64_t add_path(struct xp_stacktree *t, const int64_t *frames, int n, int *created)
{
	int64_t node = 0;
	int fresh;

	*created = 0;
	for (int i = 0; i < n; i++) {
		ck_assert_int_eq(xp_stacktree_add(t, node, frames[i], &node, &fresh), 0);
		*created += fresh;
	}
	return node;
}

START_TEST(shared_prefixes_are_shared)
{
	struct xp_stacktree t;
	const int64_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 }, c[] = { 2, 3 };
	int64_t la, lb, lc, la2;
	int created;

	xp_stacktree_init(&t);
	la = add_path(&t, a, 3, &created);
	ck_assert_int_eq(created, 3);
	lb = add_path(&t, b, 3, &created);
	ck_assert_int_eq(created, 1);       /* only the new leaf */
	ck_assert_int_ne(la, lb);
	/* same frames under another parent are other nodes */
	lc = add_path(&t, c, 2, &created);
	ck_assert_int_eq(created, 2);
	ck_assert_int_ne(lc, la);
	la2 = add_path(&t, a, 3, &created);
	ck_assert_int_eq(created, 0);
	ck_assert_int_eq(la2, la);
	ck_assert_int_eq(xp_stacktree_count(&t), 6);
	xp_stacktree_free(&t);
}
END_TEST

START_TEST(ids_dense_and_parents_first)
{
	struct xp_stacktree t;
	int64_t node = 0, prev = 0;
	int fresh;

	xp_stacktree_init(&t);
	for (int64_t f = 1; f <= 50000; f++) {
		ck_assert_int_eq(xp_stacktree_add(&t, node, f % 7, &node, &fresh), 0);
		ck_assert_int_eq(fresh, 1);
		ck_assert_int_eq(node, prev + 1);   /* a parent's id is below its child's */
		prev = node;
	}
	xp_stacktree_free(&t);
}
END_TEST

Suite *stacktree_suite(void)
{
	Suite *s = suite_create("stacktree");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, shared_prefixes_are_shared);
	tcase_add_test(tc, ids_dense_and_parents_first);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(stacktree_suite)
