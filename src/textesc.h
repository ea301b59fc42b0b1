/* textesc.h - text from a run, as a terminal will show it: a run's names
 * (command, host, comm, paths, symbols, kernel and Python names, warning
 * messages) are another machine's bytes, and an ESC, BEL, CR or C1 code in
 * them would set the title or clear the screen of whoever reads the
 * output. Every text output (info, ls, diff, dump, text reports, folded
 * stacks) prints such strings through xp_esc; JSON, CSV and XML writers
 * escape by their own rules.
 *
 *   printf("%-16s %s\n", xp_esc(comm), xp_esc(path));
 *
 * Escaped: C0 controls (TAB, LF and CR included: one name, one line), DEL,
 * the C1 controls U+0080-U+009F, the format characters (Unicode's Cf: bidi
 * overrides, embeddings and isolates such as U+202E, which would show a
 * name reversed; zero-width characters, the soft hyphen, tags) and the line
 * and paragraph separators U+2028/U+2029, and bytes that start no valid
 * UTF-8 sequence, each byte as \xHH (U+202E is \xe2\x80\xae). Other text is
 * left as it is.
 */
#ifndef XP_TEXTESC_H
#define XP_TEXTESC_H

#include <stddef.h>

/* s itself when it holds nothing to escape (NULL stays NULL), else its
 * escaped copy in one of XP_ESC_SLOTS per-thread buffers, valid until as
 * many more calls have escaped something: enough for one printf's
 * arguments. "(out of memory)" when no copy can be made. */
#define XP_ESC_SLOTS 16
const char *xp_esc(const char *s);
/* The same for the first n bytes of s at most (up to a NUL): a record's
 * fixed-size or counted field; always a copy in a slot. */
const char *xp_escn(const char *s, size_t n);
/* Whether s holds something xp_esc would escape. */
int xp_esc_needed(const char *s);

#endif
