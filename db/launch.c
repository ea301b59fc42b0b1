/* launch.c - the CUDA-layer frame test shared by report and exports; see launch.h. */
#include "launch.h"

#include <ctype.h>
#include <string.h>

int xp_is_cuda_layer(const char *sym, const char *module)
{
	static const char *const libs[] = { "libxpcupti.so", "libcupti.so", "libcuda.so",
					    "libcudart.so" };
	const char *base = module ? strrchr(module, '/') : NULL;

	if (sym && !strcmp(sym, "xpcap_correlation_marker"))
		return 1;
	/* the runtime and driver APIs, also when cudart is linked statically
	 * into the program (nvcc's default): cudaLaunchKernel, cuLaunchKernel,
	 * __cudaLaunchKernel_helper, __device_stub__k_alpha, ... */
	if (sym && ((!strncmp(sym, "cuda", 4) && isupper((unsigned char)sym[4])) ||
		    (!strncmp(sym, "cu", 2) && isupper((unsigned char)sym[2])) ||
		    !strncmp(sym, "__cuda", 6) || !strncmp(sym, "__device_stub_", 14)))
		return 1;
	base = base ? base + 1 : module;
	for (size_t i = 0; base && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(base, libs[i], strlen(libs[i])))
			return 1;
	/* unresolved frames carry their module in the name: "libcupti.so.13+0x7d162" */
	for (size_t i = 0; sym && i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(sym, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}
