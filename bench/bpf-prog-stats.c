/* bpf-prog-stats.c - what each loaded BPF program has cost the kernel:
 * name, runs and ns in them (kernel.bpf_stats_enabled=1 counts them; 0
 * otherwise). Plain syscalls, no libbpf, so a static binary travels to the
 * GPU machine. bench/waits-cost runs it while xpcap records.
 *   bpf-prog-stats [PREFIX]     one line a program: id name runs run_ns */
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	const char *prefix = argc > 1 ? argv[1] : "";
	union bpf_attr a;
	__u32 id = 0;

	for (;;) {
		struct bpf_prog_info info;
		int fd;

		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (bpf(BPF_PROG_GET_NEXT_ID, &a))
			return 0;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		fd = (int)bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (__u32)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (__u64)(unsigned long)&info;
		if (!bpf(BPF_OBJ_GET_INFO_BY_FD, &a) && !strncmp(info.name, prefix, strlen(prefix)))
			printf("%u %s %llu %llu\n", id, info.name, (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns);
		close(fd);
	}
}
