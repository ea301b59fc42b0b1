/* cmd_dump.c - `xpcorr dump run/`: every raw record of a run, one per line,
 * for debugging captures and for tests that check what xpcap wrote.
 *   xpcorr dump run/                 # all streams, in file order
 *   xpcorr dump --type sample run/   # one record kind
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "src/jobrank.h"
#include "cmd/dump_py.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"
#include "src/runnames.h"
#include "src/textesc.h"

static const char *type_name(uint32_t type)
{
	return xp_rec_kind_name(type);      /* the one name table, runnames.h */
}

static int known_type_name(const char *name)
{
	return xp_rec_kind_of_name(name) != 0;
}

static void print_ips(const uint64_t *ips, unsigned n, const char *label)
{
	printf(" %s=", label);
	for (unsigned i = 0; i < n; i++)
		printf(i ? ",%" PRIx64 : "%" PRIx64, ips[i]);
}

/* Prints the stack after a fixed struct (xp_record_check passed). */
static void print_stack(const struct xp_record_header *h, size_t fixed,
			const struct xp_stack *st)
{
	const uint64_t *ips = xp_record_stack_ips(h, fixed, st);

	struct xp_user_regs_copy regs;
	const uint8_t *bytes;

	printf(" flags=%" PRIu32, st->flags);
	print_ips(ips, st->kernel_depth, "kstack");
	print_ips(ips + st->kernel_depth, st->user_depth, "ustack");
	if (xp_record_user_copy(h, fixed, st, &regs, &bytes) == 0) {
		uint64_t first = 0;

		/* the first stack word: at a function's entry, its return address */
		if (regs.size >= 8)
			memcpy(&first, bytes, 8);
		printf(" copy=%" PRIu32 "@%" PRIx64 " ip=%" PRIx64 " bp=%" PRIx64 " word0=%" PRIx64,
		       regs.size, regs.sp, regs.ip, regs.bp, first);
		if (regs.key)   /* flag 32: a copy standing for the key; 64: its frames borrowed */
			printf(" key=%" PRIu32, regs.key);
	}
}

/* Text that follows a fixed struct, bounds-checked; NULL if too short. */
static const char *tail_text(const struct xp_record_header *h, size_t fixed, size_t len)
{
	if (fixed + len > xp_record_payload_len(h))
		return NULL;
	return (const char *)xp_record_payload(h) + fixed;
}

#define NEED(T) const T *r = p; if (len < sizeof(*r)) return -EBADMSG

static void print_memcpy(const struct xp_gpu_memcpy *r)
{
	printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " bytes=%" PRIu64
	       " kind=%u src=%u dst=%u dev=%" PRIu32 " stream=%" PRIu32 " graph=%" PRIu32
	       " node=%" PRIu64 " flags=%" PRIu32,
	       r->start, r->end, r->correlation_id, r->bytes, r->copy_kind, r->src_kind,
	       r->dst_kind, r->device, r->stream, r->graph_id, r->graph_node_id, r->flags);
}

/* GPU activity and life records: what ran on the device, the host's waits
 * and marks, CUPTI's overhead, graphs. */
static int print_gpu_activity(uint32_t type, const void *p, uint32_t len)
{
	switch (type) {
	case XP_REC_GPU_KERNEL: {
		NEED(struct xp_gpu_kernel);
		printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " dev=%" PRIu32
		       " ctx=%" PRIu32 " stream=%" PRIu32 " graph=%" PRIu32 " node=%" PRIu64
		       " grid=%d,%d,%d block=%d,%d,%d regs=%" PRIu32 " smem=%d dsmem=%d"
		       " name=%" PRIu32 " flags=%" PRIu32,
		       r->start, r->end, r->correlation_id, r->device, r->context, r->stream,
		       r->graph_id, r->graph_node_id, r->grid[0], r->grid[1], r->grid[2],
		       r->block[0], r->block[1], r->block[2], r->registers, r->static_shared,
		       r->dynamic_shared, r->name, r->flags);
		break;
	}
	case XP_REC_GPU_MEMCPY: {
		NEED(struct xp_gpu_memcpy);
		print_memcpy(r);
		break;
	}
	case XP_REC_GPU_MEMCPY_PEER: {
		NEED(struct xp_gpu_memcpy_peer);
		print_memcpy(&r->copy);
		printf(" src_dev=%" PRIu32 " src_ctx=%" PRIu32 " dst_dev=%" PRIu32 " dst_ctx=%" PRIu32,
		       r->src_device, r->src_context, r->dst_device, r->dst_context);
		break;
	}
	case XP_REC_GPU_MEMSET: {
		NEED(struct xp_gpu_memset);
		printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " bytes=%" PRIu64
		       " value=%" PRIu32 " dev=%" PRIu32 " stream=%" PRIu32 " graph=%" PRIu32
		       " node=%" PRIu64 " flags=%" PRIu32,
		       r->start, r->end, r->correlation_id, r->bytes, r->value, r->device,
		       r->stream, r->graph_id, r->graph_node_id, r->flags);
		break;
	}
	case XP_REC_GPU_SYNC: {
		NEED(struct xp_gpu_sync);
		printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " type=%" PRIu32
		       " ctx=%" PRIu32 " stream=%" PRIu32 " event=%" PRIu32 " ret=%" PRId32,
		       r->start, r->end, r->correlation_id, r->type, r->context, r->stream,
		       r->event, r->ret);
		break;
	}
	case XP_REC_GPU_NVTX: {
		NEED(struct xp_gpu_nvtx);
		printf(" ts=%" PRIu64 " id=%" PRIu64 " edge=%s pid=%" PRIu32 " tid=%" PRIu32
		       " name=%" PRIu32 " domain=%" PRIu32,
		       r->ts, r->id, r->edge == XP_NVTX_START ? "start" : r->edge == XP_NVTX_END ? "end" : "mark",
		       r->pid, r->tid, r->name, r->domain);
		break;
	}
	case XP_REC_GPU_OVERHEAD: {
		NEED(struct xp_gpu_overhead);
		printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " kind=%" PRIu32
		       " pid=%" PRIu32 " tid=%" PRIu32,
		       r->start, r->end, r->correlation_id, r->kind, r->pid, r->tid);
		break;
	}
	case XP_REC_GPU_RANK: {
		NEED(struct xp_gpu_rank);
		printf(" pid=%" PRIu32 " source=%s rank=%" PRId32 " local_rank=%" PRId32
		       " world_size=%" PRId32 " local_world_size=%" PRId32 " host=%s", r->pid,
		       xp_job_rank_source(r->source), r->rank, r->local_rank, r->world_size,
		       r->local_world_size, xp_escn(r->host, sizeof(r->host)));
		break;
	}
	case XP_REC_GPU_GRAPH: {
		NEED(struct xp_gpu_graph);
		printf(" ts=%" PRIu64 " event=%" PRIu32 " graph=%" PRIu32 " node=%" PRIu64
		       " orig_node=%" PRIu64 " orig_graph=%" PRIu32 " exec=%" PRIu32 " type=%" PRIu32
		       " corr=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32, r->ts, r->event, r->graph_id,
		       r->node_id, r->orig_node_id, r->orig_graph_id, r->exec_id, r->node_type,
		       r->correlation_id, r->pid, r->tid);
		break;
	}
	}
	return 0;
}

/* GPU stream records (runfmt_gpu.h), one line each; names stay string ids
 * (the gpu_string lines map them). */
static int print_gpu_record(const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_GPU_STRING: {
		NEED(struct xp_gpu_string);
		const char *s = tail_text(h, sizeof(*r), r->len);

		if (!s)
			return -EBADMSG;
		printf(" id=%" PRIu32 " text=%s", r->id, xp_escn(s, r->len));
		break;
	}
	case XP_REC_GPU_PROCESS: {
		NEED(struct xp_gpu_process);
		printf(" ts=%" PRIu64 " pid=%" PRIu32 " ns_pid=%" PRIu32 " ns_depth=%" PRIu32
		       " ppid=%" PRIu32 " init_tid=%" PRIu32 " cupti=%" PRIu32 " driver=%" PRIu32
		       " cuda=%" PRIu32 " clock=%s flags=%" PRIu32 " exe=%" PRIu32,
		       r->ts, r->pid, r->ns_pid, r->ns_depth, r->ppid, r->init_tid, r->cupti_version,
		       r->driver_version, r->cuda_version,
		       r->clock_method == XP_GPU_CLOCK_CALLBACK ? "monotonic-callback" :
		       r->clock_method == XP_GPU_CLOCK_CALIBRATED ? "calibrated" : "?",
		       r->flags, r->exe_name);
		break;
	}
	case XP_REC_GPU_DEVICE: {
		NEED(struct xp_gpu_device);
		printf(" id=%" PRIu32 " name=%" PRIu32 " sms=%" PRIu32 " cc=%" PRIu32 ".%" PRIu32
		       " mem=%" PRIu64 " mig=%" PRIu32 " uuid=",
		       r->id, r->name, r->sm_count, r->cc_major, r->cc_minor, r->global_memory, r->mig);
		for (int i = 0; i < 16; i++)
			printf("%02x", r->uuid[i]);
		break;
	}
	case XP_REC_GPU_CLOCK: {
		NEED(struct xp_gpu_clock);
		printf(" when=%" PRIu32 " mono_before=%" PRIu64 " cupti=%" PRIu64 " mono_after=%" PRIu64,
		       r->when, r->mono_before, r->cupti_ts, r->mono_after);
		break;
	}
	case XP_REC_GPU_STATUS: {
		NEED(struct xp_gpu_status);
		const char *s = tail_text(h, sizeof(*r), r->text_len);

		if (!s)
			return -EBADMSG;
		printf(" ts=%" PRIu64 " code=%" PRIu32 " severity=%" PRIu32 " detail=%" PRId32
		       " text=%s", r->ts, r->code, r->severity, r->detail, xp_escn(s, r->text_len));
		break;
	}
	case XP_REC_GPU_API: {
		NEED(struct xp_gpu_api);
		printf(" start=%" PRIu64 " end=%" PRIu64 " corr=%" PRIu64 " pid=%" PRIu32
		       " tid=%" PRIu32 " cbid=%" PRIu32 " name=%" PRIu32 " ret=%" PRId32 " flags=%" PRIu32,
		       r->start, r->end, r->correlation_id, r->pid, r->tid, r->cbid, r->name,
		       r->ret, r->flags);
		break;
	}
	default:
		return print_gpu_activity(h->type, p, len);
	}
	return 0;
}

/* The records of tasks and their mappings. */
static void print_task_record(const struct xp_record_header *h, const void *p)
{
	switch (h->type) {
	case XP_REC_FORK:
	case XP_REC_EXIT: {
		const struct xp_task *t = p;

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " ppid=%" PRIu32 " tid=%" PRIu32 " ptid=%" PRIu32,
		       t->ts, t->pid, t->ppid, t->tid, t->ptid);
		break;
	}
	case XP_REC_COMM: {
		const struct xp_comm *c = p;

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " exec=%d comm=%s",
		       c->ts, c->pid, c->tid, !!(c->flags & XP_COMM_EXEC), xp_escn(c->comm, 16));
		break;
	}
	case XP_REC_EXEC: {
		const struct xp_exec *e = p;
		const char *path = xp_record_path(h, sizeof(*e), e->path_len);

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " path=%s",
		       e->ts, e->pid, e->tid, xp_esc(path));
		break;
	}
	case XP_REC_MMAP: {
		const struct xp_mmap *m = p;
		const char *path = xp_record_path(h, sizeof(*m), m->path_len);

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " addr=%" PRIx64 " len=%" PRIx64
		       " pgoff=%" PRIx64 " prot=%" PRIu32 " flags=%" PRIu32 " build_id=",
		       m->ts, m->pid, m->addr, m->len, m->pgoff, m->prot, m->flags);
		for (unsigned i = 0; i < m->build_id_size && i < XP_BUILD_ID_MAX; i++)
			printf("%02x", m->build_id[i]);
		printf(" path=%s", xp_esc(path));
		break;
	}
	}
}

/* Prints one record after xp_record_check passed (so its fixed part is
 * whole); the tails of GPU and Python kinds are checked here. 0 or -EBADMSG. */
static int print_record(const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	const struct xp_rec_kind *k = xp_rec_kind_of(h->type);

	if (!k) {
		printf("unknown type=%" PRIu32 " size=%" PRIu32 "\n", h->type, h->size);
		return 0;
	}
	printf("%s", k->name);
	switch (h->type) {
	case XP_REC_SAMPLE: {
		const struct xp_sample *s = p;

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " cpu=%" PRIu32 " comm=%s",
		       s->ts, s->pid, s->tid, s->cpu, xp_escn(s->comm, 16));
		print_stack(h, sizeof(*s), &s->stack);
		break;
	}
	case XP_REC_FORK:
	case XP_REC_EXIT:
	case XP_REC_COMM:
	case XP_REC_EXEC:
	case XP_REC_MMAP:
		print_task_record(h, p);
		break;
	case XP_REC_LAUNCH: {
		const struct xp_launch *l = p;

		printf(" ts=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " cpu=%" PRIu32
		       " corr=%" PRIu64 " cbid=%" PRIu32,
		       l->ts, l->pid, l->tid, l->cpu, l->correlation_id, l->cbid);
		print_stack(h, sizeof(*l), &l->stack);
		break;
	}
	case XP_REC_SWITCH: {
		const struct xp_switch *s = p;

		printf(" ts=%" PRIu64 " dur=%" PRIu64 " pid=%" PRIu32 " tid=%" PRIu32 " state=%" PRIu32,
		       s->ts, s->duration_ns, s->pid, s->tid, s->prev_state);
		print_stack(h, sizeof(*s), &s->stack);
		break;
	}
	case XP_REC_LOST: {
		const struct xp_lost *l = p;

		printf(" ts=%" PRIu64 " kind=%s reason=%" PRIu32 " count=%" PRIu64,
		       l->ts, type_name(l->kind) ? type_name(l->kind) : l->kind ? "?" : "any",
		       l->reason, l->count);
		break;
	}
	default:
		/* the rest by stream: every kind of the table has its printer
		 * (tests/test-reckinds.c dumps one of each) */
		if (k->streams == XP_STREAM_GPU) {
			if (print_gpu_record(h))
				return -EBADMSG;
		} else if (xp_dump_py_record(h) <= 0) {
			return -EBADMSG;
		}
	}
	putchar('\n');
	return 0;
}

/* Dumps one stream; returns 0, or 1 after printing the error. */
static int dump_file(const char *path, const char *only, uint64_t *shown)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	const char *why = NULL;
	int err;

	err = xp_reader_open(&r, path);
	if (err && !r) {
		fprintf(stderr, "xpcorr: cannot read %s: %s\n", path, strerror(-err));
		return 1;
	}
	if (err)
		why = xp_reader_error(r);
	while (err == 0 && (err = xp_reader_next(r, &h)) > 0) {
		err = xp_record_check(h, &why);
		if (err)
			break;
		if (only && (!type_name(h->type) || strcmp(only, type_name(h->type))))
			continue;
		err = print_record(h);
		(*shown)++;
		if (err) {
			why = "record shorter than its type";
			break;
		}
	}
	if (err < 0 && !why)
		why = xp_reader_error(r);
	if (err < 0)
		fprintf(stderr, "xpcorr: %s at offset %" PRIu64 ": %s\n", path,
			xp_reader_offset(r), why);
	xp_reader_close(r);
	return err < 0;
}

static int is_stream(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".xpr");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *only = NULL;
	struct dirent **names;
	int c, n, failed = 0;
	uint64_t shown = 0;
	char path[4096];

	while ((c = getopt_long(argc, argv, "t:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			only = optarg;
			if (!known_type_name(only)) {
				fprintf(stderr, "xpcorr dump: --type %s: expected one of", only);
				for (unsigned i = 0; i < xp_rec_nkinds; i++)
					fprintf(stderr, "%s %s", i ? "," : "", xp_rec_kinds[i].name);
				fputc('\n', stderr);
				return XP_EXIT_USAGE;
			}
			break;
		case 'h':
			printf("usage: xpcorr dump [--type KIND] RUN_DIR|FILE.xpr\n");
			return XP_EXIT_OK;
		default:
			return XP_EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "xpcorr dump: expected one run directory or .xpr file\n");
		return XP_EXIT_USAGE;
	}
	if ((c = xp_cmd_need_path("xpcorr dump", argv[optind], "run directory or file")))
		return c;
	n = scandir(argv[optind], &names, is_stream, alphasort);
	if (n < 0 && errno == ENOTDIR) {
		failed = dump_file(argv[optind], only, &shown);
		goto done;
	}
	if (n < 0) {
		fprintf(stderr, "xpcorr: cannot read %s: %s\n", argv[optind], strerror(errno));
		return XP_EXIT_FAIL;
	}
	if (n == 0) {
		fprintf(stderr, "xpcorr dump: %s: no record stream (*.xpr) in it: not a run"
			" directory\n", argv[optind]);
		free(names);
		return XP_EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", argv[optind], names[i]->d_name);
		failed |= dump_file(path, only, &shown);
		free(names[i]);
	}
	free(names);
done:
	/* an empty answer says why: the run has no record of that kind */
	if (!failed && only && !shown)
		fprintf(stderr, "xpcorr dump: no %s record in %s\n", only, argv[optind]);
	return failed ? XP_EXIT_FAIL : XP_EXIT_OK;
}
