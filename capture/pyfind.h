/* pyfind.h - finds the CPython interpreter of another process from outside:
 * the python executable or libpython3.X mapped in it (/proc/PID/maps), the
 * file opened as mapfile.h does (only the mapped inode), its ELF symbols
 * (.dynsym, else .symtab) moved by the mapping's load bias: _PyRuntime, the
 * type objects, Py_Version (3.11+; 3.10: the file's name says it). Fails
 * closed: an unknown version, a debug or free-threaded build, a missing
 * symbol, 3.13 offsets that disagree with its _Py_DebugOffsets.
 *
 *   struct pyfind f;
 *   int r = pyfind(pid, &f);      // 1 found and supported, 0 no Python, -1 not supported
 *   f.reason: why not, or what was found
 */
#ifndef XP_CAPTURE_PYFIND_H
#define XP_CAPTURE_PYFIND_H

#include <stdint.h>
#include <sys/types.h>

#include "src/pyobj.h"

struct pyfind {
	struct xp_pyproc pp;            /* pid, version, offsets, type objects */
	uintptr_t runtime;              /* &_PyRuntime in the process */
	char reason[192];               /* what was found, or why it cannot be read */
};

int pyfind(pid_t pid, struct pyfind *f);

#endif
