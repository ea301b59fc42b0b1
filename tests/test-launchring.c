/* test-launchring.c - the launch stacks' ring (cupti/launchring.c):
 * records of many sizes from several threads come out whole, each
 * thread's in its order, none lost while the consumer keeps up; a full
 * ring refuses and loses nothing already in it; a record that runs past
 * the last cell is contiguous. */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "check-main.h"
#include "cupti/launchring.h"

#define THREADS 4
#define PER_THREAD 20000
#define BIG 9000

struct rec {
	uint32_t thread, n, len, pad;   /* then len - 16 bytes of (n + i) */
};

static struct xpc_ring ring;

static size_t len_of(uint32_t thread, uint32_t n)
{
	/* mostly small, now and then a stack copy's size */
	return n % 17 == 0 ? BIG - 8 * thread : sizeof(struct rec) + 8 * ((n * 7 + thread) % 40);
}

static void *producer(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;

	for (uint32_t n = 0; n < PER_THREAD;) {
		size_t len = len_of(t, n);
		uint64_t pos;
		struct rec *r = xpc_ring_reserve(&ring, len, (uint16_t)(n * 31 + t), &pos);

		if (!r) {
			sched_yield();          /* full: this test waits, the library drops */
			continue;
		}
		r->thread = t;
		r->n = n;
		r->len = (uint32_t)len;
		for (size_t i = sizeof(*r); i < len; i++)
			((unsigned char *)r)[i] = (unsigned char)(n + i);
		xpc_ring_publish(&ring, pos);
		n++;
	}
	return NULL;
}

static int bytes_ok(const struct rec *r, size_t len)
{
	for (size_t i = sizeof(*r); i < len; i++)
		if (((const unsigned char *)r)[i] != (unsigned char)(r->n + i))
			return 0;
	return 1;
}

START_TEST(records_whole_and_in_order)
{
	pthread_t th[THREADS];
	uint32_t next[THREADS] = { 0 }, seen = 0;

	ck_assert_int_eq(xpc_ring_init(&ring, 256 << 10, BIG), 0);
	for (uintptr_t t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&th[t], NULL, producer, (void *)t), 0);
	while (seen < THREADS * PER_THREAD) {
		const struct rec *r;
		uint16_t note;
		size_t len;

		if (!(r = xpc_ring_next(&ring, &len, &note))) {
			sched_yield();          /* two CPUs for five threads in CI */
			continue;
		}
		ck_assert_uint_eq((uintptr_t)r % 8, 0);
		ck_assert_uint_lt(r->thread, THREADS);
		ck_assert_uint_eq(r->n, next[r->thread]);
		ck_assert_uint_eq(len, len_of(r->thread, r->n));
		ck_assert_uint_eq(r->len, len);
		ck_assert_uint_eq(note, (uint16_t)(r->n * 31 + r->thread));
		ck_assert_msg(bytes_ok(r, len), "record %u of thread %u damaged", r->n, r->thread);
		next[r->thread]++;
		seen++;
		xpc_ring_release(&ring);
	}
	for (int t = 0; t < THREADS; t++)
		pthread_join(th[t], NULL);
	ck_assert_ptr_null(xpc_ring_next(&ring, &(size_t){ 0 }, &(uint16_t){ 0 }));
	xpc_ring_free(&ring);
}
END_TEST

START_TEST(full_ring_refuses)
{
	uint64_t pos, first = 0;
	size_t len;
	unsigned held = 0;
	void *p;

	ck_assert_int_eq(xpc_ring_init(&ring, 64 << 10, 4096), 0);
	/* never drained: it fills, then refuses; what it took stays readable */
	while ((p = xpc_ring_reserve(&ring, 1100, 0, &pos))) {
		memset(p, (int)held, 1100);
		xpc_ring_publish(&ring, pos);
		if (!held)
			first = pos;
		held++;
	}
	ck_assert_uint_ge(held, 40);
	ck_assert_uint_eq(first, 0);
	ck_assert_ptr_null(xpc_ring_reserve(&ring, 1100, 0, &pos));
	ck_assert_ptr_null(xpc_ring_reserve(&ring, 4097, 0, &pos));       /* over the largest */
	for (unsigned i = 0; i < held; i++) {
		const unsigned char *r = xpc_ring_next(&ring, &len, &(uint16_t){ 0 });

		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(len, 1100);
		ck_assert_uint_eq(r[0], (unsigned char)i);
		ck_assert_uint_eq(r[1099], (unsigned char)i);
		xpc_ring_release(&ring);
		/* room again: a large record fits once enough is freed, even
		 * where it runs past the last cell into the spare room */
		if (i == held / 2) {
			p = xpc_ring_reserve(&ring, 4096, 0, &pos);
			ck_assert_ptr_nonnull(p);
			/* 1100 bytes and the header take 5 cells: 51 of them
			 * leave this one starting in the last cell */
			ck_assert_uint_eq(pos & ring.mask, ring.mask);
			memset(p, 0xab, 4096);
			xpc_ring_publish(&ring, pos);
		}
	}
	{
		const unsigned char *r = xpc_ring_next(&ring, &len, &(uint16_t){ 0 });

		ck_assert_ptr_nonnull(r);
		ck_assert_uint_eq(len, 4096);
		ck_assert(r[0] == 0xab && r[4095] == 0xab && !memcmp(r, r + 1, 4095));
		xpc_ring_release(&ring);
	}
	ck_assert_ptr_null(xpc_ring_next(&ring, &len, &(uint16_t){ 0 }));
	xpc_ring_free(&ring);
}
END_TEST

/* The consumer counts the records published from the oldest on: a record
 * reserved but not yet whole stops the count, even with later ones
 * published (the writer decides what to write from this count). */
START_TEST(ready_counts_published_in_order)
{
	uint64_t pos[3];
	size_t len;

	ck_assert_int_eq(xpc_ring_init(&ring, 64 << 10, 4096), 0);
	ck_assert_uint_eq(xpc_ring_ready(&ring), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_ptr_nonnull(xpc_ring_reserve(&ring, i ? 600 : 100, 0, &pos[i]));
	xpc_ring_publish(&ring, pos[0]);
	xpc_ring_publish(&ring, pos[2]);
	ck_assert_uint_eq(xpc_ring_ready(&ring), 1);
	xpc_ring_publish(&ring, pos[1]);
	ck_assert_uint_eq(xpc_ring_ready(&ring), 3);
	ck_assert_ptr_nonnull(xpc_ring_next(&ring, &len, &(uint16_t){ 0 }));
	xpc_ring_release(&ring);
	ck_assert_uint_eq(xpc_ring_ready(&ring), 2);
	xpc_ring_free(&ring);
}
END_TEST

/* A record that must leave spare cells free stops that many short of
 * full; records without that demand then take exactly those cells. */
START_TEST(spare_cells_kept)
{
	uint64_t pos;
	size_t cells, big = 0, small = 0;

	ck_assert_int_eq(xpc_ring_init(&ring, 64 << 10, 4096), 0);
	cells = ring.mask + 1;
	ck_assert_ptr_null(xpc_ring_reserve_spare(&ring, 100, 0, cells / 2 + 1, &pos));
	/* 1100 bytes and the header: 5 cells */
	while (xpc_ring_reserve_spare(&ring, 1100, 0, 64, &pos)) {
		xpc_ring_publish(&ring, pos);
		big++;
	}
	ck_assert_uint_eq(big, (cells - 64) / 5);
	while (xpc_ring_reserve(&ring, 100, 0, &pos)) {
		xpc_ring_publish(&ring, pos);
		small++;
	}
	ck_assert_uint_eq(big * 5 + small, cells);
	ck_assert_uint_ge(small, 64);
	xpc_ring_free(&ring);
}
END_TEST

Suite *launchring_suite(void)
{
	Suite *s = suite_create("launchring");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, records_whole_and_in_order);
	tcase_add_test(tc, full_ring_refuses);
	tcase_add_test(tc, ready_counts_published_in_order);
	tcase_add_test(tc, spare_cells_kept);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(launchring_suite)
