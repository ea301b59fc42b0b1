/* procinfo.c - who wrote this GPU stream: XP_REC_GPU_PROCESS and the clock
 * pairs (XP_REC_GPU_CLOCK).
 *
 * Inside a container getpid() and CUPTI give namespace-local ids while BPF
 * sees root-namespace ids, so the NSpid line of /proc/self/status (all ids,
 * outermost first) is recorded to let the correlator join the two.
 *   xpc_write_process();          // once at init
 *   xpc_write_clock_pair(0);      // at init, and with 1 at exit
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cupti/xpcupti.h"
#include "src/jobrank.h"

/* Fills ns_pid (outermost) and the number of namespaces from NSpid. */
static void read_nspid(uint32_t *ns_pid, uint32_t *depth)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + 6, *end;
		unsigned long v;

		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		*depth = 0;
		for (;;) {
			v = strtoul(p, &end, 10);
			if (end == p)
				break;
			if (*depth == 0)
				*ns_pid = (uint32_t)v;
			(*depth)++;
			p = end;
		}
		break;
	}
	fclose(f);
}

/* The process's rank in a job, from its launcher's variables only. */
static void write_rank(uint32_t pid)
{
	struct xp_gpu_rank k;

	memset(&k, 0, sizeof(k));
	if (!xp_job_rank(getenv, &k))
		return;
	k.pid = pid;
	if (gethostname(k.host, sizeof(k.host) - 1))
		k.host[0] = '\0';
	xpc_emit(NULL, XP_REC_GPU_RANK, &k, sizeof(k), NULL, 0);
}

void xpc_write_process(void)
{
	struct xp_gpu_process r;
	char exe[4096];
	ssize_t n;
	int (*driver_version)(int *);
	int v = 0;

	memset(&r, 0, sizeof(r));
	r.ts = xpc_now();
	r.pid = (uint32_t)getpid();
	r.ns_pid = r.pid;
	r.ns_depth = 1;
	read_nspid(&r.ns_pid, &r.ns_depth);
	r.ppid = (uint32_t)getppid();
	r.init_tid = (uint32_t)syscall(SYS_gettid);
	cuptiGetVersion(&r.cupti_version);
	/* libcuda is loaded (we run inside cuInit); the library links only
	 * libcupti, so look the symbol up instead of linking -lcuda. PyTorch
	 * loads libcuda RTLD_LOCAL, out of RTLD_DEFAULT's reach: ask for the
	 * loaded copy by name then. cuDriverGetVersion needs no initialized driver. */
	*(void **)&driver_version = dlsym(RTLD_DEFAULT, "cuDriverGetVersion");
	if (!driver_version) {
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (cuda) {
			*(void **)&driver_version = dlsym(cuda, "cuDriverGetVersion");
			dlclose(cuda);   /* drops only our reference: it stays loaded */
		}
	}
	if (driver_version && driver_version(&v) == 0)
		r.driver_version = (uint32_t)v;
	r.cuda_version = CUDA_VERSION;
	r.clock_method = xpc.clock_method;
	r.flags = xpc.proc_flags;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		pthread_mutex_lock(&xpc.conv_lock);
		xp_conv_string(&xpc.conv, exe, &r.exe_name);
		xpc_stage_flush();
		pthread_mutex_unlock(&xpc.conv_lock);
	}
	xpc_emit(NULL, XP_REC_GPU_PROCESS, &r, sizeof(r), NULL, 0);
	write_rank(r.pid);
}

/* The tightest of a few brackets: with the timestamp callback in place the
 * three values agree to ~100 ns; without it this pair gives the offset. */
void xpc_write_clock_pair(uint32_t when)
{
	struct xp_gpu_clock best, cur;

	memset(&best, 0, sizeof(best));
	for (int i = 0; i < 50; i++) {
		memset(&cur, 0, sizeof(cur));
		cur.mono_before = xpc_now();
		if (cuptiGetTimestamp(&cur.cupti_ts) != CUPTI_SUCCESS)
			return;
		cur.mono_after = xpc_now();
		if (i == 0 || cur.mono_after - cur.mono_before < best.mono_after - best.mono_before)
			best = cur;
	}
	best.when = when;
	xpc_emit(NULL, XP_REC_GPU_CLOCK, &best, sizeof(best), NULL, 0);
}
