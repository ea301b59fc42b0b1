/* demangle.c - C++ names for people: "_ZN2ns6Widget4drawEi" ->
 * "ns::Widget::draw(int)", through libstdc++'s __cxa_demangle (declared here
 * so that this stays a C file; it is the stable Itanium C++ ABI entry point).
 *   char buf[256]; xp_demangle("_Z3fooi", buf, sizeof(buf));   // "foo(int)"
 *   char *whole = xp_demangle_dup(kernel_name);   // no length limit; free()
 */
#include <stdlib.h>
#include <string.h>

#include "ingest/symbolize.h"

char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

char *xp_demangle_dup(const char *name)
{
	char *d = NULL;
	int status = -1;

	/* only Itanium mangled names; __cxa_demangle also "demangles" plain
	 * words as types ("f" -> "float"), which would be wrong for C */
	if (name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0)
		return d;
	free(d);
	return strdup(name);
}

void xp_demangle(const char *name, char *buf, size_t buflen)
{
	char *d;

	if (!buflen)
		return;
	d = xp_demangle_dup(name);
	strncpy(buf, d ? d : name, buflen - 1);
	buf[buflen - 1] = '\0';
	free(d);
}
