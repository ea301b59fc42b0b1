/* readline.c - the bounded line reader; see readline.h. */
#include "src/readline.h"

int xp_read_line(FILE *f, char *buf, size_t cap, uint64_t *bytes, int *newline)
{
	size_t n = 0;
	int c = EOF, bad = 0;

	while ((c = getc(f)) != EOF) {
		++*bytes;
		if (newline)
			*newline = c == '\n';
		if (c == '\0' || n + 1 >= cap)
			bad = 1;
		else
			buf[n++] = (char)c;
		if (c == '\n')
			break;
	}
	buf[n] = '\0';
	if (c == EOF && n == 0 && !bad)
		return -1;
	return bad;
}
