/* runinfo.h - what `xpcorr info` says about a database, as one JSON
 * document: the run (meta.json), records and losses, symbolization, the GPU,
 * Python and autograd parts, processes, warnings and a merged job's runs.
 * Printing it is cmd/'s (cmd_info.c, info_*.c).
 *
 *   json_t *info = xp_info(db);            // never NULL
 *   json_dumpf(info, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
 */
#ifndef XP_EXPORT_RUNINFO_H
#define XP_EXPORT_RUNINFO_H

#include <jansson.h>
#include <sqlite3.h>

json_t *xp_info(sqlite3 *db);
/* The parts (runinfo_gpu.c, runinfo_python.c, runinfo_autograd.c): the GPU
 * part is never NULL; Python and autograd are NULL for a database without
 * their tables or rows. */
json_t *xp_info_gpu(sqlite3 *db);
json_t *xp_info_python(sqlite3 *db);
json_t *xp_info_autograd(sqlite3 *db);
/* runinfo_waits.c: launches placed at the line their Python thread waited
 * in ("placed", "no_waiter", "several"; "off" after --raw-launch-stacks),
 * NULL when no launch of the run qualified. */
json_t *xp_info_wait_lines(sqlite3 *db);
/* runinfo_pysamples.c: the samples of Python threads, with and without
 * Python frames, into info ("python_samples"), and a warning when some ran
 * the interpreter with none. */
void xp_info_python_samples(sqlite3 *db, json_t *info);

#endif
