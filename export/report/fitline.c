/* fitline.c - a text row too wide for the terminal, cut inside its last
 * field rather than at its end (report_priv.h): the last field is what
 * tells rows apart (a launch site's bucket number, a kernel's own name
 * after its namespaces), so its leading namespaces go first, then its
 * middle; its end stays. */
#include "export/report/report_priv.h"

#include <string.h>

static unsigned columns(const char *s, size_t n)
{
	unsigned c = 0;

	for (size_t i = 0; i < n && s[i]; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

/* Bytes of the last cols columns of s. */
static size_t tail_bytes(const char *s, unsigned cols)
{
	size_t n = strlen(s), i = n;

	while (i > 0 && cols > 0) {
		i--;
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cols--;
	}
	return n - i;
}

static int put(char *out, size_t len, const char *line, size_t head, const char *mark,
	       const char *tail)
{
	int n = snprintf(out, len, "%.*s%s%s", (int)head, line, mark, tail);

	return n > 0 && (size_t)n < len;
}

int xp_rep_fit_last_field(const char *line, unsigned width, char *out, size_t len)
{
	const char *f = NULL, *p, *own = NULL;
	unsigned room, h;
	int depth = 0, cut;

	for (p = line; (p = strstr(p, "  ")); p++)
		if (p[2] && p[2] != ' ')
			f = p + 2;
	if (!f || strstr(f, " <- ") || strspn(line, " ") >= (size_t)(f - line - 2))
		return 0;   /* a stack keeps its leaf first, a name alone its head */
	if (!strncmp(f, "\u2039 ", 4))
		f += 4;
	if (width < columns(line, (size_t)(f - line)) + 16)
		return 0;
	room = width - columns(line, (size_t)(f - line));
	/* the namespaces a name starts with, fewest first; at the least the
	 * name's own head */
	for (p = f; *p && !(depth == 0 && *p == ' '); p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth)
			depth--;
		else if (!depth && p[0] == ':' && p[1] == ':') {
			if (columns(p + 2, (size_t)-1) + 3 <= room)
				return put(out, len, line, (size_t)(f - line), "\u2026::", p + 2);
			own = p + 2;
		}
	}
	if (own) {
		int n = snprintf(out, len, "%.*s\u2026::%.*s\u2026", (int)(f - line), line,
				 (int)xp_rep_fit_bytes(own, room - 5, &cut), own);

		return n > 0 && (size_t)n < len;
	}
	/* else its head and its end */
	h = (room - 1) / 3;
	return put(out, len, line, (size_t)(f - line) + xp_rep_fit_bytes(f, h, &cut), "\u2026",
		   f + strlen(f) - tail_bytes(f, room - 1 - h));
}
