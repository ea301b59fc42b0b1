/* info_python.h - the Python part of `xpcorr info` printed as text (the
 * JSON is built by export/runinfo/runinfo.h): how many launches had a
 * Python stack, how many could have (thread runs Python), and why the others
 * had none, from xp_python_processes (xpcorr-db(5)).
 *
 *   json_t *py = xp_info_python(db);       // NULL: a run without Python records
 *   if (py) xp_info_python_print(py);      // text, for the cmd only
 */
#ifndef XP_INFO_PYTHON_H
#define XP_INFO_PYTHON_H

#include <jansson.h>

void xp_info_python_print(const json_t *py);

#endif
