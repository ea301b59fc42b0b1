/* unwind.c - walk recorded user stack copies with libdwfl, offline.
 * libdwfl's process unwinder asks us for the thread's registers and its
 * memory; we answer from the record (rip, rsp, rbp and the stack bytes
 * from rsp up) and report each module as the walk reaches it, at the
 * address the recorded mapping put it. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "u64map.h"
#include "unwind.h"

/* DWARF register numbers on x86-64 */
enum { DWARF_RBP = 6, DWARF_RSP = 7 };

/* One libdwfl session per process: the modules reported into it stay, so
 * each module's CFI is parsed once per process. */
struct proc_session {
	uint32_t pid;
	Dwfl *dwfl;
	struct xp_u64map reported;  /* mapping id -> 1 */
};

/* The copy being walked: what the callbacks answer from. */
struct walk {
	struct proc_session *proc;
	uint64_t ts;
	const struct xp_user_regs_copy *regs;
	const uint8_t *stack;
	uint64_t *ips;
	unsigned n, max;
	int conflict;               /* a module moved: the session must be rebuilt */
};

struct xp_unwinder {
	const struct xp_mappings *maps;
	struct xp_symbolizer *sym;
	Elf *machine_elf;           /* tells libdwfl the architecture (ours) */
	int machine_fd;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	struct xp_u64map by_pid;    /* pid -> index + 1 in procs */
	struct proc_session **procs;
	size_t nprocs, cap;
	struct walk cur;
	struct xp_unwind_stats stats;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct xp_unwinder *uw = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;               /* one thread per walk */
	*thread_argp = uw;
	return (pid_t)uw->cur.proc->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

/* Only the copied bytes are memory: anything else ends the walk there. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	const struct walk *w = &((struct xp_unwinder *)arg)->cur;
	uint64_t sp = w->regs->sp, size = w->regs->size;

	(void)dwfl;
	if (size < sizeof(*result) || addr < sp || addr - sp > size - sizeof(*result))
		return false;
	memcpy(result, w->stack + (addr - sp), sizeof(*result));
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct walk *w = &((struct xp_unwinder *)arg)->cur;
	Dwarf_Word regs[2] = { w->regs->bp, w->regs->sp };   /* rbp, rsp */

	if (!dwfl_thread_state_registers(thread, DWARF_RBP, 2, regs))
		return false;
	dwfl_thread_state_register_pc(thread, w->regs->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

struct xp_unwinder *xp_unwinder_new(const struct xp_mappings *maps,
				    struct xp_symbolizer *sym)
{
	struct xp_unwinder *uw = calloc(1, sizeof(*uw));

	if (!uw)
		return NULL;
	uw->maps = maps;
	uw->sym = sym;
	uw->machine_fd = -1;
	uw->debuginfo_path = strdup("-.debug:/usr/lib/debug");
	if (!uw->debuginfo_path) {
		free(uw);
		return NULL;
	}
	uw->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &uw->debuginfo_path,
	};
	return uw;
}

static void session_free(struct proc_session *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	xp_u64map_free(&p->reported);
	free(p);
}

void xp_unwinder_free(struct xp_unwinder *uw)
{
	if (!uw)
		return;
	for (size_t i = 0; i < uw->nprocs; i++)
		session_free(uw->procs[i]);
	free(uw->procs);
	xp_u64map_free(&uw->by_pid);
	if (uw->machine_elf)
		elf_end(uw->machine_elf);
	if (uw->machine_fd >= 0)
		close(uw->machine_fd);
	free(uw->debuginfo_path);
	free(uw);
}

const struct xp_unwind_stats *xp_unwinder_stats(const struct xp_unwinder *uw)
{
	return &uw->stats;
}

/* The recorded processes ran on this architecture (runs are ingested where
 * the capture's ELF files are), so our own executable names the machine
 * for libdwfl even when a walk starts in code that belongs to no file. */
static Elf *machine_elf(struct xp_unwinder *uw)
{
	if (!uw->machine_elf) {
		elf_version(EV_CURRENT);
		uw->machine_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (uw->machine_fd < 0)
			return NULL;
		uw->machine_elf = elf_begin(uw->machine_fd, ELF_C_READ_MMAP, NULL);
	}
	return uw->machine_elf;
}

/* Drops pid's session (a module moved under it); the next walk starts afresh. */
static void session_reset(struct proc_session *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	xp_u64map_free(&p->reported);
	xp_u64map_init(&p->reported);
}

static int session_open(struct xp_unwinder *uw, struct proc_session *p)
{
	Elf *elf = machine_elf(uw);

	if (!elf)
		return -ENOEXEC;
	p->dwfl = dwfl_begin(&uw->callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	if (!dwfl_attach_state(p->dwfl, elf, (pid_t)p->pid, &thread_callbacks, uw)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return -ENOEXEC;
	}
	return 0;
}

static int session_of(struct xp_unwinder *uw, uint32_t pid, struct proc_session **out)
{
	uint64_t *slot;
	int fresh, err = xp_u64map_upsert(&uw->by_pid, pid, 0, &slot, &fresh);
	struct proc_session *p;

	if (err)
		return err;
	if (!fresh) {
		p = uw->procs[*slot - 1];
	} else {
		if (uw->nprocs == uw->cap) {
			size_t cap = uw->cap ? uw->cap * 2 : 16;
			struct proc_session **v = realloc(uw->procs, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			uw->procs = v;
			uw->cap = cap;
		}
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->pid = pid;
		uw->procs[uw->nprocs++] = p;
		*xp_u64map_find(&uw->by_pid, pid, 0) = uw->nprocs;
	}
	if (!p->dwfl) {
		err = session_open(uw, p);
		if (err)
			return err;
	}
	*out = p;
	return 0;
}

/* Makes the file mapped at pc (at the walk's time) known to the session,
 * at the address it was mapped at; code in no verified file is left to
 * the frame-pointer fallback. Sets conflict when a different file (or the
 * same one elsewhere) was reported over pc before: a dlclose + dlopen. */
static void report_module(struct xp_unwinder *uw, uint64_t pc)
{
	struct walk *w = &uw->cur;
	struct proc_session *p = w->proc;
	const struct xp_mapping *m = xp_mappings_lookup(uw->maps, p->pid, w->ts, pc);
	uint64_t *slot, base;
	Dwfl_Module *old;
	const char *path;
	char file[4096];
	int fresh, fd;

	if (!m || xp_u64map_upsert(&p->reported, m->id, 0, &slot, &fresh) || !fresh)
		return;
	*slot = 1;
	if (xp_symbolizer_open(uw->sym, m->module) != XP_MODULE_OK ||
	    xp_symbolizer_file(uw->sym, m->module, file, sizeof(file)))
		return;
	path = xp_symbolizer_path(uw->sym, m->module);
	base = m->start - m->pgoff;
	old = dwfl_addrmodule(p->dwfl, pc);
	if (old) {
		const char *name = dwfl_module_info(old, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		Dwarf_Addr bias;

		/* the same file at the same place, through another mapping record */
		if (!(name && strcmp(name, path) == 0 && dwfl_module_getelf(old, &bias) &&
		      bias == base))
			w->conflict = 1;
		return;
	}
	/* a fd checked like the symbolizer's, never the path: the file could
	 * have become a FIFO or a device since */
	fd = xp_symbolizer_fd(uw->sym, m->module);
	if (fd < 0)
		return;
	dwfl_report_begin_add(p->dwfl);
	if (!dwfl_report_elf(p->dwfl, path, file, fd, base, false))
		close(fd);      /* taken only on success */
	dwfl_report_end(p->dwfl, NULL, NULL);
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct xp_unwinder *uw = arg;
	struct walk *w = &uw->cur;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	/* libdwfl unwinds from this frame next: it needs pc's module first */
	report_module(uw, pc);
	if (w->conflict)
		return DWARF_CB_ABORT;
	w->ips[w->n++] = pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int xp_unwind(struct xp_unwinder *uw, uint32_t pid, uint64_t ts,
	      const struct xp_user_regs_copy *regs, const uint8_t *stack,
	      uint64_t *ips, unsigned max)
{
	struct walk *w = &uw->cur;
	int err;

	if (!max || regs->size % 8 || regs->size > XP_USER_COPY_MAX ||
	    regs->sp + regs->size < regs->sp)
		return -EINVAL;
	uw->stats.copies++;
	for (int attempt = 0; attempt < 2; attempt++) {
		*w = (struct walk){ .ts = ts, .regs = regs, .stack = stack, .ips = ips, .max = max };
		err = session_of(uw, pid, &w->proc);
		if (err)
			break;
		/* errors end the walk where it stands: the frames so far are good */
		dwfl_getthread_frames(w->proc->dwfl, (pid_t)pid, on_frame, uw);
		if (!w->conflict)
			break;
		session_reset(w->proc);
	}
	if (w->n == 0) {             /* at least the leaf, as the record has it */
		ips[0] = regs->ip;
		w->n = 1;
	}
	if (w->n > 1)
		uw->stats.unwound++;
	uw->stats.frames += w->n;
	return (int)w->n;
}
