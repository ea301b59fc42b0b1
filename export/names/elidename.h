/* elidename.h - C++ names a person can read in a terminal: template
 * arguments become <…>,
 * parameter lists (), a return type, " const" and "[clone .isra.0]" go.
 * Namespaces, lambdas' numbers and "(anonymous namespace)" stay, so two
 * functions keep two names (nsys's shortName, xp_short_name in ingest, keeps
 * the base name alone: "call" for every at::_ops::*::call). Text output only:
 * csv and json keep the full name.
 *
 *   char s[256];
 *   xp_elide_name("void at::native::k<float, 4>(int, float*)", s, sizeof(s));
 *   // "at::native::k<…>()"
 */
#ifndef XP_ELIDENAME_H
#define XP_ELIDENAME_H

#include <stddef.h>

/* Writes the short form of name into out (always NUL-terminated, cut at len). */
void xp_elide_name(const char *name, char *out, size_t len);

#endif
