/* runfile_zstd.h - the zstd block codec of XP_REC_ZBLOCK (runfile.h).
 *   xp_writer_set_codec(w, &xp_zstd_codec);   // xpcap --compress zstd
 * Readers built in xpcommon use it on their own. */
#ifndef XP_RUNFILE_ZSTD_H
#define XP_RUNFILE_ZSTD_H

#include "src/runfile.h"

/* Level 1 (runfile_zstd.c says why); the injection library's dlopen'd
 * encoder (cupti/zstd_dl.c) uses the same. */
#define XP_ZSTD_LEVEL 1

extern const struct xp_block_codec xp_zstd_codec;

#endif
