/* fuzz-perfmap.c - libFuzzer target for the JIT perf map reader
 * (ingest/perfmap.c): any text must parse, skipping bad lines, and every
 * lookup must stay inside the table, never crash, hang or over-allocate.
 *   scripts/fuzz perfmap 60
 */
// fuzz-sources: ingest/perfmap.c src/readline.c
// fuzz-seeds: fixtures/*/perf-*.map
#include <stdio.h>
#include <string.h>

#include "ingest/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_perfmap *m = NULL;
	volatile size_t sink = 0;
	const char *name;
	FILE *f;

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (xp_perfmap_parse(&m, f) == 0) {
		for (uint64_t i = 0; i < 64; i++) {
			uint64_t ip = size >= 8 ? (uint64_t)data[i % size] << (i % 56) : i;

			name = xp_perfmap_lookup(m, ip);
			sink += name ? strlen(name) : 0;
		}
		sink += xp_perfmap_count(m) + xp_perfmap_skipped(m);
	}
	xp_perfmap_free(m);
	fclose(f);
	return 0;
}
