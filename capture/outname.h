/* outname.h - `xpcap record -o` patterns for jobs of many processes and
 * hosts: %h the host name (up to its first dot), %r the rank the launcher
 * gave xpcap (RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMI_RANK: see
 * jobrank.h), %p xpcap's pid, %% a percent sign.
 *   srun xpcap record -o runs/%h-%r -- python train.py
 */
#ifndef XP_OUTNAME_H
#define XP_OUTNAME_H

#include <stddef.h>

/* pattern expanded into out. 0, or -1 with why in err: an unknown %x, %r
 * with no rank in the environment, a result that does not fit. */
int xp_output_expand(const char *pattern, char *(*get)(const char *), char *out, size_t len,
		     char *err, size_t errlen);

#endif
