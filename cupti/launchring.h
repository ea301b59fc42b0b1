/* launchring.h - a bounded ring of variable-size records, many producers
 * (launching threads, never a lock, never a wait) and one consumer (the
 * writer thread), in order of reservation.
 *
 * The memory is cut into cells; a record takes as many consecutive cells
 * as it needs, so a launch that names an earlier copy (some hundred bytes)
 * takes one, a full stack copy some KiB takes a few, and the ring holds
 * thousands of the first where fixed slots sized for the largest held a
 * few hundred. Each cell has a sequence number, as in D. Vyukov's bounded
 * queue, in an array of its own (a record's bytes run over the cells it
 * spans); a record that runs past the last cell goes on into spare memory
 * after it, so every record is contiguous.
 *
 *   struct xpc_ring r;
 *   xpc_ring_init(&r, 8 << 20, 70000);          // bytes, largest record
 *   void *p = xpc_ring_reserve(&r, len, note, &pos);   // NULL: full (drop, count)
 *   ... fill p ...; xpc_ring_publish(&r, pos);
 *   while ((p = xpc_ring_next(&r, &len, &note))) { ... write it ...; xpc_ring_release(&r); }
 */
#ifndef XPCUPTI_LAUNCHRING_H
#define XPCUPTI_LAUNCHRING_H

#include <stddef.h>
#include <stdint.h>

#define XPC_RING_CELL 256u              /* bytes a cell, header included */

struct xpc_ring {
	unsigned char *data;            /* cells, then spare room for the last record */
	uint64_t *seq;                  /* per cell: == position, free; position + 1, ready */
	uint64_t mask;                  /* cells - 1 */
	size_t max_record;
	_Alignas(64) uint64_t head;     /* atomic: next position to reserve */
	_Alignas(64) uint64_t tail;     /* the consumer's: next position to read */
};

/* About bytes of cells (a power of two of them), records up to max_record
 * bytes. 0 or -ENOMEM. */
int xpc_ring_init(struct xpc_ring *r, size_t bytes, size_t max_record);
/* Room for len bytes (8-byte aligned, len <= max_record), or NULL when
 * the ring is full; note, 16 bits the consumer gets with them (kept in
 * the ring's own header: a caller's header would cost each record 8 bytes
 * more). *pos goes to xpc_ring_publish. */
void *xpc_ring_reserve(struct xpc_ring *r, size_t len, uint16_t note, uint64_t *pos);
/* The same, or NULL unless spare cells (at most half the ring) would stay
 * free after the record: room kept for the small records that must get in
 * when the large ones do not. */
void *xpc_ring_reserve_spare(struct xpc_ring *r, size_t len, uint16_t note, size_t spare,
			     uint64_t *pos);
/* The record at pos is whole: the consumer may take it. Asks for the
 * next record's first lines meanwhile (the writer thread had them last). */
void xpc_ring_publish(struct xpc_ring *r, uint64_t pos);
/* Consumer: the oldest record if it is published (its length in *len,
 * its note in *note), else NULL; xpc_ring_release then frees it. */
const void *xpc_ring_next(struct xpc_ring *r, size_t *len, uint16_t *note);
void xpc_ring_release(struct xpc_ring *r);
/* Consumer: how many records from the oldest on are published now (all
 * of them whole before this call: what xpc_ring_next will give). */
uint64_t xpc_ring_ready(const struct xpc_ring *r);
/* Frees the memory of a ring that no producer can reach any more. */
void xpc_ring_free(struct xpc_ring *r);

#endif
