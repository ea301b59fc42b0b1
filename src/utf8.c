/* utf8.c - UTF-8 validation and repair for names from received runs; see
 * utf8.h. By the table of well-formed sequences in Unicode 15, 3.9 (D92). */
#include "src/utf8.h"

#include <string.h>

size_t xp_utf8_seq(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len;

	if (n == 0)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;           /* continuation, overlong 2-byte, past U+10FFFF */
	len = s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : 4;
	if (s[0] == 0xe0)
		lo = 0xa0;          /* overlong 3-byte */
	else if (s[0] == 0xed)
		hi = 0x9f;          /* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;          /* overlong 4-byte */
	else if (s[0] == 0xf4)
		hi = 0x8f;          /* past U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	/* U+FFFE and U+FFFF: EF BF BE, EF BF BF */
	if (len == 3 && s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe)
		return 0;
	return len;
}

int xp_utf8_valid(const char *s, size_t len)
{
	for (size_t i = 0, n; i < len; i += n) {
		if ((unsigned char)s[i] < 0x80) {
			n = 1;
			continue;
		}
		if (!(n = xp_utf8_seq(s + i, len - i)))
			return 0;
	}
	return 1;
}

size_t xp_utf8_sanitize(char *out, size_t cap, const char *s, size_t len)
{
	size_t o = 0;

	if (cap == 0)
		return 0;
	for (size_t i = 0, n; i < len; i += n ? n : 1) {
		const char *src = s + i;
		size_t k;

		n = xp_utf8_seq(s + i, len - i);
		k = n;
		if (!n) {
			src = XP_UTF8_REPLACEMENT;
			k = 3;
		}
		if (o + k >= cap)
			break;
		memcpy(out + o, src, k);
		o += k;
	}
	out[o] = '\0';
	return o;
}

const char *xp_utf8_fput(FILE *out, const char *s)
{
	size_t n = xp_utf8_seq(s, strnlen(s, 4));

	if (!n) {
		fputs(XP_UTF8_REPLACEMENT, out);
		return s + 1;
	}
	fwrite(s, 1, n, out);
	return s + n;
}
