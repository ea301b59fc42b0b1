/* info_autograd.h - backward kernels in `xpcorr info` printed as text (the
 * JSON is built by export/runinfo/runinfo.h): how much backward GPU
 * time ingest put at the forward line that made its autograd node, how much
 * it could not and why, and what the injection library found in each
 * process (xp_autograd, xp_autograd_processes: ingest/backward.h).
 *
 *   json_t *ag = xp_info_autograd(db);     // NULL: a database without them
 *   if (ag) xp_info_autograd_print(ag);    // text, for the cmd only
 */
#ifndef XP_INFO_AUTOGRAD_H
#define XP_INFO_AUTOGRAD_H

#include <jansson.h>

void xp_info_autograd_print(const json_t *ag);

#endif
