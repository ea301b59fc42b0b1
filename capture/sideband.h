/* sideband.h - perf dummy events that report the target's task and mapping
 * events (mmap2 with build id, comm, fork, exit) into per-CPU rings read by
 * the drain thread, as `perf record` does; without root, the sampling
 * events of perfsampler.h instead, reporting the same into the same rings.
 *   struct sideband *sb;
 *   sideband_open(&sb, SIDEBAND_COMMAND, &child, 1, NULL, 0);   // before the exec
 *   sideband_read(sb, on_record, ctx);                 // whenever epoll says
 *   sideband_close(sb);
 */
#ifndef XP_CAPTURE_SIDEBAND_H
#define XP_CAPTURE_SIDEBAND_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum sideband_mode {
	SIDEBAND_COMMAND,           /* pids[0] and its descendants (inherit) */
	SIDEBAND_ATTACH,            /* every thread of pids[], and descendants */
	SIDEBAND_SYSTEM,            /* everything */
};

struct sideband;

/* Called once per raw perf record, copied out of the ring (contiguous). */
typedef void (*sideband_fn)(void *ctx, const void *rec, size_t len);

/* sample (kept by reference; not in SIDEBAND_SYSTEM mode): the sampling
 * event, opened instead of the dummy side-band event and reporting what it
 * does, or NULL; pages: data pages per CPU ring, a power of two (0: 64);
 * switches (not in SIDEBAND_SYSTEM mode): PERF_RECORD_SWITCH records too
 * (perfswitch.h). */
int sideband_open(struct sideband **out, enum sideband_mode mode,
		  const pid_t *pids, unsigned npids,
		  const struct perf_event_attr *sample, unsigned pages, bool switches);
/* The descriptors sideband_open(mode, pids) would take now, one per
 * thread and CPU: *threads (1 for a command's tree, inherited) x *ncpus. */
unsigned long sideband_needs(enum sideband_mode mode, const pid_t *pids, unsigned npids,
			     unsigned *threads, unsigned *ncpus);
/* The ring fds, to wait on with epoll; returns how many. */
unsigned sideband_fds(const struct sideband *sb, int *fds, unsigned max);
/* Hands every record now in the rings to fn; returns records read. */
long sideband_read(struct sideband *sb, sideband_fn fn, void *ctx);
/* Inside sideband_read's fn: the CPU whose ring the record came from. */
int sideband_cpu(const struct sideband *sb);
/* Stops every event (sampling and side-band, inherited copies too): the
 * rings keep what they hold for sideband_read. */
void sideband_disable(struct sideband *sb);
void sideband_close(struct sideband *sb);

/* One perf ring: the records between data_tail and data_head, each handed
 * to fn contiguous (copied into copy, data_size bytes, when it wraps);
 * then data_tail advances. Exposed for tests/test-sideband.c. */
long perf_ring_read(void *meta_page, unsigned char *data, size_t data_size,
		    unsigned char *copy, sideband_fn fn, void *ctx);

#endif
