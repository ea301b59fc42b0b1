/* injector.c - loads an injection library and calls its
 * InitializeInjection as libcuda does at cuInit, for the privileged test
 * (a setuid copy must not write into XPCAP_RUN_DIR). Prints its result.
 *   XPCAP_RUN_DIR=/abs/dir injector /path/libxpcupti.so
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int (*init)(void);
	void *h;

	if (argc != 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "injector: %s\n", dlerror());
		return 2;
	}
	*(void **)&init = dlsym(h, "InitializeInjection");
	if (!init)
		return 2;
	printf("%d\n", init());
	return 0;
}
