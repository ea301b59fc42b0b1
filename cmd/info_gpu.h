/* info_gpu.h - the GPU part of `xpcorr info` printed as text (the
 * JSON is built by export/runinfo/runinfo.h): whether GPU capture was armed
 * and, if the run holds no GPU work, why and what to do (from meta.json,
 * as xpcap recorded it); then devices, kernels, copies, memsets, GPU time,
 * launch records and their Python stacks, and the capture window.
 *
 *   json_t *gpu = xp_info_gpu(db);        // never NULL
 *   xp_info_gpu_print(gpu);               // text, for the cmd only
 */
#ifndef XP_INFO_GPU_H
#define XP_INFO_GPU_H

#include <jansson.h>

void xp_info_gpu_print(const json_t *gpu);

#endif
