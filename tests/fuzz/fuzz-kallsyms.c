/* fuzz-kallsyms.c - libFuzzer target for the kallsyms snapshot reader
 * (ingest/kallsyms.c): any text must parse, skipping bad lines, and every
 * lookup must stay inside the table, never crash, hang or over-allocate.
 *   scripts/fuzz kallsyms 60
 */
// fuzz-sources: ingest/kallsyms.c src/readline.c
#include <stdio.h>
#include <string.h>

#include "ingest/kallsyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_kallsyms *k = NULL;
	volatile size_t sink = 0;
	const char *mod, *name;
	FILE *f;

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (xp_kallsyms_parse(&k, f) == 0) {
		/* as a copy cut short, half of the time */
		if (size && data[0] & 1)
			xp_kallsyms_set_truncated(k);
		/* probe below, inside and above whatever was parsed */
		for (uint64_t ip = 0; ip < 64; ip++) {
			uint64_t at = ip << 58 | (size >= 8 ? data[ip % size] * 0x1000ull : 0);

			name = xp_kallsyms_lookup(k, at, &mod);
			sink += name ? strlen(name) + (mod ? strlen(mod) : 0) : 0;
			sink += (size_t)xp_kallsyms_beyond(k, at);
		}
		sink += xp_kallsyms_count(k) + xp_kallsyms_skipped(k) + xp_kallsyms_bytes(k) +
			(size_t)xp_kallsyms_complete(k);
	}
	xp_kallsyms_free(k);
	fclose(f);
	return 0;
}
