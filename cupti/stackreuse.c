/* stackreuse.c - launches that name an earlier launch's native stack (see
 * stackreuse.h). Each thread keeps its own table of keys, so a borrowed
 * id always names a copy that the same thread put in the ring earlier
 * (the writer keeps the ring's order), and no launch takes a lock. */
#include "cupti/stackreuse.h"
#include "src/marker.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "src/u64map.h"                     /* xp_hash64 */

#define TABLE_SLOTS 1024u               /* keys a thread remembers (more: copied again) */
#define PROBES 8

struct reuse_slot {
	uint64_t key;                   /* 0: free */
	uint32_t id;
	uint32_t uses;                  /* launches of the key since its last copy */
};

static int enabled;
static uint32_t next_id;                /* atomic */
static pthread_key_t table_key;
static __thread struct reuse_slot *table;
static __thread int table_failed;

/* At thread exit; a CUDA call from a later destructor then copies. */
static void table_free(void *t)
{
	free(t);
	table = NULL;
	table_failed = 1;
}

void xpc_reuse_start(void)
{
	const char *v = getenv(XP_ENV_STACK_REUSE);

	enabled = !(v && !strcmp(v, "0")) && pthread_key_create(&table_key, table_free) == 0;
}

/* The 128-bit product's halves folded: a strong function of both words. */
static uint64_t mum(uint64_t a, uint64_t b)
{
	__uint128_t p = (__uint128_t)a * b;

	return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* Sums mum of each 16-byte block with keys of its place (*at counts the
 * blocks): the blocks' products are independent, so they run side by
 * side, where a chain of multiplies (a block's mix waiting for the one
 * before) took a launch some 60 ns over its few hundred bytes. The tail
 * is zero-padded; the caller mixes in the length. */
static uint64_t block(const uint64_t w[2], uint64_t at)
{
	return mum(w[0] ^ (0xa0761d6478bd642full + at * 0xe7037ed1a0b428dbull),
		   w[1] ^ (0x8ebc6af09c88c6e3ull + at * 0x589965cc75374cc3ull));
}

static uint64_t sum_blocks(const unsigned char *p, size_t n, uint64_t *at)
{
	uint64_t w[2], sum = 0;
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		memcpy(w, p + i, 16);
		sum += block(w, (*at)++);
	}
	if (i < n) {
		w[0] = w[1] = 0;
		memcpy(w, p + i, n - i);
		sum += block(w, (*at)++);
	}
	return sum;
}

uint64_t xpc_reuse_key(uint32_t cbid, const char *symbol, uint64_t depth,
		       const void *pystack, uint32_t pylen)
{
	uint64_t at = 0, sum, k;
	size_t slen = symbol ? strlen(symbol) : 0;

	if (!enabled || !pylen)
		return 0;
	/* the Python frames as recorded (the header's per-launch fields
	 * skipped by the caller: pystack starts at the first frame), then the
	 * kernel's name, not its pointer: CUPTI may hand the same buffer */
	sum = sum_blocks(pystack, pylen, &at);
	sum += sum_blocks((const unsigned char *)symbol, slen, &at);
	/* the lengths say where the frames end and the name begins */
	k = xp_hash64(xp_hash64(sum ^ (cbid | (uint64_t)pylen << 32 | (uint64_t)slen << 48)) ^ depth);
	return k ? k : 1;
}

static struct reuse_slot *my_table(void)
{
	struct reuse_slot *t = table;

	if (t || table_failed)
		return t;
	table = calloc(TABLE_SLOTS, sizeof(*table));
	if (!table || pthread_setspecific(table_key, table)) {
		free(table);
		table = NULL;
		table_failed = 1;
	}
	return table;
}

/* Among the probes for key at, the entry holding key (0: a free one), or NULL. */
static struct reuse_slot *probe(struct reuse_slot *t, uint64_t at, uint64_t key)
{
	for (unsigned i = 0; i < PROBES; i++)
		if (t[(at + i) & (TABLE_SLOTS - 1)].key == key)
			return &t[(at + i) & (TABLE_SLOTS - 1)];
	return NULL;
}

void xpc_reuse_dropped(uint64_t key)
{
	struct reuse_slot *e = key && table ? probe(table, key, key) : NULL;

	if (e && e->uses == 0)
		e->key = 0;             /* its first copy is the one dropped */
}

enum xpc_reuse_what xpc_reuse_decide(uint64_t key, uint32_t *id)
{
	struct reuse_slot *t, *e;

	if (!key || !(t = my_table()))
		return XPC_REUSE_OFF;
	if ((e = probe(t, key, key))) {
		uint32_t u = ++e->uses;

		*id = e->id;
		/* checks: soon after the first (an interpreter that specializes
		 * the call changes its C frames after a few runs), then every
		 * XPC_REUSE_CHECK_EVERY */
		if (u % XPC_REUSE_CHECK_EVERY == 0 || (u < XPC_REUSE_CHECK_EVERY && !(u & (u - 1))))
			return XPC_REUSE_COPY;
		return XPC_REUSE_BORROW;
	}
	if (!(e = probe(t, key, 0)))
		e = &t[key & (TABLE_SLOTS - 1)];        /* all taken: the first probe goes */
	e->key = key;
	e->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	e->uses = 0;
	*id = e->id;
	return XPC_REUSE_COPY;
}
