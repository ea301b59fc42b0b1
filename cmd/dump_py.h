/* dump_py.h - the Python records of a run as `xpcorr dump` prints them.
 *   if (xp_dump_py_record(h) < 0) ... record shorter than its type
 */
#ifndef XP_DUMP_PY_H
#define XP_DUMP_PY_H

#include "src/runfmt.h"

/* Prints the fields of an XP_REC_PYSTACK, PYSAMPLE, PYWAIT, PYCODE, PYINFO,
 * AUTOGRAD or AUTOGRAD_INFO record after
 * its name (no newline): 1, 0 for another type (nothing printed), or
 * -EBADMSG when the record is too short for what it claims. */
int xp_dump_py_record(const struct xp_record_header *h);

#endif
