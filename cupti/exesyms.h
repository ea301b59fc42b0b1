/* exesyms.h - addresses of symbols of the main program that its dynamic
 * symbol table does not export (a python3 linked without --export-dynamic
 * keeps _PyRuntime only in .symtab), read from /proc/self/exe.
 *
 *   const char *names[] = { "_PyRuntime", "Py_Version" };
 *   uintptr_t addrs[2] = { 0 };
 *   xpc_exe_symbols(names, addrs, 2);     // 0 stays 0: not found
 *
 * Reads the file (mmap) at the caller's request, never at a launch. */
#ifndef XPCUPTI_EXESYMS_H
#define XPCUPTI_EXESYMS_H

#include <stddef.h>
#include <stdint.h>

/* Fills addrs[i] (when 0) with the run-time address of names[i], a defined
 * symbol of .symtab. 0, or -errno when the file could not be read. */
int xpc_exe_symbols(const char *const *names, uintptr_t *addrs, size_t n);

#endif
