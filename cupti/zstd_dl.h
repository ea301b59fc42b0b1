/* zstd_dl.h - the zstd block codec for code that must not link libzstd.
 *
 * The injection library lives in other people's programs and links only
 * libcupti, libc and pthread; it finds libzstd.so.1 with dlopen when it
 * needs to compress (in-process launch stacks), and does without it when
 * the machine has none.
 *   const struct xp_block_codec *c = xpc_zstd_codec_dl();
 *   if (c) xp_writer_set_codec(w, c);
 */
#ifndef XPCUPTI_ZSTD_DL_H
#define XPCUPTI_ZSTD_DL_H

#include "src/runfile.h"

/* zstd level 1 with checksums, as xpcap's own writer; NULL without libzstd. */
const struct xp_block_codec *xpc_zstd_codec_dl(void);

#endif
