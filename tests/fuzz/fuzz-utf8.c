/* fuzz-utf8.c - libFuzzer target for the sanitizer of names (src/utf8.c):
 * whatever the bytes, what it writes is valid UTF-8, bounded by the room
 * given, and valid input comes out unchanged.
 *   scripts/fuzz utf8 60
 */
// fuzz-sources: src/utf8.c
// fuzz-seeds: tests/fuzz/corpus/kallsyms/*
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	size_t cap = 3 * size + 1, room, n;
	char *out = malloc(cap);
	FILE *f;
	char *buf = NULL;
	size_t len = 0;

	if (!out)
		return 0;
	n = xp_utf8_sanitize(out, cap, s, size);
	if (n >= cap || out[n] || !xp_utf8_valid(out, n))
		abort();
	if (xp_utf8_valid(s, size) && (n != size || memcmp(out, s, size)))
		abort();
	/* a short buffer: a prefix of the whole, still valid */
	room = size ? data[0] % (cap + 1) : 0;
	if (room) {
		char *part = malloc(room);

		if (part) {
			size_t m = xp_utf8_sanitize(part, room, s, size);

			if (m >= room || !xp_utf8_valid(part, m) || memcmp(part, out, m))
				abort();
			free(part);
		}
	}
	/* the stdio writer agrees (on the text up to the first NUL) */
	f = open_memstream(&buf, &len);
	if (f) {
		char *z = strndup(s, size);

		for (const char *p = z; p && *p;) {
			if ((unsigned char)*p < 0x80)
				fputc(*p++, f);
			else
				p = xp_utf8_fput(f, p);
		}
		fclose(f);
		if (!xp_utf8_valid(buf, len))
			abort();
		free(z);
		free(buf);
	}
	free(out);
	return 0;
}
