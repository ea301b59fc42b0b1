/* test-stackreuse.c - the keys of launch stacks (cupti/stackreuse.c):
 * a key is the same for the same launch and differs when any part that
 * decides the native call path does (a frame's code or instruction, the
 * frames' order, the kernel's name, the API, the stack's depth); a thread
 * copies a key's first launch and its checks (uses 1, 2, 4 ... 32, then
 * one in 64) and names the copy otherwise; a dropped first copy is
 * forgotten; XPCAP_STACK_REUSE=0 gives no keys. The calls the library
 * times itself on (cupti/selftime.h) are a fair sample of copies and
 * names, whatever the period of the launches. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "src/marker.h"
#include "cupti/selftime.h"
#include "cupti/stackreuse.h"

#define FRAMES 20

static uint64_t frames[2 * FRAMES];     /* code id, instruction | flags << 32 */
static const char *name = "_ZN2at6native29vectorized_elementwise_kernelILi4E";

static uint64_t key_of(void)
{
	return xpc_reuse_key(211, name, 4096, frames, sizeof(frames));
}

static void setup(void)
{
	unsetenv(XP_ENV_STACK_REUSE);
	xpc_reuse_start();
	for (int i = 0; i < FRAMES; i++) {
		frames[2 * i] = 1000 + (uint64_t)i;
		frames[2 * i + 1] = 40 + 2 * (uint64_t)i;
	}
}

START_TEST(key_follows_every_part)
{
	uint64_t k = key_of(), t;

	ck_assert_uint_ne(k, 0);
	ck_assert_uint_eq(key_of(), k);
	for (int i = 0; i < 2 * FRAMES; i++) {          /* any one word of any frame */
		frames[i] ^= 2;
		ck_assert_uint_ne(key_of(), k);
		frames[i] ^= 2;
	}
	t = frames[0], frames[0] = frames[2], frames[2] = t;    /* two frames swapped */
	t = frames[1], frames[1] = frames[3], frames[3] = t;
	ck_assert_uint_ne(key_of(), k);
	t = frames[0], frames[0] = frames[2], frames[2] = t;
	t = frames[1], frames[1] = frames[3], frames[3] = t;
	ck_assert_uint_eq(key_of(), k);
	ck_assert_uint_ne(xpc_reuse_key(211, name, 4096, frames, sizeof(frames) - 16), k);
	ck_assert_uint_ne(xpc_reuse_key(212, name, 4096, frames, sizeof(frames)), k);
	ck_assert_uint_ne(xpc_reuse_key(211, name, 4104, frames, sizeof(frames)), k);
	ck_assert_uint_ne(xpc_reuse_key(211, "_ZN2at6native29vectorized_elementwise_kernelILi2E",
					 4096, frames, sizeof(frames)), k);
	ck_assert_uint_ne(xpc_reuse_key(211, NULL, 4096, frames, sizeof(frames)), k);
	ck_assert_uint_eq(xpc_reuse_key(211, name, 4096, frames, 0), 0);     /* no Python: no key */
}
END_TEST

START_TEST(copies_then_names)
{
	uint64_t k = key_of();
	uint32_t id = 0, first;
	int copies = 0;

	ck_assert_int_eq(xpc_reuse_decide(k, &first), XPC_REUSE_COPY);
	for (uint32_t use = 1; use <= 256; use++) {
		enum xpc_reuse_what w = xpc_reuse_decide(k, &id);
		int check = use % XPC_REUSE_CHECK_EVERY == 0 || (use < 64 && !(use & (use - 1)));

		ck_assert_uint_eq(id, first);
		ck_assert_int_eq(w, check ? XPC_REUSE_COPY : XPC_REUSE_BORROW);
		copies += w == XPC_REUSE_COPY;
	}
	ck_assert_int_eq(copies, 6 + 4);                /* 1 .. 32, then 64 .. 256 */
	/* another key gets another id; a dropped first copy is forgotten */
	frames[0]++;
	ck_assert_int_eq(xpc_reuse_decide(key_of(), &id), XPC_REUSE_COPY);
	ck_assert_uint_ne(id, first);
	xpc_reuse_dropped(key_of());
	ck_assert_int_eq(xpc_reuse_decide(key_of(), &first), XPC_REUSE_COPY);
	ck_assert_uint_ne(first, id);
	ck_assert_int_eq(xpc_reuse_decide(key_of(), &id), XPC_REUSE_COPY);     /* use 1: a check */
	xpc_reuse_dropped(key_of());            /* a dropped check keeps the key */
	ck_assert_int_eq(xpc_reuse_decide(key_of(), &id), XPC_REUSE_COPY);     /* use 2 */
	ck_assert_uint_eq(id, first);
	ck_assert_int_eq(xpc_reuse_decide(key_of(), &id), XPC_REUSE_BORROW);   /* use 3 */
	ck_assert_uint_eq(id, first);
}
END_TEST

START_TEST(off_by_environment)
{
	uint32_t id;

	setenv(XP_ENV_STACK_REUSE, "0", 1);
	xpc_reuse_start();
	ck_assert_uint_eq(key_of(), 0);
	ck_assert_int_eq(xpc_reuse_decide(0, &id), XPC_REUSE_OFF);
}
END_TEST

/* A thread launching from two lines in turn (a loop of x * a; x + b): the
 * share of full copies among the timed calls is the share among all calls
 * (a stride of 64 timed copies on half its calls: 1 in 2, against 1 in 64) */
START_TEST(timed_calls_sample_fairly)
{
	uint64_t keys[2];
	uint32_t id, draw = 0, calls = 0, copies = 0, timed = 0, timed_copies = 0;

	keys[0] = key_of();
	frames[0]++;
	keys[1] = key_of();
	for (uint32_t i = 0; i < 2 * 64 * 4000; i++) {
		int copy = xpc_reuse_decide(keys[i & 1], &id) == XPC_REUSE_COPY;

		calls++;
		copies += copy;
		if (xpc_self_time_draw(&draw, 4242)) {
			timed++;
			timed_copies += copy;
		}
	}
	/* about 8000 timed calls; copies are 1/64 of all calls */
	ck_assert_uint_gt(timed, 6000);
	ck_assert_uint_lt(timed, 10000);
	ck_assert_msg(timed_copies * 100 < timed * 3,
		      "%u of %u timed calls were copies (all calls: %u of %u)",
		      timed_copies, timed, copies, calls);
	ck_assert_uint_gt(timed_copies, 0);
}
END_TEST

static Suite *stackreuse_suite(void)
{
	Suite *s = suite_create("stackreuse");
	TCase *tc = tcase_create("keys");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, key_follows_every_part);
	tcase_add_test(tc, copies_then_names);
	tcase_add_test(tc, off_by_environment);
	tcase_add_test(tc, timed_calls_sample_fairly);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(stackreuse_suite)
