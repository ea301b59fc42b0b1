/* runfile_zstd.c - zstd behind struct xp_block_codec, kept out of
 * runfile.c so that the CUPTI injection library, which builds runfile.c,
 * never depends on libzstd. Level 3 (zstd's default) with the content
 * checksum: a few hundred MB/s, cheap next to what BPF produces. */
#include "runfile_zstd.h"

#include <errno.h>
#include <zstd.h>

#define LEVEL 3

static size_t zstd_bound(size_t len)
{
	return ZSTD_compressBound(len);
}

static int zstd_encode(void *dst, size_t cap, const void *src, size_t len, size_t *out_len)
{
	/* one context per thread, kept: a writer is used by one thread */
	static __thread ZSTD_CCtx *cctx;
	size_t n;

	if (!cctx) {
		cctx = ZSTD_createCCtx();
		if (!cctx)
			return -ENOMEM;
		/* a checksum, so a damaged frame is refused, not misread */
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, LEVEL);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	n = ZSTD_compress2(cctx, dst, cap, src, len);
	if (ZSTD_isError(n))
		return -EIO;
	*out_len = n;
	return 0;
}

static int zstd_decode(void *dst, size_t raw_len, const void *src, size_t len)
{
	unsigned long long content = ZSTD_getFrameContentSize(src, len);
	size_t n;

	/* the frame must say how much it holds, and hold exactly raw_len */
	if (content != raw_len || ZSTD_findFrameCompressedSize(src, len) != len)
		return -EBADMSG;
	n = ZSTD_decompress(dst, raw_len, src, len);
	if (ZSTD_isError(n) || n != raw_len)
		return -EBADMSG;
	return 0;
}

const struct xp_block_codec xp_zstd_codec = {
	.name = "zstd",
	.bound = zstd_bound,
	.encode = zstd_encode,
	.decode = zstd_decode,
};
