/* fuzz-meta.c - libFuzzer target for the meta.json reader that ingest uses
 * (ingest/meta.c): any byte string must load or fail with -EBADMSG and a
 * line, and a loaded document must flatten and answer lookups within its
 * bounds, never crash, hang or recurse without limit.
 *   scripts/fuzz meta 60
 */
// fuzz-sources: src/runmeta.c
// fuzz-seeds: fixtures/*/meta.json
// fuzz-libs: -ljansson
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/runmeta.h"
#include "fuzz-file.h"

/* What ingest's meta_pair does with a pair: looks at every byte of both. */
static int touch_pair(void *ctx, const char *key, const char *value)
{
	size_t *sum = ctx;
	const char *lost = strstr(key, ".lost.");

	*sum += strlen(key) + strlen(value) + (lost ? (size_t)(lost - key) : 0);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = {
		"format_version", "records.sample.written", "records.sample.lost.ringbuf_full",
		"exit.code", "", ".", "a..b", "streams.cpu.xpr.bytes",
	};
	static int fd = -1;
	static char path[64];
	volatile size_t sink = 0;
	size_t sum = 0;
	json_t *j;
	int line;

	if (fd < 0) {
		/* a real file: readers refuse links, /proc/self/fd/N included */
		fd = fuzz_file("meta", path, sizeof(path));
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (xp_meta_load(&j, path, &line))
		return 0;
	xp_meta_flatten(j, touch_pair, &sum);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		sum += (size_t)xp_meta_int(j, keys[i], 0);
	sink = sum;
	(void)sink;
	json_decref(j);
	return 0;
}
