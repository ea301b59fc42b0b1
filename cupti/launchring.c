/* launchring.c - the bounded multi-producer ring of variable-size records
 * (see launchring.h). A record's first 8 bytes say how many cells it takes,
 * its note and its length. A producer takes cells [pos, pos + k) when the last of
 * them is free for this lap: the consumer frees cells in order, so all
 * before it are too; the head's compare-and-swap gives the range to one
 * producer alone. The consumer frees every cell of a record, so that any
 * of them can be a later record's last. */
#include "cupti/launchring.h"

#include <errno.h>
#include <stdlib.h>

struct rec_head {
	uint16_t cells;                 /* a ring has fewer than 65536 */
	uint16_t note;
	uint32_t len;
};

static size_t cells_for(size_t len)
{
	return (sizeof(struct rec_head) + len + XPC_RING_CELL - 1) / XPC_RING_CELL;
}

int xpc_ring_init(struct xpc_ring *r, size_t bytes, size_t max_record)
{
	size_t cells = 64;

	while (cells * 2 * XPC_RING_CELL <= bytes)
		cells *= 2;
	r->mask = cells - 1;
	r->max_record = max_record;
	r->head = r->tail = 0;
	r->data = aligned_alloc(64, (cells + cells_for(max_record)) * XPC_RING_CELL);
	r->seq = malloc(cells * sizeof(*r->seq));
	if (!r->data || !r->seq || cells_for(max_record) > cells / 2 || cells > UINT16_MAX) {
		xpc_ring_free(r);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cells; i++)
		r->seq[i] = i;
	return 0;
}

static struct rec_head *at(const struct xpc_ring *r, uint64_t pos)
{
	return (struct rec_head *)(r->data + (pos & r->mask) * XPC_RING_CELL);
}

void *xpc_ring_reserve(struct xpc_ring *r, size_t len, uint16_t note, uint64_t *pos)
{
	return xpc_ring_reserve_spare(r, len, note, 0, pos);
}

/* spare: the cell that many past the record's last must be free for this
 * lap too (then all before it are). It is not reserved yet (it is past the
 * head), so its number is its position when free and less when not. */
void *xpc_ring_reserve_spare(struct xpc_ring *r, size_t len, uint16_t note, size_t spare,
			     uint64_t *pos)
{
	size_t k = cells_for(len);
	uint64_t p = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	struct rec_head *h;

	if (len > r->max_record || spare > r->mask / 2)
		return NULL;
	for (;;) {
		uint64_t last = p + k - 1, guard = last + spare;
		int64_t dif = (int64_t)(__atomic_load_n(&r->seq[last & r->mask], __ATOMIC_ACQUIRE) - last);

		if (dif == 0 && spare &&
		    __atomic_load_n(&r->seq[guard & r->mask], __ATOMIC_ACQUIRE) < guard)
			return NULL;            /* fewer than spare cells would stay free */
		if (dif == 0 && __atomic_compare_exchange_n(&r->head, &p, p + k, 1,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
		if (dif < 0)
			return NULL;            /* the consumer has not freed them yet */
		if (dif > 0)
			p = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	}
	h = at(r, p);
	h->cells = (uint16_t)k;
	h->note = note;
	h->len = (uint32_t)len;
	*pos = p;
	return h + 1;
}

void xpc_ring_publish(struct xpc_ring *r, uint64_t pos)
{
	const char *next = (const char *)at(r, pos + at(r, pos)->cells);

	__atomic_store_n(&r->seq[pos & r->mask], pos + 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 4; i++)
		__builtin_prefetch(next + 64 * i, 1, 3);
}

const void *xpc_ring_next(struct xpc_ring *r, size_t *len, uint16_t *note)
{
	struct rec_head *h;

	if (__atomic_load_n(&r->seq[r->tail & r->mask], __ATOMIC_ACQUIRE) != r->tail + 1)
		return NULL;
	h = at(r, r->tail);
	*len = h->len;
	*note = h->note;
	return h + 1;
}

uint64_t xpc_ring_ready(const struct xpc_ring *r)
{
	uint64_t pos = r->tail, n = 0;

	while (pos - r->tail <= r->mask &&
	       __atomic_load_n(&r->seq[pos & r->mask], __ATOMIC_ACQUIRE) == pos + 1) {
		pos += at(r, pos)->cells;
		n++;
	}
	return n;
}

void xpc_ring_release(struct xpc_ring *r)
{
	uint64_t k = at(r, r->tail)->cells;

	for (uint64_t i = 0; i < k; i++)
		__atomic_store_n(&r->seq[(r->tail + i) & r->mask], r->tail + i + r->mask + 1,
				 __ATOMIC_RELEASE);
	r->tail += k;
}

void xpc_ring_free(struct xpc_ring *r)
{
	free(r->data);
	free(r->seq);
	r->data = NULL;
	r->seq = NULL;
}
