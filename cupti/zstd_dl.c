/* zstd_dl.c - xp_block_codec over a dlopen'd libzstd.so.1 (see zstd_dl.h).
 * The same settings as src/runfile_zstd.c, so readers need nothing new;
 * only the encoder is here (the library never reads a stream back). */
#include "cupti/zstd_dl.h"
#include "src/runfile_zstd.h"   /* XP_ZSTD_LEVEL only: nothing here links libzstd */

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <zstd.h>

static struct {
	size_t (*bound)(size_t);
	ZSTD_CCtx *(*create)(void);
	size_t (*free_ctx)(ZSTD_CCtx *);
	size_t (*set_param)(ZSTD_CCtx *, ZSTD_cParameter, int);
	size_t (*compress2)(ZSTD_CCtx *, void *, size_t, const void *, size_t);
	unsigned (*is_error)(size_t);
} z;
static int z_ok;
static pthread_once_t z_once = PTHREAD_ONCE_INIT;

static void z_load(void)
{
	void *h = dlopen("libzstd.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	*(void **)&z.bound = dlsym(h, "ZSTD_compressBound");
	*(void **)&z.create = dlsym(h, "ZSTD_createCCtx");
	*(void **)&z.free_ctx = dlsym(h, "ZSTD_freeCCtx");
	*(void **)&z.set_param = dlsym(h, "ZSTD_CCtx_setParameter");
	*(void **)&z.compress2 = dlsym(h, "ZSTD_compress2");
	*(void **)&z.is_error = dlsym(h, "ZSTD_isError");
	z_ok = z.bound && z.create && z.free_ctx && z.set_param && z.compress2 && z.is_error;
	/* the handle stays open: the codec may be used until the process ends */
}

static size_t dl_bound(size_t len)
{
	return z.bound(len);
}

static int dl_encoder_new(void **state)
{
	ZSTD_CCtx *cctx = z.create();

	if (!cctx)
		return -ENOMEM;
	if (z.is_error(z.set_param(cctx, ZSTD_c_compressionLevel, XP_ZSTD_LEVEL)) ||
	    z.is_error(z.set_param(cctx, ZSTD_c_checksumFlag, 1))) {
		z.free_ctx(cctx);
		return -EINVAL;
	}
	*state = cctx;
	return 0;
}

static void dl_encoder_free(void *state)
{
	if (state)
		z.free_ctx(state);
}

static int dl_encode(void *state, void *dst, size_t cap, const void *src, size_t len,
		     size_t *out_len)
{
	size_t n = z.compress2(state, dst, cap, src, len);

	if (z.is_error(n))
		return -EIO;
	*out_len = n;
	return 0;
}

static const struct xp_block_codec codec = {
	.name = "zstd",
	.bound = dl_bound,
	.encoder_new = dl_encoder_new,
	.encoder_free = dl_encoder_free,
	.encode = dl_encode,
};

const struct xp_block_codec *xpc_zstd_codec_dl(void)
{
	pthread_once(&z_once, z_load);
	return z_ok ? &codec : NULL;
}
