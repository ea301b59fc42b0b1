/* uprobemulti.h - the marker uprobe as a uprobe_multi BPF link (Linux 6.6+)
 * rather than a perf event: closing it at the end of a run waits on the
 * kernel's grace periods once, not three times (20-36 ms against 76-133 ms
 * here, 6.18), which was most of what arming GPU capture added to a short
 * run. libbpf 1.1 has no API for it: the bpf() call is made here.
 *   if (uprobe_multi_supported())
 *       bpf_program__set_expected_attach_type(prog, XP_BPF_TRACE_UPROBE_MULTI);
 *   ... load ...
 *   link_fd = uprobe_multi_attach(bpf_program__fd(prog), lib_fd, "symbol");
 */
#ifndef XP_CAPTURE_UPROBEMULTI_H
#define XP_CAPTURE_UPROBEMULTI_H

#include <stdbool.h>

#define XP_BPF_TRACE_UPROBE_MULTI 48    /* enum bpf_attach_type, kernel 6.6 */

/* Whether the kernel makes uprobe_multi links (probed once: a two-instruction
 * program and a link on "/" that must fail with EBADF, as libbpf probes). */
bool uprobe_multi_supported(void);
/* A link firing prog_fd on entry of the function sym of the ELF file open
 * on lib_fd, in every process: its fd, or -errno. */
int uprobe_multi_attach(int prog_fd, int lib_fd, const char *sym);

#endif
