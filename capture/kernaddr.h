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
 *   if (kernaddr_stream_has_kernel_frames(&rd, "cpu.xpr") > 0)   // at the end
 *       kernaddr_save_kallsyms(&rd, delta, &bytes);
 */
#ifndef XP_CAPTURE_KERNADDR_H
#define XP_CAPTURE_KERNADDR_H

#include <stdbool.h>
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
/* /proc/kallsyms into the run as "kallsyms", each address plus delta (0:
 * as they are); written to kallsyms.tmp and renamed when whole. *bytes
 * gets its size. 0 or -errno. */
int kernaddr_save_kallsyms(struct rundir *rd, uint64_t delta, uint64_t *bytes);
/* Whether a stack record (sample, launch, off-CPU) of the run's stream
 * (closed) has a kernel frame, the copy's only use: 1 at the first, 0
 * none, -errno (unreadable; a damaged tail ends the search with what was
 * read). */
int kernaddr_stream_has_kernel_frames(struct rundir *rd, const char *stream);

#endif
