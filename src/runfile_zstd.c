/* runfile_zstd.c - zstd behind struct xp_block_codec, kept out of
 * runfile.c so that the CUPTI injection library, which builds runfile.c,
 * never depends on libzstd. Level 1 with the content checksum: it runs in
 * the drain thread, which must keep up with the BPF ring; level 3 gained
 * only ~10% on CPython dwarf samples (23.6x vs 21.1x) and lost launch
 * records to a full ring at 60k dwarf launches/s where level 1 did not.
 *   xp_writer_set_codec(w, &xp_zstd_codec);
 */
#include "src/runfile_zstd.h"

#include <errno.h>
#include <zstd.h>

static size_t zstd_bound(size_t len)
{
	return ZSTD_compressBound(len);
}

static int zstd_encoder_new(void **state)
{
	ZSTD_CCtx *cctx = ZSTD_createCCtx();

	if (!cctx)
		return -ENOMEM;
	/* a checksum, so a damaged frame is refused, not misread */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, XP_ZSTD_LEVEL)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1))) {
		ZSTD_freeCCtx(cctx);
		return -EINVAL;
	}
	*state = cctx;
	return 0;
}

static void zstd_encoder_free(void *state)
{
	ZSTD_freeCCtx(state);
}

static int zstd_encode(void *state, void *dst, size_t cap, const void *src, size_t len,
		       size_t *out_len)
{
	size_t n = ZSTD_compress2(state, dst, cap, src, len);

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
	.encoder_new = zstd_encoder_new,
	.encoder_free = zstd_encoder_free,
	.encode = zstd_encode,
	.decode = zstd_decode,
};
