/* launch.c - the CUDA-layer frame test shared by report and exports; see launch.h. */
#include "db/launch.h"

#include "src/runfmt.h"

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

int xp_is_library_frame(const char *sym, const char *module)
{
	/* CUDA's math and communication libraries, the frameworks, the Python
	 * runtime and the C/C++ runtimes: code the program calls, not its own */
	static const char *const libs[] = { "libcublas", "libcudnn", "libnccl", "libcufft",
		"libcurand", "libcusparse", "libcusolver", "libnvrtc", "libnvJitLink", "libnvjpeg",
		"libtorch", "libc10", "libshm", "_C.cpython", "libtriton", "xla_extension",
		"libtpu", "libjax", "libpython", "python3", "libc.so", "libc-", "libstdc++",
		"libm.so", "libgcc_s", "libgomp", "ld-linux", "libpthread" };
	const char *base = module ? strrchr(module, '/') : NULL;

	/* "[unknown]+0x0", "[vdso]": nobody's code we could name */
	if (sym && sym[0] == '[')
		return 1;
	base = base ? base + 1 : module;
	for (size_t i = 0; i < sizeof(libs) / sizeof(libs[0]); i++) {
		size_t n = strlen(libs[i]);

		if ((base && !strncmp(base, libs[i], n)) || (sym && !strncmp(sym, libs[i], n)))
			return 1;
	}
	return module && (strstr(module, "/site-packages/torch/") || strstr(module, "/jaxlib/"));
}

void xp_launch_bind(sqlite3_stmt *ins, const struct xp_launch *l, int64_t stack)
{
	sqlite3_bind_int64(ins, 1, (int64_t)l->ts);
	sqlite3_bind_int64(ins, 2, l->pid);
	sqlite3_bind_int64(ins, 3, l->tid);
	sqlite3_bind_int64(ins, 4, l->cpu);
	sqlite3_bind_int64(ins, 5, (int64_t)l->correlation_id);
	sqlite3_bind_int64(ins, 6, l->cbid);
	if (stack > 0)
		sqlite3_bind_int64(ins, 7, stack);
	else
		sqlite3_bind_null(ins, 7);
}
