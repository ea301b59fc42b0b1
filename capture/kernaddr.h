/* kernaddr.h - the kernel's symbols for the run, as the invoking user may
 * have them. /proc/kallsyms shows a user real addresses only where
 * kptr_restrict lets it (0, with perf_event_paranoid <= 1); anywhere else
 * a run made under sudo must not give that user the kernel's layout
 * (KASLR). Then every kernel address xpcap writes, the symbols' and the
 * stacks' alike, is moved by one secret delta that puts _text at
 * KERNADDR_REBASED_TEXT, an address no kernel is loaded at: symbols are
 * still found by address offline, and the real addresses are not there.
 *   uint64_t delta = 0;
 *   if (uid != 0 && !kernaddr_user_sees())
 *       kernaddr_rebase_delta(&delta);          // drain_rebase_kernel(d, delta)
 *   if (drain_kernel_ips(d, &ips, &n) == 0 && n)                // at the end
 *       kernaddr_save_kallsyms(&rd, delta, ips, n, false, &bytes);
 */
#ifndef XP_CAPTURE_KERNADDR_H
#define XP_CAPTURE_KERNADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Below the lowest x86-64 and arm64 kernel load address (16 MiB above
 * 0xffffffff80000000; arm64's image is further up still). */
#define KERNADDR_REBASED_TEXT 0xffffffff80000000ull

struct rundir;

/* Whether an unprivileged user reading /proc/kallsyms sees addresses (the
 * kernel's kallsyms_show_value without CAP_SYSLOG); false when the sysctls
 * cannot be read. */
bool kernaddr_user_sees(void);
/* The delta that moves _text (or _stext) to KERNADDR_REBASED_TEXT: 0 and
 * *delta, or -ENOENT (no such symbol: kernel addresses cannot be hidden by
 * moving them), -errno. */
int kernaddr_rebase_delta(uint64_t *delta);
/* The run's "kallsyms": the lines of /proc/kallsyms that name the kernel
 * IPs ips[0..n-1] (sorted, as sampled): for each, every text symbol at
 * the highest address at or below it, all a reader looks at (or with all,
 * every text symbol); each address plus delta (0: as they are). From
 * root's copy of this boot's symbols where it holds (ksymtab.h), else
 * from /proc/kallsyms. Written to kallsyms.tmp and renamed when whole;
 * *bytes gets its size. 0 or -errno. */
int kernaddr_save_kallsyms(struct rundir *rd, uint64_t delta, const uint64_t *ips, size_t n,
			   bool all, uint64_t *bytes);

#endif
