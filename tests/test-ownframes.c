/* test-ownframes.c - which leaf frames are the recorder's own (issue 43):
 * names and modules as the H100 fixtures and an off-CPU stack have them. */
#include "check-main.h"
#include "db/db_schema.h"
#include "db/ownframes.h"

#define XPC "/opt/xpcap/lib/libxpcupti.so"
#define CUPTI "/usr/local/cuda-13.0/lib64/libcupti.so.2025.3.1"
#define TORCH "/venv/torch/lib/libtorch_cuda.so"

struct fr {
	int kind;
	const char *sym, *module;
};

static size_t cut(const struct fr *f, size_t n)
{
	uint8_t own[32];

	for (size_t i = 0; i < n; i++)
		own[i] = (uint8_t)xp_own_frame(f[i].kind, f[i].sym, f[i].module);
	return xp_own_cut(own, n);
}

START_TEST(cupti_callback)
{
	const struct fr launch[] = {
		{ XP_FRAME_USER, "xpc_stack_take", XPC },
		{ XP_FRAME_USER, "xpc_api_callback", XPC },
		{ XP_FRAME_UNRESOLVED, "libcupti.so.13+0x7d162", CUPTI },
		{ XP_FRAME_UNRESOLVED, "libcupti.so.13+0x120df5", CUPTI },
		{ XP_FRAME_UNRESOLVED, "libcuda.so.580+0x4cb045", "/usr/lib/libcuda.so.580" },
		{ XP_FRAME_USER, "cudaLaunchKernel", "/venv/libcudart.so.13" },
	};

	ck_assert_uint_eq(cut(launch, 6), 4);
	/* our frames without CUPTI above them: our own thread, kept */
	const struct fr writer[] = {
		{ XP_FRAME_USER, "xp_writer_flush", XPC },
		{ XP_FRAME_USER, "writer_main", XPC },
		{ XP_FRAME_USER, "start_thread", "/usr/lib/libc.so.6" },
	};

	ck_assert_uint_eq(cut(writer, 3), 0);
	/* a user's frame at the leaf: nothing cut, whatever is above */
	const struct fr user[] = {
		{ XP_FRAME_USER, "at::native::mm", TORCH },
		{ XP_FRAME_USER, "xpc_api_callback", XPC },
		{ XP_FRAME_UNRESOLVED, "libcupti.so.13+0x7d162", CUPTI },
	};

	ck_assert_uint_eq(cut(user, 3), 0);
	/* the whole stack only when it starts at the launch probe: the user's
	 * frames past CUPTI's could not be read (a stack_unreadable loss) */
	ck_assert_uint_eq(cut(launch, 4), 4);
	ck_assert_uint_eq(cut(launch, 1), 1);
	ck_assert_uint_eq(cut(launch + 1, 3), 0);     /* not from the probe: kept */
	ck_assert_uint_eq(cut(writer, 2), 0);         /* our thread, cut short: kept */
}
END_TEST

START_TEST(bpf_program)
{
	const struct fr offcpu[] = {
		{ XP_FRAME_KERNEL, "bpf_prog_6deef7357e7b4530_xp_switch", "[bpf]" },
		{ XP_FRAME_KERNEL, "bpf_trace_run4", "[kernel]" },
		{ XP_FRAME_KERNEL, "__bpf_trace_sched_switch", "[kernel]" },
		{ XP_FRAME_KERNEL, "__traceiter_sched_switch", "[kernel]" },
		{ XP_FRAME_KERNEL, "__schedule", "[kernel]" },
		{ XP_FRAME_KERNEL, "schedule", "[kernel]" },
	};
	const struct fr other[] = {
		{ XP_FRAME_KERNEL, "bpf_prog_1234_other_tool", "[bpf]" },
		{ XP_FRAME_KERNEL, "bpf_trace_run4", "[kernel]" },
		{ XP_FRAME_KERNEL, "__schedule", "[kernel]" },
	};

	ck_assert_uint_eq(cut(offcpu, 6), 4);
	ck_assert_uint_eq(cut(other, 3), 0);       /* another tool's program is not ours */
	ck_assert_uint_eq(cut(offcpu + 1, 5), 0);  /* plumbing without our program */
}
END_TEST

static Suite *ownframes_suite(void)
{
	Suite *s = suite_create("ownframes");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cupti_callback);
	tcase_add_test(tc, bpf_program);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(ownframes_suite)
