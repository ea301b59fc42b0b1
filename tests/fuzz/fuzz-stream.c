/* fuzz-stream.c - libFuzzer target for the raw stream reader and the
 * record validator: any byte string must give records or a clean error,
 * never a crash, a hang or an out-of-bounds read.
 *   scripts/fuzz stream 60     # build with clang and fuzz for 60 s
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "runfile.h"

/* Reads every byte the record claims, so ASan sees any bad bound. */
static uint64_t touch_record(const struct xp_record_header *h)
{
	const unsigned char *p = xp_record_payload(h);
	uint64_t sum = 0;

	for (uint32_t i = 0; i < xp_record_payload_len(h); i++)
		sum += p[i];
	if (h->type == XP_REC_SAMPLE) {
		const struct xp_sample *s = (const void *)p;
		const uint64_t *ips = xp_record_stack_ips(h, sizeof(*s), &s->stack);
		struct xp_user_regs_copy regs;
		const uint8_t *bytes;

		for (unsigned i = 0; i < (unsigned)s->stack.user_depth + s->stack.kernel_depth; i++)
			sum += ips[i];
		if (xp_record_user_copy(h, sizeof(*s), &s->stack, &regs, &bytes) == 0)
			for (uint32_t i = 0; i < regs.size; i++)
				sum += bytes[i];
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
		fd = memfd_create("fuzz-stream", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (xp_reader_open(&r, path) == 0)
		while (xp_reader_next(r, &h) > 0 && xp_record_check(h, &why) == 0)
			sink += touch_record(h);
	xp_reader_close(r);
	return 0;
}
