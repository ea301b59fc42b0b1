/* textesc.c - control characters of a run's text escaped for a terminal;
 * see textesc.h. */
#include "src/textesc.h"

#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/utf8.h"

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
	return *n == 2 && s[0] == 0xc2 && s[1] < 0xa0 ? 2 : 0;     /* C1 */
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
