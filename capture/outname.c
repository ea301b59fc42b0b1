/* outname.c - -o patterns: %h, %r, %p, %% (outname.h). */
#include "capture/outname.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/jobrank.h"

int xp_output_expand(const char *pattern, char *(*get)(const char *), char *out, size_t len,
		     char *err, size_t errlen)
{
	size_t used = 0;

	for (const char *p = pattern; *p; p++) {
		char piece[256];

		if (*p != '%') {
			piece[0] = *p;
			piece[1] = '\0';
		} else if (p[1] == '%') {
			snprintf(piece, sizeof(piece), "%%");
			p++;
		} else if (p[1] == 'p') {
			snprintf(piece, sizeof(piece), "%ld", (long)getpid());
			p++;
		} else if (p[1] == 'h') {
			if (gethostname(piece, sizeof(piece) - 1)) {
				snprintf(err, errlen, "-o %s: %%h: cannot read the host name", pattern);
				return -1;
			}
			piece[sizeof(piece) - 1] = '\0';
			piece[strcspn(piece, ".")] = '\0';
			p++;
		} else if (p[1] == 'r') {
			struct xp_gpu_rank r;

			if (!xp_job_rank(get, &r)) {
				snprintf(err, errlen, "-o %s: %%r: no rank in the environment (RANK,"
					 " SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK)", pattern);
				return -1;
			}
			snprintf(piece, sizeof(piece), "%d", r.rank);
			p++;
		} else {
			snprintf(err, errlen, "-o %s: %%%c: expected %%h (host), %%r (rank), %%p (pid)"
				 " or %%%%", pattern, p[1] ? p[1] : ' ');
			return -1;
		}
		/* a host name with a slash would name another directory */
		if (p[0] != '/' && piece[0] && strchr(piece, '/')) {
			snprintf(err, errlen, "-o %s: the host name %s holds a '/'", pattern, piece);
			return -1;
		}
		if (used + strlen(piece) + 1 > len) {
			snprintf(err, errlen, "-o %s: the expanded path is too long", pattern);
			return -1;
		}
		memcpy(out + used, piece, strlen(piece) + 1);
		used += strlen(piece);
	}
	if (!used) {
		snprintf(err, errlen, "-o: empty");
		return -1;
	}
	return 0;
}
