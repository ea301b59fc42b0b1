/* pyprivs.c - the Python frame reader's thread gives up what the samplers
 * would not use (pyprivs.h). Raw system calls, not glibc's process-wide
 * set*id: only this thread changes. */
#include "capture/pyprivs.h"

#include <stdint.h>
#include <stdio.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Root for root: CAP_SYS_PTRACE leaves this thread's effective set, so the
 * kernel refuses it what the samplers drop: a process that is not
 * dumpable, or of another user. It stays permitted: the check that a
 * target has no capability the reader lacks reads that. */
static int drop_ptrace_cap(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	for (int i = 0; i < 2; i++) {
		uint32_t bit = i == CAP_TO_INDEX(CAP_SYS_PTRACE) ? CAP_TO_MASK(CAP_SYS_PTRACE) : 0;

		d[i].effective &= ~bit;
	}
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

int pyreader_become_user(uid_t uid, gid_t gid, bool record_privileged, char *mode, size_t len)
{
	int err = 0;

	if (geteuid() == 0 && uid == 0 && !record_privileged)
		err = drop_ptrace_cap();
	if (geteuid() != 0 || uid == 0) {
		snprintf(mode, len, "read by xpcap with process_vm_readv as uid %u",
			 (unsigned)geteuid());
		return err;
	}
	if (syscall(SYS_setgroups, 0, NULL) || syscall(SYS_setresgid, gid, gid, gid) ||
	    syscall(SYS_setresuid, uid, uid, uid))
		err = -1;
	snprintf(mode, len, "read by xpcap with process_vm_readv as uid %u (the invoking user)",
		 (unsigned)uid);
	return err;
}
