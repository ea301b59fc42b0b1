/* textesc.c - control and format characters of a run's text escaped for
 * a terminal; see textesc.h. */
#include "src/textesc.h"

#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/utf8.h"

/* Format characters (Unicode general category Cf, as of Unicode 15) and
 * the line and paragraph separators (Zl, Zp): invisible, yet they reorder
 * the text around them (bidi overrides, embeddings, isolates: U+202E shows
 * "exe.txt" as "txt.exe"), hide in it (zero-width, soft hyphen, tags) or
 * break a line. A terminal draws them as it likes; we show their bytes. */
static const struct { unsigned lo, hi; } invisible[] = {
	{ 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c }, { 0x6dd, 0x6dd },
	{ 0x70f, 0x70f }, { 0x890, 0x891 }, { 0x8e2, 0x8e2 }, { 0x180e, 0x180e },
	{ 0x200b, 0x200f }, { 0x2028, 0x202e }, { 0x2060, 0x206f }, { 0xfeff, 0xfeff },
	{ 0xfff9, 0xfffb }, { 0x110bd, 0x110bd }, { 0x110cd, 0x110cd },
	{ 0x13430, 0x1343f }, { 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
	{ 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
};

/* The code point of the valid sequence s of n (2 to 4) bytes. */
static unsigned code_point(const unsigned char *s, size_t n)
{
	unsigned c = s[0] & (0x7f >> n);

	for (size_t i = 1; i < n; i++)
		c = c << 6 | (s[i] & 0x3f);
	return c;
}

static int is_invisible(unsigned c)
{
	size_t lo = 0, hi = sizeof(invisible) / sizeof(invisible[0]);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c < invisible[mid].lo)
			hi = mid;
		else if (c > invisible[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* Bytes of the sequence at s to escape (0: none, keep n bytes); *n is the
 * sequence's length. */
static size_t to_escape(const unsigned char *s, size_t left, size_t *n)
{
	if (*s >= 0x20 && *s < 0x7f) {
		*n = 1;
		return 0;
	}
	*n = xp_utf8_seq((const char *)s, left);
	if (!*n) {                      /* no valid sequence starts here */
		*n = 1;
		return 1;
	}
	if (*n == 1)                    /* C0, DEL */
		return 1;
	if (*n == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 2;               /* C1 */
	return is_invisible(code_point(s, *n)) ? *n : 0;
}

int xp_esc_needed(const char *s)
{
	size_t len = s ? strlen(s) : 0, n;

	for (size_t i = 0; i < len; i += n)
		if (to_escape((const unsigned char *)s + i, len - i, &n))
			return 1;
	return 0;
}

const char *xp_esc(const char *s)
{
	if (!s || !xp_esc_needed(s))
		return s;
	return xp_escn(s, strlen(s));
}

const char *xp_escn(const char *s, size_t len)
{
	static _Thread_local char *slot[XP_ESC_SLOTS];
	static _Thread_local size_t cap[XP_ESC_SLOTS];
	static _Thread_local unsigned next;
	static const char hex[] = "0123456789abcdef";
	size_t n, k, o = 0;
	unsigned i;
	char *out;

	if (!s)
		return s;
	len = strnlen(s, len);
	i = next++ % XP_ESC_SLOTS;
	if (xp_array__reserve((void **)&slot[i], &cap[i], 4 * len + 1, 1, 64))
		return "(out of memory)";
	out = slot[i];
	for (size_t p = 0; p < len; p += n) {
		const unsigned char *c = (const unsigned char *)s + p;

		k = to_escape(c, len - p, &n);
		for (size_t b = 0; b < n; b++) {
			if (b < k) {
				out[o++] = '\\';
				out[o++] = 'x';
				out[o++] = hex[c[b] >> 4];
				out[o++] = hex[c[b] & 15];
			} else {
				out[o++] = (char)c[b];
			}
		}
	}
	out[o] = '\0';
	return out;
}
