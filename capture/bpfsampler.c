/* bpfsampler.c - loads the sampler.bpf.c skeleton, attaches the process
 * tree tracepoints, opens one cpu-clock perf event per CPU carrying the
 * sampling program, and the marker uprobe. See bpfsampler.h for usage.
 * Cleanup is the skeleton's: destroying it detaches every link. The
 * marker's uprobe is the exception: closing it waits on the kernel's grace
 * periods (tens of ms), so it goes on a thread of its own as recording
 * stops, beside the end of the run, and is joined at close. */
#include "capture/bpfsampler.h"

#include <errno.h>
#include <linux/capability.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "src/marker.h"
#include "capture/sampler.skel.h"
#include "capture/uprobemulti.h"

struct xp_sampler {
	struct sampler_bpf *skel;
	int ncpus;
	int *perf_fds;              /* per CPU, -1 where none */
	struct bpf_link **perf_links;
	struct bpf_link *marker;    /* as a perf event (kernels before 6.6) */
	int marker_fd;              /* as a uprobe_multi link, or -1 */
	bool marker_multi;          /* xp_marker loaded for a uprobe_multi link */
	/* the marker being detached on its own thread (detach_marker) */
	pthread_t detacher;
	bool detaching;
	struct bpf_link *detach_link;
	int detach_fd;
	enum xp_sampler_step failed;
};

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool cap_effective(const struct __user_cap_data_struct d[2], int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

bool xp_sampler__permitted(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &h, d))
		return false;
	return cap_effective(d, CAP_BPF) && cap_effective(d, CAP_PERFMON);
}

/* The default: SAMPLER_RINGBUF_BYTES, or 1 MiB per CPU on big machines
 * (a power of two). */
static __u32 default_ringbuf_bytes(void)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 want = ncpus > 0 ? (__u32)ncpus << 20 : 0, size = SAMPLER_RINGBUF_BYTES;

	while (size < want && size < (1u << 30))
		size <<= 1;
	return size;
}

/* Dwarf mode sizes, and the scratch slots they need (none otherwise). */
static int set_copy_sizes(struct sampler_bpf *skel, const struct xp_sampler_config *c)
{
	uint32_t sample = c->sample_copy, launch = c->launch_copy;
	uint32_t sw = c->off_cpu ? sample : 0;
	int ncpus = libbpf_num_possible_cpus();

	if (sample > SAMPLER_MAX_COPY || launch > SAMPLER_MAX_COPY || (sample | launch) % 8)
		return -EINVAL;
	if (sw > SAMPLER_OFFCPU_MAX_COPY)
		sw = SAMPLER_OFFCPU_MAX_COPY;
	skel->rodata->sample_copy = sample;
	skel->rodata->launch_copy = launch;
	skel->rodata->switch_copy = sw;
	if (!sample && !launch)
		return 0;
	if (ncpus <= 0)
		return ncpus ? ncpus : -ENODEV;
	return bpf_map__set_max_entries(skel->maps.scratch, (uint32_t)ncpus * SAMPLER_SLOT_N);
}

int xp_sampler__open(struct xp_sampler **out, const struct xp_sampler_config *c)
{
	uint32_t ring_bytes;
	struct xp_sampler *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->marker_fd = s->detach_fd = -1;
	*out = s;
	s->failed = SAMPLER_STEP_LOAD;
	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		goto cleanup;
	}
	/* room for ~0.1 s of samples at 999 Hz on every CPU between drains */
	ring_bytes = c->ring_bytes ? c->ring_bytes : default_ringbuf_bytes();
	err = bpf_map__set_max_entries(s->skel->maps.events, ring_bytes);
	if (err)
		goto cleanup;
	s->skel->rodata->wakeup_bytes = ring_bytes / 4;
	s->skel->rodata->filter_tgids = c->filter;
	s->skel->rodata->period_ns = c->freq ? 1000000000u / c->freq : 0;
	s->skel->rodata->offcpu_min_ns = c->offcpu_min_ns;
	s->skel->rodata->switch_kernel = !c->offcpu_user_only;
	s->skel->rodata->protect = !c->record_privileged;
	s->skel->rodata->owner_only = c->owner_only;
	s->skel->rodata->owner_uid = c->owner_uid;
	s->skel->rodata->owner_gid = c->owner_gid;
	err = set_copy_sizes(s->skel, c);
	if (err)
		goto cleanup;
	/* maps xpcap will not use cost their zeroed pages all the same (5 MiB
	 * each, 5-10 ms of CPU to allocate): the verdicts are for runs
	 * under sudo, the tracked set for runs of a command or -p */
	if (!c->owner_only)
		err = bpf_map__set_max_entries(s->skel->maps.verdicts, SAMPLER_FEW_ENTRIES);
	if (!err && !c->filter)
		err = bpf_map__set_max_entries(s->skel->maps.tgids, SAMPLER_FEW_ENTRIES);
	if (err)
		goto cleanup;
	/* not even loaded without --off-cpu: sched_switch is the hottest tracepoint */
	bpf_program__set_autoload(s->skel->progs.xp_switch, c->off_cpu);
	/* a uprobe_multi link where the kernel has them: detached much faster */
	s->marker_multi = uprobe_multi_supported() &&
		!bpf_program__set_expected_attach_type(s->skel->progs.xp_marker,
			(enum bpf_attach_type)XP_BPF_TRACE_UPROBE_MULTI);
	err = sampler_bpf__load(s->skel);
	if (err)
		goto cleanup;
	s->failed = SAMPLER_STEP_ATTACH;
	s->skel->links.xp_fork = bpf_program__attach(s->skel->progs.xp_fork);
	s->skel->links.xp_exit = bpf_program__attach(s->skel->progs.xp_exit);
	s->skel->links.xp_exec = bpf_program__attach(s->skel->progs.xp_exec);
	if (!s->skel->links.xp_fork || !s->skel->links.xp_exit || !s->skel->links.xp_exec) {
		err = -errno;
		goto cleanup;
	}
	if (c->off_cpu) {
		s->failed = SAMPLER_STEP_OFFCPU;
		s->skel->links.xp_switch = bpf_program__attach(s->skel->progs.xp_switch);
		if (!s->skel->links.xp_switch) {
			err = -errno;
			goto cleanup;
		}
	}
	s->failed = SAMPLER_STEP_NONE;
	return 0;
cleanup:
	return err ? err : -EINVAL;
}

int xp_sampler__track(struct xp_sampler *s, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 one = 1;

	return bpf_map__update_elem(s->skel->maps.tgids, &key, sizeof(key), &one,
				    sizeof(one), BPF_ANY);
}

bool xp_sampler__owner_only(const struct xp_sampler *s, uint32_t *uid, uint32_t *gid)
{
	*uid = s->skel->rodata->owner_uid;
	*gid = s->skel->rodata->owner_gid;
	return s->skel->rodata->owner_only;
}

int xp_sampler__verdict(const struct xp_sampler *s, pid_t tgid)
{
	__u32 key = (__u32)tgid;
	__u8 v;

	if (bpf_map__lookup_elem(s->skel->maps.verdicts, &key, sizeof(key), &v, sizeof(v), 0))
		return -ENOENT;
	return v != 0;
}

int xp_sampler__set_verdict(struct xp_sampler *s, pid_t tgid, bool denied)
{
	__u32 key = (__u32)tgid;
	__u8 v = denied;

	return bpf_map__update_elem(s->skel->maps.verdicts, &key, sizeof(key), &v, sizeof(v),
				    BPF_NOEXIST);
}

int xp_sampler__start(struct xp_sampler *s, unsigned freq)
{
	struct perf_event_attr attr;
	int opened = 0, err = 0;

	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return s->ncpus ? s->ncpus : -ENODEV;
	s->perf_fds = calloc((size_t)s->ncpus, sizeof(*s->perf_fds));
	s->perf_links = calloc((size_t)s->ncpus, sizeof(*s->perf_links));
	if (!s->perf_fds || !s->perf_links)
		return -ENOMEM;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = freq;
	s->failed = SAMPLER_STEP_PERF;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		s->perf_fds[cpu] = perf_event_open(&attr, -1, cpu);
		if (s->perf_fds[cpu] < 0) {
			/* possible but offline CPUs have nothing to sample */
			if (errno == ENODEV)
				continue;
			err = -errno;
			goto cleanup;
		}
		s->perf_links[cpu] = bpf_program__attach_perf_event(s->skel->progs.xp_sample_cpu,
								    s->perf_fds[cpu]);
		if (!s->perf_links[cpu]) {
			err = -errno;
			goto cleanup;
		}
		opened++;
	}
	if (!opened) {
		err = -ENODEV;
		goto cleanup;
	}
	s->failed = SAMPLER_STEP_NONE;
cleanup:
	return err;
}

/* fd: the injection library, opened by capture/cuptilib.c (as the sudo
 * user for their --cupti-lib): libbpf is handed "/proc/self/fd/N", so it
 * attaches to that very file whatever its path names now. */
int xp_sampler__attach_marker(struct xp_sampler *s, int fd)
{
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .func_name = XP_MARKER_SYMBOL, .retprobe = false);
	char self[64];
	int err = 0;

	if (s->marker_multi) {
		s->marker_fd = uprobe_multi_attach(bpf_program__fd(s->skel->progs.xp_marker), fd,
						   XP_MARKER_SYMBOL);
		err = s->marker_fd < 0 ? s->marker_fd : 0;
	} else {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		s->marker = bpf_program__attach_uprobe_opts(s->skel->progs.xp_marker, -1, self, 0,
							    &opts);
		if (!s->marker)
			err = -errno ? -errno : -EINVAL;
	}
	if (err)
		s->failed = SAMPLER_STEP_UPROBE;
	return err;
}

int xp_sampler__events_fd(const struct xp_sampler *s)
{
	return bpf_map__fd(s->skel->maps.events);
}

/* Counters from..to-1 of the per-CPU array, summed over CPUs. */
static int sum_counters(const struct xp_sampler *s, __u32 from, __u32 to, uint64_t *out)
{
	int ncpus = libbpf_num_possible_cpus();
	uint64_t *vals;
	int err = 0;

	if (ncpus <= 0)
		return -ENODEV;
	vals = calloc((size_t)ncpus, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	for (__u32 i = from; i < to; i++, out++) {
		*out = 0;
		err = bpf_map__lookup_elem(s->skel->maps.losses, &i, sizeof(i), vals,
					   sizeof(*vals) * (size_t)ncpus, 0);
		if (err)
			goto cleanup;
		for (int c = 0; c < ncpus; c++)
			*out += vals[c];
	}
cleanup:
	free(vals);
	return err;
}

int xp_sampler__losses(const struct xp_sampler *s, uint64_t out[SAMPLER_LOSS_N])
{
	return sum_counters(s, 0, SAMPLER_LOSS_N, out);
}

int xp_sampler__seen(const struct xp_sampler *s, uint64_t *out)
{
	return sum_counters(s, SAMPLER_SEEN_SAMPLE, SAMPLER_SEEN_SAMPLE + 1, out);
}

enum xp_sampler_step xp_sampler__failed_step(const struct xp_sampler *s)
{
	return s ? s->failed : SAMPLER_STEP_LOAD;
}

static void *detach_marker(void *arg)
{
	struct xp_sampler *s = arg;

	bpf_link__destroy(s->detach_link);
	if (s->detach_fd >= 0)
		close(s->detach_fd);
	return NULL;
}

/* The marker off at once (its program returns from here on), its uprobe
 * detached on a thread; where none can start, now. */
static void stop_marker(struct xp_sampler *s)
{
	if (s->skel && s->skel->bss)
		__atomic_store_n(&s->skel->bss->marker_off, 1, __ATOMIC_SEQ_CST);
	if (s->detaching || (!s->marker && s->marker_fd < 0))
		return;
	s->detach_link = s->marker;
	s->detach_fd = s->marker_fd;
	s->marker = NULL;
	s->marker_fd = -1;
	s->detaching = !pthread_create(&s->detacher, NULL, detach_marker, s);
	if (!s->detaching)
		detach_marker(s);
}

void xp_sampler__stop(struct xp_sampler *s)
{
	if (!s)
		return;
	stop_marker(s);
	/* a perf link owns its event fd and closes it when destroyed */
	for (int cpu = 0; s->perf_fds && s->perf_links && cpu < s->ncpus; cpu++) {
		if (s->perf_links[cpu])
			bpf_link__destroy(s->perf_links[cpu]);
		else if (s->perf_fds[cpu] > 0)
			close(s->perf_fds[cpu]);
		s->perf_links[cpu] = NULL;
		s->perf_fds[cpu] = -1;
	}
	if (s->skel)
		sampler_bpf__detach(s->skel);
}

void xp_sampler__close(struct xp_sampler *s)
{
	if (!s)
		return;
	xp_sampler__stop(s);
	if (s->detaching)
		pthread_join(s->detacher, NULL);
	sampler_bpf__destroy(s->skel);
	free(s->perf_fds);
	free(s->perf_links);
	free(s);
}
