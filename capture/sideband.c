/* sideband.c - see sideband.h. One ring per CPU (64 pages by default); in
 * attach mode every thread's event on a CPU is redirected
 * (PERF_EVENT_IOC_SET_OUTPUT) into that CPU's ring, because the kernel
 * refuses to mmap an inherited per-thread event that is not bound to a
 * CPU. With the unprivileged sampler (perfsampler.h) its sampling event
 * reports the task and mapping events itself, as `perf record`'s first
 * event does: one descriptor per thread and CPU, not two. */
#include "capture/sideband.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/array.h"

#define RING_PAGES 64               /* default data pages per CPU, a power of two */
#define MAX_EXTRA_FDS (1u << 20)     /* fs.nr_open's default: RLIMIT_NOFILE says first */

struct ring {
	int fd;                     /* owns the mmap */
	void *base;                 /* metadata page, then data */
	size_t data_size;
	unsigned char *copy;        /* a wrapped record is copied here */
};

struct sideband {
	struct ring *rings;         /* per CPU */
	int ncpus;
	size_t page;
	unsigned pages;             /* data pages per ring */
	const struct perf_event_attr *sample;   /* sampling events too, or NULL */
	int reading_cpu;            /* the ring sideband_read is reading */
	int *extra;                 /* redirected events (attach mode) */
	unsigned nextra;
	size_t extra_cap;
};

static int perf_open(const struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static void attr_init(struct perf_event_attr *a, unsigned pages, bool switches)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->build_id = 1;
	/* waits without root (perfswitch.h): a record at every switch out and in */
	a->context_switch = switches;
	a->inherit = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* counts nothing; a normal user may not open it without this at paranoid 2 */
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->watermark = 1;
	a->wakeup_watermark = pages * 4096 / 4;
}

static int ring_map(struct sideband *sb, struct ring *r)
{
	size_t len = (sb->pages + 1) * sb->page;

	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	r->data_size = sb->pages * sb->page;
	r->copy = malloc(r->data_size);
	return r->copy ? 0 : -ENOMEM;
}

static int add_extra(struct sideband *sb, int fd)
{
	if (sb->nextra >= MAX_EXTRA_FDS)
		return -E2BIG;
	if (xp_array__reserve((void **)&sb->extra, &sb->extra_cap, (size_t)sb->nextra + 1,
			      sizeof(*sb->extra), 64))
		return -ENOMEM;
	sb->extra[sb->nextra++] = fd;
	return 0;
}

/* Opens a (pid, cpu) event whose records go into the CPU's ring. */
static int open_redirected(struct sideband *sb, const struct perf_event_attr *a, pid_t pid,
			   int cpu)
{
	struct ring *r = &sb->rings[cpu];
	int fd, err;

	fd = perf_open(a, pid, cpu);
	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = add_extra(sb, fd);
	if (err)
		close(fd);
	return err;
}

/* Opens the event of (pid, cpu): the ring owner if the CPU has none yet,
 * else redirected into it. ESRCH (thread gone) is not an error. */
static int open_on_cpu(struct sideband *sb, struct perf_event_attr *a, pid_t pid, int cpu)
{
	struct ring *r = &sb->rings[cpu];
	int fd;

	if (r->fd >= 0)
		return open_redirected(sb, a, pid, cpu);
	fd = perf_open(a, pid, cpu);
	if (fd < 0)
		return errno == ESRCH ? 0 : -errno;
	r->fd = fd;
	return ring_map(sb, r);
}

/* The sampling event, tracking too: the side-band flags and the ring's
 * wakeup of the dummy event t. Its sample_id trailer (TID|TIME) is the
 * dummy's, so its side-band records read the same. */
static void sample_tracking(struct perf_event_attr *t, const struct perf_event_attr *sample)
{
	struct perf_event_attr dummy = *t;

	*t = *sample;
	t->mmap = dummy.mmap;
	t->mmap2 = dummy.mmap2;
	t->comm = dummy.comm;
	t->comm_exec = dummy.comm_exec;
	t->task = dummy.task;
	t->build_id = dummy.build_id;
	t->sample_id_all = 1;
	t->watermark = dummy.watermark;
	t->context_switch = dummy.context_switch;
	t->wakeup_watermark = dummy.wakeup_watermark;
}

/* Threads of pid now (its /proc/PID/task entries); 0 when gone. */
static unsigned count_threads(pid_t pid)
{
	char path[64];
	struct dirent *de;
	unsigned n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += atoi(de->d_name) > 0;
	closedir(d);
	return n;
}

unsigned long sideband_needs(enum sideband_mode mode, const pid_t *pids, unsigned npids,
			     unsigned *threads, unsigned *ncpus)
{
	*ncpus = (unsigned)sysconf(_SC_NPROCESSORS_CONF);
	*threads = 1;
	if (mode == SIDEBAND_ATTACH) {
		*threads = 0;
		for (unsigned i = 0; i < npids; i++)
			*threads += count_threads(pids[i]);
	}
	return (unsigned long)*threads * *ncpus;
}

static int open_threads(struct sideband *sb, struct perf_event_attr *a, pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0)
			continue;
		for (int cpu = 0; !err && cpu < sb->ncpus; cpu++)
			err = open_on_cpu(sb, a, tid, cpu);
	}
	closedir(d);
	return err;
}

int sideband_open(struct sideband **out, enum sideband_mode mode,
		  const pid_t *pids, unsigned npids,
		  const struct perf_event_attr *sample, unsigned pages, bool switches)
{
	struct perf_event_attr a;
	struct sideband *sb;
	int err = 0;

	sb = calloc(1, sizeof(*sb));
	if (!sb)
		return -ENOMEM;
	*out = sb;
	sb->page = (size_t)sysconf(_SC_PAGESIZE);
	sb->pages = pages ? pages : RING_PAGES;
	sb->sample = mode == SIDEBAND_SYSTEM ? NULL : sample;
	sb->ncpus = (int)sysconf(_SC_NPROCESSORS_CONF);
	sb->rings = calloc((size_t)sb->ncpus, sizeof(*sb->rings));
	if (!sb->rings)
		return -ENOMEM;
	for (int cpu = 0; cpu < sb->ncpus; cpu++)
		sb->rings[cpu].fd = -1;
	attr_init(&a, sb->pages, switches && mode != SIDEBAND_SYSTEM);
	if (sb->sample)
		sample_tracking(&a, sb->sample);
	switch (mode) {
	case SIDEBAND_COMMAND:
		for (int cpu = 0; !err && cpu < sb->ncpus; cpu++)
			err = open_on_cpu(sb, &a, pids[0], cpu);
		break;
	case SIDEBAND_SYSTEM:
		a.inherit = 0;
		for (int cpu = 0; !err && cpu < sb->ncpus; cpu++)
			err = open_on_cpu(sb, &a, -1, cpu);
		break;
	case SIDEBAND_ATTACH:
		for (unsigned i = 0; !err && i < npids; i++)
			err = open_threads(sb, &a, pids[i]);
		break;
	}
	return err;
}

unsigned sideband_fds(const struct sideband *sb, int *fds, unsigned max)
{
	unsigned n = 0;

	for (int cpu = 0; cpu < sb->ncpus && n < max; cpu++)
		if (sb->rings[cpu].fd >= 0 && sb->rings[cpu].base)
			fds[n++] = sb->rings[cpu].fd;
	return n;
}

long perf_ring_read(void *meta_page, unsigned char *data, size_t data_size,
		    unsigned char *copy, sideband_fn fn, void *ctx)
{
	struct perf_event_mmap_page *meta = meta_page;
	uint64_t head, tail;
	long n = 0;

	/* acquire pairs with the kernel's write barrier before data_head */
	head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	tail = meta->data_tail;
	while (tail < head) {
		size_t off = (size_t)(tail % data_size);
		struct perf_event_header h;
		const void *rec;

		/* the header itself may straddle the end of the ring */
		for (size_t i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % data_size];
		if (h.size < sizeof(h) || h.size > head - tail || h.size > data_size)
			break;
		if (off + h.size <= data_size) {
			rec = data + off;
		} else {
			size_t first = data_size - off;

			memcpy(copy, data + off, first);
			memcpy(copy + first, data, h.size - first);
			rec = copy;
		}
		fn(ctx, rec, h.size);
		tail += h.size;
		n++;
	}
	/* release: the kernel may reuse the space only after we have read it */
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

long sideband_read(struct sideband *sb, sideband_fn fn, void *ctx)
{
	long n = 0;

	for (int cpu = 0; cpu < sb->ncpus; cpu++) {
		struct ring *r = &sb->rings[cpu];

		if (!r->base)
			continue;
		sb->reading_cpu = cpu;
		n += perf_ring_read(r->base, (unsigned char *)r->base + sb->page, r->data_size,
				    r->copy, fn, ctx);
	}
	return n;
}

int sideband_cpu(const struct sideband *sb)
{
	return sb->reading_cpu;
}

void sideband_disable(struct sideband *sb)
{
	if (!sb)
		return;
	for (unsigned i = 0; i < sb->nextra; i++)
		ioctl(sb->extra[i], PERF_EVENT_IOC_DISABLE, 0);
	for (int cpu = 0; sb->rings && cpu < sb->ncpus; cpu++)
		if (sb->rings[cpu].fd >= 0)
			ioctl(sb->rings[cpu].fd, PERF_EVENT_IOC_DISABLE, 0);
}

void sideband_close(struct sideband *sb)
{
	if (!sb)
		return;
	for (unsigned i = 0; i < sb->nextra; i++)
		close(sb->extra[i]);
	for (int cpu = 0; sb->rings && cpu < sb->ncpus; cpu++) {
		struct ring *r = &sb->rings[cpu];

		if (r->base)
			munmap(r->base, (sb->pages + 1) * sb->page);
		if (r->fd >= 0)
			close(r->fd);
		free(r->copy);
	}
	free(sb->rings);
	free(sb->extra);
	free(sb);
}
