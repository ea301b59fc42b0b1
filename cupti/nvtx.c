/* nvtx.c - NVTX ranges without loading a second libcupti.
 *
 * NVTX loads the library named by NVTX_INJECTION64_PATH at the program's
 * first NVTX call and calls its InitializeInjectionNvtx2. xpcap points that
 * variable at this library, and we hand the call to the libcupti this
 * process already uses (our DT_NEEDED libcupti.so.13: a PyTorch wheel's copy
 * when the wheel loaded it first). Naming a libcupti path directly would
 * load a second CUPTI into a PyTorch process.
 *   NVTX_INJECTION64_PATH=/usr/lib/libxpcupti.so ./app
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cupti/xpcupti.h"

typedef int (*nvtx_init_fn)(void *get_export_table);

__attribute__((visibility("default")))
int InitializeInjectionNvtx2(void *get_export_table)
{
	const char *off = getenv("XPCAP_NVTX");
	void *cupti;
	nvtx_init_fn init;

	if (off && !strcmp(off, "0"))
		return 0;               /* 0: NVTX calls stay no-ops */
	cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	init = cupti ? (nvtx_init_fn)dlsym(cupti, "InitializeInjectionNvtx2") : NULL;
	if (!init) {
		xpc_log("NVTX ranges not recorded: libcupti.so.13 has no InitializeInjectionNvtx2");
		return 0;
	}
	return init(get_export_table);
}
