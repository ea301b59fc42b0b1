/* output.c - the one output stream of this process, run/gpu-<pid>.xpr.
 *
 * The run-file writer (src/runfile.c) is not thread-safe, and both CUPTI's
 * buffer thread and every thread making CUDA calls append to it, so each
 * append takes out_lock for the length of a memcpy into the writer's 1 MiB
 * buffer (and, once per MiB, the write()). Neither side takes it per record:
 * API records are batched per thread (callbacks.c), converted records are
 * staged here and appended a chunk at a time (xpc_stage_emit), because a
 * launch thread and the conversion thread fighting over the lock for every
 * record cost microseconds per launch on the H100. At exit the stream is flushed and
 * closed for appends, but the writer is never freed: threads still running
 * during exit may call in, and must find a valid (closed) stream.
 *
 *   xpc_out_open("/tmp/run", getpid());
 *   xpc_emit(NULL, XP_REC_GPU_API, &api, sizeof(api), NULL, 0);
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti/xpcupti.h"

uint64_t xpc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void xpc_log(const char *fmt, ...)
{
	static int logged;
	char line[512];
	va_list ap;
	int n;

	if (__atomic_exchange_n(&logged, 1, __ATOMIC_RELAXED))
		return;
	memcpy(line, XPC_LOG_PREFIX, sizeof(XPC_LOG_PREFIX) - 1);
	va_start(ap, fmt);
	n = vsnprintf(line + sizeof(XPC_LOG_PREFIX) - 1,
		      sizeof(line) - sizeof(XPC_LOG_PREFIX) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	n = (int)strlen(line);
	line[n++] = '\n';
	/* One write(): no stdio buffers of the host program involved. */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

/* The directory must be absolute and free of "..": the library runs inside
 * someone else's program and must never write outside the run directory. */
static int dir_ok(const char *dir)
{
	if (!dir || dir[0] != '/')
		return 0;
	for (const char *p = dir; (p = strstr(p, "..")); p += 2)
		if ((p == dir || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
			return 0;
	return 1;
}

int xpc_run_file_create(const char *dir, const char *name)
{
	int dfd, fd, err;

	if (!dir_ok(dir))
		return -EINVAL;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : 0;
	close(dfd);
	return err ? err : fd;
}

int xpc_out_open(const char *dir, pid_t pid)
{
	char name[64];
	int fd, err;

	snprintf(name, sizeof(name), "gpu-%d.xpr", (int)pid);
	fd = xpc_run_file_create(dir, name);
	if (fd < 0)
		return fd;
	pthread_mutex_lock(&xpc.out_lock);
	err = xp_writer_open_fd(&xpc.w, fd, XP_STREAM_GPU, (uint32_t)pid);
	pthread_mutex_unlock(&xpc.out_lock);
	return err;
}

int xpc_emit(void *ctx, uint32_t type, const void *fixed, size_t fixed_len,
	     const void *tail, size_t tail_len)
{
	int err = -EPIPE;

	(void)ctx;
	pthread_mutex_lock(&xpc.out_lock);
	if (xpc.w && !xpc.out_closed)
		err = xp_writer_append(xpc.w, type, fixed, fixed_len, tail, tail_len);
	pthread_mutex_unlock(&xpc.out_lock);
	return err;
}

/* Conversion staging: only touched under conv_lock. */
#define STAGE_SIZE (256u << 10)
static unsigned char stage[STAGE_SIZE];
static size_t stage_used;

void xpc_stage_flush(void)
{
	size_t off = 0;

	if (!stage_used)
		return;
	pthread_mutex_lock(&xpc.out_lock);
	while (off < stage_used) {
		const struct xp_record_header *h = (const void *)(stage + off);

		if (xpc.w && !xpc.out_closed)
			xp_writer_append(xpc.w, h->type, h + 1, h->size - sizeof(*h), NULL, 0);
		off += h->size;
	}
	pthread_mutex_unlock(&xpc.out_lock);
	stage_used = 0;
}

int xpc_stage_emit(void *ctx, uint32_t type, const void *fixed, size_t fixed_len,
		   const void *tail, size_t tail_len)
{
	struct xp_record_header h;
	size_t payload = fixed_len + tail_len;
	size_t total = XP_ALIGN8(sizeof(h) + payload);
	unsigned char *dst;

	if (total > STAGE_SIZE / 4) {
		xpc_stage_flush();
		return xpc_emit(ctx, type, fixed, fixed_len, tail, tail_len);
	}
	if (stage_used + total > STAGE_SIZE)
		xpc_stage_flush();
	h.type = type;
	h.size = (uint32_t)total;
	dst = stage + stage_used;
	memcpy(dst, &h, sizeof(h));
	memcpy(dst + sizeof(h), fixed, fixed_len);
	if (tail_len)
		memcpy(dst + sizeof(h) + fixed_len, tail, tail_len);
	memset(dst + sizeof(h) + payload, 0, total - sizeof(h) - payload);
	stage_used += total;
	return 0;
}

void xpc_out_flush(void)
{
	pthread_mutex_lock(&xpc.out_lock);
	if (xpc.w && !xpc.out_closed)
		xp_writer_flush(xpc.w);
	pthread_mutex_unlock(&xpc.out_lock);
}

void xpc_out_finish(void)
{
	struct xp_lost l;

	pthread_mutex_lock(&xpc.out_lock);
	if (xpc.w && !xpc.out_closed) {
		/* Records refused after a write error: say how many, in case the
		 * error was transient and this one gets through. */
		if (xp_writer_dropped(xpc.w)) {
			memset(&l, 0, sizeof(l));
			l.ts = xpc_now();
			l.reason = XP_LOST_WRITE;
			l.count = xp_writer_dropped(xpc.w);
			xp_writer_append(xpc.w, XP_REC_LOST, &l, sizeof(l), NULL, 0);
		}
		xp_writer_flush(xpc.w);
		xpc.out_closed = 1;
	}
	pthread_mutex_unlock(&xpc.out_lock);
}

void xpc_status(uint32_t code, uint32_t severity, int32_t detail, const char *text)
{
	struct xp_gpu_status st;

	memset(&st, 0, sizeof(st));
	st.ts = xpc_now();
	st.code = code;
	st.severity = severity;
	st.detail = detail;
	st.text_len = text ? (uint16_t)strnlen(text, 1024) : 0;
	xpc_emit(NULL, XP_REC_GPU_STATUS, &st, sizeof(st), text, st.text_len);
}
