/* test-sideband.c - the perf ring reader on a ring built in memory: records
 * come out whole and in order, including ones that wrap around the end of
 * the ring (header split too), and data_tail advances past what was read. */
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "capture/sideband.h"

#define DATA 256

static struct perf_event_mmap_page meta;
static unsigned char data[DATA], copy[DATA];
static uint64_t head;

struct seen {
	int n;
	uint16_t sizes[64];
	unsigned char first[64];    /* first payload byte of each */
	int intact[64];             /* every payload byte equals the first */
};

/* Writes a record of size bytes whose payload bytes are all `fill`. */
static void put(uint16_t size, unsigned char fill)
{
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .misc = 0, .size = size };
	unsigned char rec[DATA];

	memcpy(rec, &h, sizeof(h));
	memset(rec + sizeof(h), fill, size - sizeof(h));
	for (uint16_t i = 0; i < size; i++)
		data[(head + i) % DATA] = rec[i];
	head += size;
	meta.data_head = head;
}

static void on_rec(void *ctx, const void *rec, size_t len)
{
	struct seen *s = ctx;
	const unsigned char *p = rec;
	const struct perf_event_header *h = rec;

	ck_assert_uint_eq(h->size, len);
	s->sizes[s->n] = (uint16_t)len;
	s->first[s->n] = p[sizeof(*h)];
	s->intact[s->n] = 1;
	for (size_t i = sizeof(*h); i < len; i++)
		if (p[i] != p[sizeof(*h)])
			s->intact[s->n] = 0;
	s->n++;
}

START_TEST(reads_in_order)
{
	struct seen s = { 0 };

	memset(&meta, 0, sizeof(meta));
	head = 0;
	put(24, 1);
	put(40, 2);
	ck_assert_int_eq(perf_ring_read(&meta, data, DATA, copy, on_rec, &s), 2);
	ck_assert_int_eq(s.n, 2);
	ck_assert_uint_eq(s.sizes[1], 40);
	ck_assert_uint_eq(s.first[1], 2);
	ck_assert_uint_eq(meta.data_tail, 64);
	/* nothing new: nothing read */
	ck_assert_int_eq(perf_ring_read(&meta, data, DATA, copy, on_rec, &s), 0);
}
END_TEST

START_TEST(wraps_around)
{
	struct seen s = { 0 };

	memset(&meta, 0, sizeof(meta));
	head = 200;                 /* as if 200 bytes were read already */
	meta.data_tail = 200;
	put(48, 7);                 /* 200..248 */
	put(40, 8);                 /* 248..288: payload wraps */
	put(16, 9);                 /* 288..304 */
	ck_assert_int_eq(perf_ring_read(&meta, data, DATA, copy, on_rec, &s), 3);
	ck_assert(s.intact[0] && s.intact[1] && s.intact[2]);
	ck_assert_uint_eq(s.first[1], 8);
	ck_assert_uint_eq(meta.data_tail, 304);

	/* a header split across the end: start 4 bytes before it */
	memset(&s, 0, sizeof(s));
	head = 3 * DATA - 4;
	meta.data_tail = head;
	put(32, 5);
	ck_assert_int_eq(perf_ring_read(&meta, data, DATA, copy, on_rec, &s), 1);
	ck_assert(s.intact[0]);
	ck_assert_uint_eq(s.sizes[0], 32);
}
END_TEST

START_TEST(stops_at_garbage)
{
	struct seen s = { 0 };

	memset(&meta, 0, sizeof(meta));
	head = 0;
	put(24, 1);
	put(24, 2);
	/* corrupt the second header: size larger than what was published */
	data[24 + 6] = 0xff;
	data[24 + 7] = 0x0f;
	ck_assert_int_eq(perf_ring_read(&meta, data, DATA, copy, on_rec, &s), 1);
	ck_assert_uint_eq(meta.data_tail, 24);
}
END_TEST

static Suite *sideband_suite(void)
{
	Suite *s = suite_create("sideband");
	TCase *tc = tcase_create("ring");

	tcase_add_test(tc, reads_in_order);
	tcase_add_test(tc, wraps_around);
	tcase_add_test(tc, stops_at_garbage);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(sideband_suite)
