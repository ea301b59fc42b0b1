/* utf8.h - the one place that decides what of a name may reach an output:
 * names come from received runs (symbols, module paths, perf maps, kernel
 * names), and one invalid byte makes an SVG not well-formed and a Chrome
 * trace not JSON. Writers of JSON, XML and CSV step through text with
 * xp_utf8_seq and put U+FFFD for what it refuses; ingest stores names
 * through xp_utf8_sanitize, so the database holds valid UTF-8 only.
 *
 *   for (size_t i = 0, n; s[i]; i += n ? n : 1)
 *       if (!(n = xp_utf8_seq(s + i, len - i))) fputs(XP_UTF8_REPLACEMENT, out);
 */
#ifndef XP_UTF8_H
#define XP_UTF8_H

#include <stddef.h>
#include <stdio.h>

#define XP_UTF8_REPLACEMENT "\xef\xbf\xbd"     /* U+FFFD */

/* Bytes of the valid UTF-8 sequence that starts at s (n bytes available):
 * 1 to 4, or 0 when s[0] starts none: a stray continuation byte, an overlong
 * form, a surrogate, a code point past U+10FFFF or a noncharacter U+FFFE /
 * U+FFFF (not allowed in XML), or a sequence cut short. NUL counts as 1. */
size_t xp_utf8_seq(const char *s, size_t n);
/* Whether s (len bytes) is valid UTF-8 as xp_utf8_seq sees it. */
int xp_utf8_valid(const char *s, size_t len);
/* s (len bytes) with every byte that starts no valid sequence replaced by
 * U+FFFD, into out (cap bytes, always terminated when cap > 0; a sequence
 * that does not fit whole is left out). Returns the length written. */
size_t xp_utf8_sanitize(char *out, size_t cap, const char *s, size_t len);

/* Writes the sequence that starts at s (a NUL-terminated string, s[0] not
 * ASCII) to out, or U+FFFD when it is not valid; returns s past it. For
 * writers that escape ASCII themselves (XML, CSV). */
const char *xp_utf8_fput(FILE *out, const char *s);

#endif
