// throw.cc - spins a little, then throws an exception nobody catches:
// std::terminate aborts, so xpcap must exit 134 with the run intact.
#include <stdexcept>

#include "spin.h"

__attribute__((noinline)) static void fail_deep(int depth)
{
	if (depth == 0)
		throw std::runtime_error("uncaught on purpose");
	fail_deep(depth - 1);
}

int main()
{
	spin_for(0.3);
	fail_deep(3);
	return 0;
}
