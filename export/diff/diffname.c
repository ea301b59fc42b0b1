/* diffname.c - folded stacks named as the report names launch stacks; see
 * diffname.h. The same rules as report.c's format_stack, read from the
 * frames' text alone: a folded stack carries no frame kinds or modules. */
#include "export/diff/diffname.h"

#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"
#include "export/names/elidename.h"
#include "db/launch.h"
#include "export/names/launcher.h"
#include "export/names/launchsite.h"
#include "export/names/pyreach.h"

/* The frame of folded that ends at end, into frame; returns where the next
 * one (towards the root) ends. */
static const char *frame_before(const char *folded, const char *end, char *frame, size_t len)
{
	const char *start = end;

	while (start > folded && start[-1] != ';')
		start--;
	snprintf(frame, len, "%.*s", (int)(end - start), start);
	return start > folded ? start - 1 : folded;
}

/* A CUDA library's API, known by its name alone (a folded stack has no
 * modules): cublasSgemm_v2, cudnnConvolutionForward, ncclAllReduce. */
static int library_api(const char *frame)
{
	static const char *const apis[] = { "cublas", "cudnn", "nccl", "cufft", "curand",
					    "cusparse", "cusolver" };

	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
		if (!strncmp(frame, apis[i], strlen(apis[i])))
			return 1;
	return 0;
}

/* Where a stack with no Python frame reaches the program's own code: the
 * index (leaf first) of its first frame outside the CUDA layers and the
 * libraries it calls; 0 when it has a Python frame or none such. */
static int first_own_frame(const char *folded)
{
	const char *end = folded + strlen(folded);
	char frame[1024];
	int own = -1;

	for (int i = 0; end > folded; i++) {
		end = frame_before(folded, end, frame, sizeof(frame));
		if (xp_is_python_text(frame, strlen(frame)))
			return 0;
		if (own < 0 && !xp_is_cuda_layer(frame, NULL) && !xp_is_library_frame(frame, NULL) &&
		    !library_api(frame))
			own = i;
	}
	return own > 0 ? own : 0;
}

/* py in front of name (len bytes): the Python line leads even when the
 * native frames filled name; their tail goes, at a whole UTF-8 character. */
static void lead_with(char *name, size_t len, const char *py)
{
	size_t n = strlen(py), keep = strlen(name);

	if (len < 2)
		return;
	if (n > len - 1)
		n = len - 1;
	if (keep > len - 1 - n) {
		keep = len - 1 - n;
		while (keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80)
			keep--;
	}
	memmove(name + n, name, keep);
	memcpy(name, py, n);
	name[n + keep] = '\0';
}

void xp_diff_stack_name(const char *folded, unsigned frames, int brief, char *name, size_t len)
{
	const char *end = folded + strlen(folded);
	char frame[1024], shortname[512], py[640] = "", op[128] = "";
	struct xp_launcher_scan who;
	unsigned shown = 0;
	size_t used = 0;
	int cut = 0, shown_py = 0, own = first_own_frame(folded);

	name[0] = '\0';
	xp_launcher_begin(&who);
	for (int i = 0; end > folded; i++) {
		int is_py;
		const char *text = frame;

		end = frame_before(folded, end, frame, sizeof(frame));
		is_py = xp_is_python_text(frame, strlen(frame));
		xp_launcher_frame(&who, is_py ? XP_FRAME_PYTHON : XP_FRAME_USER, frame, NULL);
		/* the framework's operation nearest the Python caller names the site */
		if (!shown_py)
			xp_framework_op(frame, op, sizeof(op));
		/* the CUDA layers only until the first frame of the caller's code;
		 * a native program's stack starts at its own code (below cuBLAS) */
		if (!shown && !is_py && (xp_is_cuda_layer(frame, NULL) || i < own))
			continue;
		if (shown < frames) {
			if (brief && !is_py) {
				xp_elide_name(frame, shortname, sizeof(shortname));
				text = shortname;
			}
			used += (size_t)snprintf(name + (used < len ? used : 0),
						 used < len ? len - used : 0, "%s%s",
						 shown ? " <- " : "", text);
			shown++;
			shown_py |= is_py;
			continue;
		}
		if (!cut)
			used += (size_t)snprintf(name + (used < len ? used : 0), used < len ? len - used : 0,
					 " <- ...");
		cut = 1;
		if (shown_py || is_py) {
			if (!shown_py)
				snprintf(py, sizeof(py), "%s%s%s | ", frame, op[0] ? " \u203a " : "", op);
			break;
		}
	}
	/* no Python on the stack: the framework thread that launched it leads */
	if (!py[0] && !shown_py) {
		enum xp_launcher w = xp_launcher_end(&who);

		if (w == XP_LAUNCHER_AUTOGRAD || w == XP_LAUNCHER_NCCL || w == XP_LAUNCHER_XLA)
			snprintf(py, sizeof(py), "%s%s%s%s%s | ", xp_launcher_label(w),
				 who.what[0] ? ": " : "", who.what, op[0] ? " \u203a " : "", op);
	}
	if (py[0])
		lead_with(name, len, py);
}
