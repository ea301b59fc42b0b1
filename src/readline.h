/* readline.h - one bounded line reader for the text files a run carries
 * (kallsyms, perf-PID.map), which are hostile input: it reads byte by byte,
 * never indexes past the buffer, and tells a line to skip from one to parse.
 *
 *   char line[1024]; uint64_t bytes = 0; int newline, got;
 *   while ((got = xp_read_line(f, line, sizeof(line), &bytes, &newline)) >= 0)
 *           if (!got) parse(line);
 */
#ifndef XP_READLINE_H
#define XP_READLINE_H

#include <stdint.h>
#include <stdio.h>

/* Reads one line (with its newline, as fgets) into buf, adding the bytes
 * read to *bytes and, when newline is not NULL, setting it to whether the
 * last byte read was a newline (0 for a line cut by the end of the file).
 * Returns 0; 1 when the line is to be skipped, its rest already read: longer
 * than buf, or with a NUL byte (which would hide the rest of the line from
 * string functions); -1 at the end. */
int xp_read_line(FILE *f, char *buf, size_t cap, uint64_t *bytes, int *newline);

#endif
