/* test-elidename.c - the short C++ names of text reports, on real names
 * from the H100 fixtures. */
#include <string.h>

#include "check-main.h"
#include "export/names/elidename.h"

static const char *shorten(const char *in)
{
	static char out[512];

	xp_elide_name(in, out, sizeof(out));
	return out;
}

START_TEST(real_names)
{
	ck_assert_str_eq(shorten("void at::native::vectorized_elementwise_kernel<4, at::native::"
				 "CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul> >(int, "
				 "at::native::CUDAFunctorOnSelf_add<float>, std::array<char*, 2ul>)"),
			 "at::native::vectorized_elementwise_kernel<\u2026>()");
	ck_assert_str_eq(shorten("at::native::add_kernel(at::TensorIteratorBase&, c10::Scalar "
				 "const&)::{lambda()#1}::operator()() const [clone .isra.0]"),
			 "at::native::add_kernel()::{lambda()#1}::operator()()");
	ck_assert_str_eq(shorten("at::native::(anonymous namespace)::launch_clamp_scalar("
				 "at::TensorIteratorBase&, c10::Scalar)"),
			 "at::native::(anonymous namespace)::launch_clamp_scalar()");
	ck_assert_str_eq(shorten("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
				 "AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, "
				 "true, true>::Params)"),
			 "fmha_cutlassF_f32_aligned_64x64_rf_sm80()");
}
END_TEST

START_TEST(plain_and_operators)
{
	ck_assert_str_eq(shorten("main"), "main");
	ck_assert_str_eq(shorten("libcublasLt.so.13+0x71ba5cc"), "libcublasLt.so.13+0x71ba5cc");
	ck_assert_str_eq(shorten("k_step"), "k_step");
	ck_assert_str_eq(shorten("std::vector<int, std::allocator<int> >::operator[](unsigned long)"),
			 "std::vector<\u2026>::operator[]()");
	ck_assert_str_eq(shorten("std::ostream& std::operator<<(std::ostream&, int)"),
			 "std::operator<<()");
	ck_assert_str_eq(shorten("operator new(unsigned long)"), "operator new()");
}
END_TEST

START_TEST(cut_to_the_buffer)
{
	char out[8];

	xp_elide_name("a_rather_long_function_name(int)", out, sizeof(out));
	ck_assert_str_eq(out, "a_rathe");
	xp_elide_name("x", out, 0);     /* no room: nothing written */
}
END_TEST

static Suite *elidename_suite(void)
{
	Suite *s = suite_create("elidename");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, real_names);
	tcase_add_test(tc, plain_and_operators);
	tcase_add_test(tc, cut_to_the_buffer);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(elidename_suite)
