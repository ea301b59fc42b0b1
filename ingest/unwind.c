/* unwind.c - walk recorded user stack copies with libdwfl, offline.
 * libdwfl's process unwinder asks us for the thread's registers and its
 * memory; we answer from the record (rip, rsp, rbp and the stack bytes
 * from rsp up) and report each module as the walk reaches it, at the
 * address the recorded mapping put it.
 *
 * Each session holds a fd (or two, with separate debug info) and the
 * parsed CFI of every module reported into it, so sessions are bounded: at
 * most SESSIONS_MAX, and modules in all of them within what RLIMIT_NOFILE
 * leaves; the least recently used goes first, and a process's goes when
 * its exit comes in the stream. A run of 250 short processes ingested with
 * 19,999 fds and 4.2 GB, and under ulimit -n 1024 lost 95% of its walks. */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "src/u64map.h"
#include "ingest/unwind.h"

/* DWARF register numbers on x86-64 */
enum { DWARF_RBP = 6, DWARF_RSP = 7 };

#define SESSIONS_MAX 16
#define MODULES_MIN 16              /* however low RLIMIT_NOFILE is */
#define MODULES_MAX 4096

/* One libdwfl session per address space: the modules reported into it
 * stay, so each module's CFI is parsed once per process. A child forked
 * without mapping anything of its own walks in its parent's session. */
struct session {
	uint32_t owner;             /* the pid whose mappings the modules follow */
	Dwfl *dwfl;
	struct xp_u64map reported;  /* mapping id -> 1 */
	unsigned modules;           /* modules reported into dwfl */
	uint64_t used;              /* uw->tick at its last walk */
};

/* The copy being walked: what the callbacks answer from. */
struct walk {
	struct session *sess;
	uint32_t pid;
	uint64_t ts;
	const struct xp_user_regs_copy *regs;
	const uint8_t *stack;
	uint64_t *ips;
	unsigned n, max;
	int conflict;               /* a module moved: the session must be rebuilt */
	int no_fd;                  /* a module's file could not be opened: no fd left */
	int stale;                  /* a module of another time or process is at pc */
};

struct xp_unwinder {
	const struct xp_mappings *maps;
	struct xp_symbolizer *sym;
	Elf *machine_elf;           /* tells libdwfl the architecture (ours) */
	int machine_fd;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	struct session *sessions[SESSIONS_MAX];
	unsigned nsessions;
	unsigned modules, modules_max;  /* in all sessions, and their bound */
	uint64_t tick;
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
	return (pid_t)uw->cur.pid;
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

/* Modules that the sessions may hold, from the fds the process may open:
 * each takes one or two (separate debug info), and the symbolizer and
 * SQLite need theirs. */
static unsigned modules_bound(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return MODULES_MAX;
	n = rl.rlim_cur / 4;
	return n < MODULES_MIN ? MODULES_MIN : n > MODULES_MAX ? MODULES_MAX : (unsigned)n;
}

struct xp_unwinder *xp_unwinder_new(const struct xp_mappings *maps,
				    struct xp_symbolizer *sym)
{
	struct xp_unwinder *uw = calloc(1, sizeof(*uw));

	if (!uw)
		return NULL;
	uw->maps = maps;
	uw->sym = sym;
	uw->machine_fd = -1;
	uw->modules_max = modules_bound();
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

/* Ends a session's libdwfl state (its fds and CFI); the session stays. */
static void session_reset(struct xp_unwinder *uw, struct session *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	uw->modules -= p->modules;
	p->modules = 0;
	xp_u64map_free(&p->reported);
	xp_u64map_init(&p->reported);
}

/* Closes sessions[i] and drops it from the table. */
static void session_close(struct xp_unwinder *uw, unsigned i)
{
	struct session *p = uw->sessions[i];

	session_reset(uw, p);
	free(p);
	uw->sessions[i] = uw->sessions[--uw->nsessions];
	uw->stats.sessions_closed++;
}

/* Closes the least recently used session other than keep: 1, or 0 when
 * there is none. */
static int evict_one(struct xp_unwinder *uw, const struct session *keep)
{
	unsigned lru = SESSIONS_MAX;

	for (unsigned i = 0; i < uw->nsessions; i++)
		if (uw->sessions[i] != keep &&
		    (lru == SESSIONS_MAX || uw->sessions[i]->used < uw->sessions[lru]->used))
			lru = i;
	if (lru == SESSIONS_MAX)
		return 0;
	session_close(uw, lru);
	return 1;
}

void xp_unwinder_free(struct xp_unwinder *uw)
{
	if (!uw)
		return;
	while (uw->nsessions)
		session_close(uw, uw->nsessions - 1);
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

void xp_unwinder_exited(struct xp_unwinder *uw, uint32_t pid)
{
	for (unsigned i = 0; i < uw->nsessions; i++)
		if (uw->sessions[i]->owner == pid) {
			session_close(uw, i);
			return;
		}
}

/* The recorded processes ran on this architecture (runs are ingested where
 * the capture's ELF files are), so our own executable names the machine
 * for libdwfl even when a walk starts in code that belongs to no file. */
static Elf *machine_elf(struct xp_unwinder *uw)
{
	if (!uw->machine_elf) {
		elf_version(EV_CURRENT);
		if (uw->machine_fd < 0)
			uw->machine_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
		if (uw->machine_fd < 0)
			return NULL;
		uw->machine_elf = elf_begin(uw->machine_fd, ELF_C_READ_MMAP, NULL);
	}
	return uw->machine_elf;
}

static int session_open(struct xp_unwinder *uw, struct session *p)
{
	Elf *elf = machine_elf(uw);

	if (!elf)
		return errno == EMFILE || errno == ENFILE ? -EMFILE : -ENOEXEC;
	p->dwfl = dwfl_begin(&uw->callbacks);
	if (!p->dwfl)
		return -ENOMEM;
	if (!dwfl_attach_state(p->dwfl, elf, (pid_t)p->owner, &thread_callbacks, uw)) {
		dwfl_end(p->dwfl);
		p->dwfl = NULL;
		return -ENOEXEC;
	}
	return 0;
}

/* The session of owner's address space, opened (and another closed to make
 * room) when needed: 0 and *out, or -ENOMEM, -ENOEXEC, -EMFILE. */
static int session_of(struct xp_unwinder *uw, uint32_t owner, struct session **out)
{
	struct session *p = NULL;
	int err;

	for (unsigned i = 0; i < uw->nsessions && !p; i++)
		if (uw->sessions[i]->owner == owner)
			p = uw->sessions[i];
	if (!p) {
		if (uw->nsessions == SESSIONS_MAX)
			evict_one(uw, NULL);
		p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		p->owner = owner;
		xp_u64map_init(&p->reported);
		uw->sessions[uw->nsessions++] = p;
		uw->stats.sessions_opened++;
	}
	p->used = ++uw->tick;
	if (!p->dwfl) {
		err = session_open(uw, p);
		if (err == -EMFILE && evict_one(uw, p))
			err = session_open(uw, p);
		if (err)
			return err;
	}
	*out = p;
	return 0;
}

/* A fd of module's file for a session; when the process has no fd left,
 * other sessions are closed to free some, and the walk is marked when even
 * that was not enough. */
static int module_fd(struct xp_unwinder *uw, uint32_t module)
{
	int fd = xp_symbolizer_fd(uw->sym, module);

	while ((fd == -EMFILE || fd == -ENFILE) && evict_one(uw, uw->cur.sess))
		fd = xp_symbolizer_fd(uw->sym, module);
	if (fd == -EMFILE || fd == -ENFILE)
		uw->cur.no_fd = 1;
	return fd;
}

/* The symbolizer's status of module, opened now if it was not: when the
 * process had no fd left for it, other sessions are closed to free some,
 * and the walk is marked when even that was not enough. */
static enum xp_module_status module_open(struct xp_unwinder *uw, uint32_t module)
{
	enum xp_module_status st = xp_symbolizer_open(uw->sym, module);

	while (st == XP_MODULE_UNOPENED && evict_one(uw, uw->cur.sess))
		st = xp_symbolizer_open(uw->sym, module);
	if (st == XP_MODULE_UNOPENED)
		uw->cur.no_fd = 1;
	return st;
}

/* Makes the file mapped at pc (at the walk's time) known to the session,
 * at the address it was mapped at; code in no verified file is left to
 * the frame-pointer fallback. Sets conflict when a different file (or the
 * same one elsewhere) was reported over pc before: a dlclose + dlopen; and
 * stale when the process has nothing at pc but the session has a module
 * there (another time, or the parent's after a fork). */
static void report_module(struct xp_unwinder *uw, uint64_t pc)
{
	struct walk *w = &uw->cur;
	struct session *p = w->sess;
	const struct xp_mapping *m = xp_mappings_lookup(uw->maps, w->pid, w->ts, pc);
	uint64_t *slot, base;
	Dwfl_Module *old;
	const char *path;
	char file[4096];
	int fresh, fd;

	if (!m) {
		w->stale = dwfl_addrmodule(p->dwfl, pc) != NULL;
		return;
	}
	if (xp_u64map_upsert(&p->reported, m->id, 0, &slot, &fresh) || !fresh)
		return;
	*slot = 1;
	if (module_open(uw, m->module) != XP_MODULE_OK ||
	    xp_symbolizer_file(uw->sym, m->module, file, sizeof(file))) {
		if (w->no_fd)
			*slot = 0;  /* not reported: the next walk tries again */
		return;
	}
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
	fd = module_fd(uw, m->module);
	if (fd < 0) {
		*slot = 0;      /* not reported: the next walk tries again */
		return;
	}
	dwfl_report_begin_add(p->dwfl);
	if (dwfl_report_elf(p->dwfl, path, file, fd, base, false)) {
		p->modules++;
		uw->modules++;
	} else {
		close(fd);      /* taken only on success */
	}
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
	/* no CFI of the right file for the next step: stop rather than guess */
	if (w->no_fd || w->stale)
		return DWARF_CB_ABORT;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* Whether the process can open HEADROOM more fds now: libdwfl opens
 * separate debug files as a walk needs them, and when it cannot, the walk
 * stops as if the module had no CFI, with nothing to tell why. */
#define HEADROOM 4
static int have_headroom(const struct xp_unwinder *uw)
{
	int fds[HEADROOM], n = 0;

	while (n < HEADROOM && (fds[n] = fcntl(uw->machine_fd, F_DUPFD_CLOEXEC, 0)) >= 0)
		n++;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return n == HEADROOM;
}

/* The session's modules go over the bound: close others until they fit. */
static void trim(struct xp_unwinder *uw, const struct session *keep)
{
	while (uw->modules > uw->modules_max && evict_one(uw, keep))
		;
}

/* One walk of the copy in the session of pid's address space: 0, or the
 * session's error (the walk was not done). */
static int walk_once(struct xp_unwinder *uw)
{
	struct walk *w = &uw->cur;
	int err = session_of(uw, xp_mappings_layout_owner(uw->maps, w->pid, w->ts), &w->sess);

	if (err)
		return err;
	while (!have_headroom(uw) && evict_one(uw, w->sess))
		;
	/* errors end the walk where it stands: the frames so far are good */
	dwfl_errno();       /* clears the last error */
	dwfl_getthread_frames(w->sess->dwfl, (pid_t)w->pid, on_frame, uw);
	if (dwfl_errno() && !w->no_fd && !have_headroom(uw)) {
		/* it may have stopped for want of a fd: say so, and start the
		 * session afresh next time (libdwfl keeps a failed lookup) */
		w->no_fd = 1;
		session_reset(uw, w->sess);
	}
	trim(uw, w->sess);
	return 0;
}

int xp_unwind(struct xp_unwinder *uw, uint32_t pid, uint64_t ts,
	      const struct xp_user_regs_copy *regs, const uint8_t *stack,
	      uint64_t *ips, unsigned max)
{
	struct walk *w = &uw->cur;
	int err = 0;

	if (!max || regs->size % 8 || regs->size > XP_USER_COPY_MAX ||
	    regs->sp + regs->size < regs->sp)
		return -EINVAL;
	uw->stats.copies++;
	for (int attempt = 0; attempt < 2; attempt++) {
		*w = (struct walk){ .pid = pid, .ts = ts, .regs = regs, .stack = stack, .ips = ips,
				    .max = max };
		err = walk_once(uw);
		if (err || !w->conflict)
			break;
		session_reset(uw, w->sess);
	}
	/* every walk that could not be done, or not to its end, is counted */
	if (err == -EMFILE || w->no_fd)
		uw->stats.no_fd++;
	else if (err)
		uw->stats.not_walked++;
	else if (w->conflict || w->stale)
		uw->stats.moved++;
	if (w->n == 0) {             /* at least the leaf, as the record has it */
		ips[0] = regs->ip;
		w->n = 1;
	}
	if (w->n > 1)
		uw->stats.unwound++;
	uw->stats.frames += w->n;
	return (int)w->n;
}
