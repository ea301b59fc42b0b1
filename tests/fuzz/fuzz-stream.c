/* fuzz-stream.c - libFuzzer target for the raw stream reader and the
 * record validator: any byte string must give records or a clean error,
 * never a crash, a hang or an out-of-bounds read. Built with the zstd
 * codec, so compressed blocks (XP_REC_ZBLOCK) are expanded and fuzzed too.
 *   scripts/fuzz stream 60     # build with clang and fuzz for 60 s
 */
// fuzz-sources: src/runfile_zstd.c
// fuzz-cflags: -DXP_RUNFILE_ZSTD
// fuzz-libs: -lzstd
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "src/runfile.h"
#include "fuzz-file.h"

/* The stack and, in dwarf mode, the user stack copy after a fixed struct. */
static uint64_t touch_stack(const struct xp_record_header *h, size_t fixed,
			    const struct xp_stack *st)
{
	const uint64_t *ips = xp_record_stack_ips(h, fixed, st);
	struct xp_user_regs_copy regs;
	const uint8_t *bytes;
	uint64_t sum = 0;

	for (unsigned i = 0; ips && i < (unsigned)st->user_depth + st->kernel_depth; i++)
		sum += ips[i];
	if (xp_record_user_copy(h, fixed, st, &regs, &bytes) == 0)
		for (uint32_t i = 0; i < regs.size; i++)
			sum += bytes[i] + regs.sp;
	return sum;
}

/* Reads every byte the record claims, so ASan sees any bad bound. */
static uint64_t touch_record(const struct xp_record_header *h)
{
	const unsigned char *p = xp_record_payload(h);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < xp_record_payload_len(h); i++)
		sum += p[i];
	if (h->type == XP_REC_SAMPLE) {
		const struct xp_sample *s = (const void *)p;

		sum += touch_stack(h, sizeof(*s), &s->stack);
	} else if (h->type == XP_REC_LAUNCH) {
		const struct xp_launch *l = (const void *)p;

		sum += touch_stack(h, sizeof(*l), &l->stack);
	} else if (h->type == XP_REC_SWITCH) {
		const struct xp_switch *w = (const void *)p;

		sum += touch_stack(h, sizeof(*w), &w->stack);
	} else if (h->type == XP_REC_MMAP) {
		const struct xp_mmap *m = (const void *)p;

		sum += strlen(xp_record_path(h, sizeof(*m), m->path_len));
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	const char *why;
	volatile uint64_t sink = 0;

	if (fd < 0) {
		/* a real file: readers refuse links, /proc/self/fd/N included */
		fd = fuzz_file("stream", path, sizeof(path));
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (xp_reader_open(&r, path) == 0)
		while (xp_reader_next(r, &h) > 0 && xp_record_check(h, &why) == 0)
			sink += touch_record(h);
	xp_reader_close(r);
	return 0;
}
