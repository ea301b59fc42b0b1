/* gpuscan.h - at the end of a recording, what the injection library said
 * at its start in each process: a fatal status (another CUPTI subscriber,
 * a CUPTI error) means that process has no GPU records, and xpcap says so
 * on its last line and in meta.json rather than leave an empty GPU run.
 *   struct gpuscan s;
 *   gpuscan_run(rd.fd, &s);     // s.streams, s.fatal, s.text
 */
#ifndef XP_CAPTURE_GPUSCAN_H
#define XP_CAPTURE_GPUSCAN_H

#include <stdint.h>
#include <sys/types.h>

struct gpuscan {
	unsigned streams;               /* gpu-PID.xpr files read */
	unsigned fatal;                 /* of them, with a fatal status */
	uint32_t code;                  /* the first fatal status: enum xp_gpu_status_code */
	pid_t pid;                      /* its process */
	char text[256];                 /* its text */
};

/* Reads the first records of each gpu-*.xpr in the run directory dirfd
 * (never through a link, regular files only: the user's process wrote
 * them). 0 or -errno. */
int gpuscan_run(int dirfd, struct gpuscan *out);

#endif
