/* runfile.c - buffered writer and validating reader of *.xpr streams.
 * The writer is also compiled into the CUPTI injection library, so it uses
 * nothing but libc and never prints; compression comes in through struct
 * xp_block_codec (runfile_zstd.c), and only xpcommon's build, which
 * defines XP_RUNFILE_ZSTD, gives readers the zstd codec. */
#include "src/runfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "src/array.h"
#include "src/runnames.h"
#include "src/safeopen.h"

#ifdef XP_RUNFILE_ZSTD
#include "src/runfile_zstd.h"
#define READER_CODEC (&xp_zstd_codec)
#else
#define READER_CODEC NULL
#endif

#define WRITER_BUF_SIZE (1u << 20)  /* one write() per MiB of records */
#define READER_BUF_SIZE (1u << 16)

struct xp_writer {
	int fd;                     /* owned */
	int error;                  /* first write error, negative errno */
	uint64_t dropped;           /* records refused after an error */
	uint64_t bytes;             /* bytes written to the file, header included */
	uint64_t raw_bytes;         /* the same, counted before compression */
	size_t used;                /* bytes buffered */
	size_t head;                /* of which the file header, written as is */
	const struct xp_block_codec *codec;  /* NULL: plain records */
	void *codec_state;          /* the codec's, for this writer */
	unsigned char *zbuf;        /* one XP_REC_ZBLOCK record being written */
	size_t zcap;
	unsigned char buf[WRITER_BUF_SIZE];
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int xp_writer_open_fd(struct xp_writer **out, int fd, uint32_t stream,
		      uint32_t pid)
{
	struct xp_file_header hdr;
	struct xp_writer *w;

	w = calloc(1, sizeof(*w));
	if (!w) {
		close(fd);
		return -ENOMEM;
	}
	w->fd = fd;
	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, XP_MAGIC, sizeof(hdr.magic));
	hdr.version = XP_FORMAT_VERSION;
	hdr.header_size = sizeof(hdr);
	hdr.stream = stream;
	hdr.clock = XP_CLOCK_MONOTONIC;
	hdr.pid = pid;
	hdr.created_ns = monotonic_ns();
	memcpy(w->buf, &hdr, sizeof(hdr));
	w->used = sizeof(hdr);
	w->head = sizeof(hdr);
	*out = w;
	return 0;
}

int xp_writer_set_codec(struct xp_writer *w, const struct xp_block_codec *codec)
{
	size_t cap = sizeof(struct xp_record_header) + sizeof(struct xp_zblock) +
		     codec->bound(WRITER_BUF_SIZE) + XP_RECORD_ALIGN;
	unsigned char *p;
	void *state;

	if (w->codec)
		return -EBUSY;
	p = malloc(cap);
	if (!p)
		return -ENOMEM;
	if (codec->encoder_new(&state)) {
		free(p);
		return -ENOMEM;
	}
	w->zbuf = p;
	w->zcap = cap;
	w->codec = codec;
	w->codec_state = state;
	return 0;
}

/* The buffered records as one XP_REC_ZBLOCK record in w->zbuf: its size,
 * or 0 when compressing does not pay or fails (then they go out plain). */
static size_t encode_block(struct xp_writer *w, const unsigned char *recs, size_t len)
{
	struct xp_record_header *h = (void *)w->zbuf;
	struct xp_zblock *z = (void *)(h + 1);
	size_t hl = sizeof(*h) + sizeof(*z), n, total;

	if (w->codec->encode(w->codec_state, w->zbuf + hl, w->zcap - hl - XP_RECORD_ALIGN, recs,
			     len, &n))
		return 0;
	total = XP_ALIGN8(hl + n);
	if (total >= len || total > XP_RECORD_MAX)
		return 0;
	h->type = XP_REC_ZBLOCK;
	h->size = (uint32_t)total;
	z->raw_size = len;
	z->frame_size = (uint32_t)n;
	z->pad = 0;
	memset(w->zbuf + hl + n, 0, total - hl - n);
	return total;
}

/* Writes the buffer: the file header as is, records through the codec;
 * *written: the bytes that reached the file whole (after an error, the
 * header alone if it got there: a file cut back to it stays readable). */
static int write_buffer(struct xp_writer *w, size_t *written)
{
	size_t z = 0;
	int err;

	*written = 0;
	if (w->codec && w->used > w->head)
		z = encode_block(w, w->buf + w->head, w->used - w->head);
	err = write_all(w->fd, w->buf, w->head);
	if (err)
		return err;
	*written = w->head;
	err = z ? write_all(w->fd, w->zbuf, z) : write_all(w->fd, w->buf + w->head, w->used - w->head);
	if (!err)
		*written += z ? z : w->used - w->head;
	return err;
}

int xp_writer_open(struct xp_writer **out, const char *path, uint32_t stream,
		   uint32_t pid)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	return xp_writer_open_fd(out, fd, stream, pid);
}

int xp_writer_flush(struct xp_writer *w)
{
	size_t written;
	int err;

	if (w->error)
		return w->error;
	if (w->used == 0)
		return 0;
	err = write_buffer(w, &written);
	if (err) {
		/* a full disk can take half a block: cut the file back to the
		 * last whole one, so that it still ends cleanly */
		w->bytes += written;
		if (ftruncate(w->fd, (off_t)w->bytes) == 0)
			lseek(w->fd, (off_t)w->bytes, SEEK_SET);
		w->error = err;
		return err;
	}
	w->bytes += written;
	w->raw_bytes += w->used;
	w->used = 0;
	w->head = 0;
	return 0;
}

int xp_writer_append(struct xp_writer *w, uint32_t type, const void *fixed,
		     size_t fixed_len, const void *tail, size_t tail_len)
{
	struct xp_record_header h;
	size_t payload = fixed_len + tail_len;
	size_t total;
	unsigned char *dst;

	if (payload > XP_RECORD_MAX - sizeof(h))
		return -EMSGSIZE;
	total = XP_ALIGN8(sizeof(h) + payload);
	if (w->error) {
		w->dropped++;
		return w->error;
	}
	if (w->used + total > sizeof(w->buf) && xp_writer_flush(w)) {
		w->dropped++;
		return w->error;
	}
	h.type = type;
	h.size = (uint32_t)total;
	dst = w->buf + w->used;
	memcpy(dst, &h, sizeof(h));
	if (fixed_len)
		memcpy(dst + sizeof(h), fixed, fixed_len);
	if (tail_len)
		memcpy(dst + sizeof(h) + fixed_len, tail, tail_len);
	memset(dst + sizeof(h) + payload, 0, total - sizeof(h) - payload);
	w->used += total;
	return 0;
}

uint64_t xp_writer_dropped(const struct xp_writer *w)
{
	return w->dropped;
}

/* after a write error the buffer never reaches the file */
uint64_t xp_writer_bytes(const struct xp_writer *w)
{
	return w->bytes + (w->error ? 0 : w->used);
}

uint64_t xp_writer_flushed_bytes(const struct xp_writer *w)
{
	return w->bytes;
}

uint64_t xp_writer_raw_bytes(const struct xp_writer *w)
{
	return w->raw_bytes + (w->error ? 0 : w->used);
}

int xp_writer_close(struct xp_writer *w)
{
	int err;

	if (!w)
		return 0;
	xp_writer_flush(w);
	err = w->error;
	if (close(w->fd) && !err)
		err = -errno;
	if (w->codec)
		w->codec->encoder_free(w->codec_state);
	free(w->zbuf);
	free(w);
	return err;
}

struct xp_reader;
static int read_record(struct xp_reader *r, const struct xp_record_header **rec);

struct xp_reader {
	FILE *f;                    /* owned */
	struct xp_file_header hdr;  /* as read, header_size clipped to ours */
	uint64_t offset;            /* file offset of the record in rec */
	uint64_t next_offset;       /* file offset after it */
	const char *error;          /* static text after a failure */
	unsigned char *rec;         /* current record, grown up to XP_RECORD_MAX */
	size_t rec_cap;
	const struct xp_block_codec *codec;  /* for XP_REC_ZBLOCK, or NULL */
	unsigned char *block;       /* records of the last zblock, expanded */
	size_t block_cap;
	size_t block_len;           /* bytes of records in block */
	size_t block_pos;           /* next record in block */
	struct xp_read_budget *budget;  /* the caller's, or &own */
	struct xp_read_budget own;  /* without one: this reader's counts, the default */
};

static int reader_fail(struct xp_reader *r, int err, const char *what)
{
	r->error = what;
	return err;
}

/* Reads exactly len bytes; 0, -ENODATA at a short read, -errno. */
static int read_exact(struct xp_reader *r, void *dst, size_t len, int *got_any)
{
	size_t n = fread(dst, 1, len, r->f);

	*got_any = n > 0;
	if (n == len)
		return 0;
	if (ferror(r->f))
		return -EIO;
	return -ENODATA;
}

int xp_run_file_open(const char *path)
{
	struct stat st;

	return xp_open_regular(AT_FDCWD, path, 0, &st);
}

const char *xp_run_file_strerror(int err)
{
	if (err == -ELOOP)
		return "a symbolic link, not followed";
	if (err == -ENXIO)
		return "not a regular file";
	return strerror(err < 0 ? -err : err);
}

FILE *xp_run_file_fopen(const char *path)
{
	int fd = xp_run_file_open(path);
	FILE *f;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		int err = errno;

		close(fd);
		errno = err;
	}
	return f;
}

int xp_reader_open(struct xp_reader **out, const char *path)
{
	struct xp_reader *r;
	int got_any, err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->f = xp_run_file_fopen(path);
	if (!r->f) {
		err = -errno;
		free(r);
		return err;
	}
	setvbuf(r->f, NULL, _IOFBF, READER_BUF_SIZE);
	r->codec = READER_CODEC;
	xp_reader_set_budget(r, NULL);
	*out = r;
	err = read_exact(r, &r->hdr, sizeof(r->hdr), &got_any);
	if (err == -ENODATA)
		return reader_fail(r, -EBADMSG, got_any ? "file header truncated" : "empty file");
	if (err)
		return reader_fail(r, err, "read error");
	if (memcmp(r->hdr.magic, XP_MAGIC, sizeof(r->hdr.magic)) != 0)
		return reader_fail(r, -EBADMSG, "not an xpcap record stream (bad magic)");
	if (r->hdr.version == 0 || r->hdr.version > XP_FORMAT_VERSION)
		return reader_fail(r, -EPROTO, "format version newer than this reader");
	if (r->hdr.header_size < sizeof(r->hdr) || r->hdr.header_size > 4096 ||
	    r->hdr.header_size % XP_RECORD_ALIGN)
		return reader_fail(r, -EBADMSG, "bad header size");
	if (fseeko(r->f, r->hdr.header_size, SEEK_SET))
		return reader_fail(r, -EIO, "seek error");
	r->next_offset = r->hdr.header_size;
	r->offset = r->next_offset;
	return 0;
}

void xp_reader_set_budget(struct xp_reader *r, struct xp_read_budget *b)
{
	if (!b) {
		r->own = (struct xp_read_budget){ .records = UINT64_MAX };
		b = &r->own;
	}
	if (!b->expand)
		b->expand = XP_READ_EXPAND_DEFAULT;
	r->budget = b;
}

/* Bytes or records allowed out of blocks, per the budget's expansion of
 * the bytes its readers read from disk (this one's so far included), never
 * less than the free allowance. */
static uint64_t allowance(const struct xp_reader *r, uint64_t unit, uint64_t free)
{
	uint64_t file = r->budget->disk + r->next_offset, per_unit = r->budget->expand;
	uint64_t n = file > UINT64_MAX / per_unit ? UINT64_MAX : file * per_unit / unit;

	return n > free ? n : free;
}

static int over_budget(struct xp_reader *r, int which, const char *what)
{
	r->block_len = 0;
	r->budget->over = which;
	return reader_fail(r, -E2BIG, what);
}

/* Counts one record against the budget: 0, or -E2BIG when it goes over. */
static int spend_record(struct xp_reader *r, int from_block)
{
	struct xp_read_budget *b = r->budget;

	if (from_block && ++b->zrecords > allowance(r, 1000, XP_READ_EXPAND_FREE_RECORDS))
		return over_budget(r, XP_BUDGET_EXPAND, "compressed blocks hold more records per"
				   " byte on disk than the budget allows (a zstd bomb?)");
	if (b->records == 0)
		return over_budget(r, XP_BUDGET_RECORDS, "more records than the budget allows");
	b->records--;
	return 0;
}

/* Grows r->block to hold n bytes. */
static int block_reserve(struct xp_reader *r, size_t n)
{
	return xp_array__reserve((void **)&r->block, &r->block_cap, n, 1, 4096);
}

/* Expands the zblock in r->rec into r->block. */
static int expand_block(struct xp_reader *r)
{
	const struct xp_record_header *h = (const void *)r->rec;
	const struct xp_zblock *z = (const void *)(h + 1);
	size_t room = h->size - sizeof(*h);

	if (!r->codec)
		return reader_fail(r, -EPROTO, "compressed block, and this reader has no zstd");
	if (room < sizeof(*z) || z->frame_size > room - sizeof(*z))
		return reader_fail(r, -EBADMSG, "compressed block shorter than its frame");
	if (z->raw_size < sizeof(*h) || z->raw_size > XP_ZBLOCK_RAW_MAX ||
	    z->raw_size % XP_RECORD_ALIGN)
		return reader_fail(r, -EBADMSG, "compressed block with a bad raw size");
	/* checked before decoding: a bomb costs no time either */
	r->budget->zraw += z->raw_size;
	if (r->budget->zraw > allowance(r, 1, XP_READ_EXPAND_FREE_BYTES))
		return over_budget(r, XP_BUDGET_EXPAND, "compressed blocks expand more than the"
				   " budget allows (a zstd bomb?)");
	if (block_reserve(r, z->raw_size))
		return reader_fail(r, -ENOMEM, "out of memory");
	if (r->codec->decode(r->block, z->raw_size, z + 1, z->frame_size))
		return reader_fail(r, -EBADMSG, "corrupt compressed block");
	r->block_len = z->raw_size;
	r->block_pos = 0;
	return 0;
}

/* The next record of the expanded block, checked like one from the file. */
static int next_in_block(struct xp_reader *r, const struct xp_record_header **rec)
{
	const struct xp_record_header *h = (const void *)(r->block + r->block_pos);
	size_t left = r->block_len - r->block_pos;

	if (left < sizeof(*h) || h->size < sizeof(*h) || h->size % XP_RECORD_ALIGN ||
	    h->size > left || h->size > XP_RECORD_MAX) {
		r->block_len = 0;
		return reader_fail(r, -EBADMSG, "bad record inside a compressed block");
	}
	if (h->type == XP_REC_ZBLOCK) {
		r->block_len = 0;
		return reader_fail(r, -EBADMSG, "compressed block inside a compressed block");
	}
	if (spend_record(r, 1))
		return -E2BIG;
	r->block_pos += h->size;
	*rec = h;
	return 1;
}

int xp_reader_next(struct xp_reader *r, const struct xp_record_header **rec)
{
	if (r->block_pos < r->block_len)
		return next_in_block(r, rec);
	for (;;) {
		int err = read_record(r, rec);

		if (err <= 0)
			return err;
		if ((*rec)->type != XP_REC_ZBLOCK)
			return spend_record(r, 0) ?: 1;
		err = expand_block(r);
		if (err)
			return err;
		if (r->block_len)
			return next_in_block(r, rec);
	}
}

static int read_record(struct xp_reader *r, const struct xp_record_header **rec)
{
	struct xp_record_header h;
	int got_any, err;

	r->offset = r->next_offset;
	err = read_exact(r, &h, sizeof(h), &got_any);
	if (err == -ENODATA)
		return got_any ? reader_fail(r, -ENODATA, "truncated record header") : 0;
	if (err)
		return reader_fail(r, err, "read error");
	if (h.size < sizeof(h) || h.size % XP_RECORD_ALIGN)
		return reader_fail(r, -EBADMSG, "bad record size");
	if (h.size > XP_RECORD_MAX)
		return reader_fail(r, -EBADMSG, "record larger than the format allows");
	if (xp_array__reserve((void **)&r->rec, &r->rec_cap, h.size, 1, 4096))
		return reader_fail(r, -ENOMEM, "out of memory");
	memcpy(r->rec, &h, sizeof(h));
	err = read_exact(r, r->rec + sizeof(h), h.size - sizeof(h), &got_any);
	if (err == -ENODATA)
		return reader_fail(r, -ENODATA, "truncated record");
	if (err)
		return reader_fail(r, err, "read error");
	r->next_offset += h.size;
	*rec = (const struct xp_record_header *)r->rec;
	return 1;
}

const struct xp_file_header *xp_reader_header(const struct xp_reader *r)
{
	return &r->hdr;
}

uint64_t xp_reader_offset(const struct xp_reader *r)
{
	return r->offset;
}

const char *xp_reader_error(const struct xp_reader *r)
{
	return r->error ? r->error : "no error";
}

void xp_reader_close(struct xp_reader *r)
{
	if (!r)
		return;
	r->budget->disk += r->next_offset;
	if (r->f)
		fclose(r->f);
	free(r->rec);
	free(r->block);
	free(r);
}

const uint64_t *xp_record_stack_ips(const struct xp_record_header *h,
				    size_t fixed, const struct xp_stack *st)
{
	size_t need = fixed + ((size_t)st->user_depth + st->kernel_depth) * 8;

	if (st->user_depth > XP_MAX_STACK_DEPTH || st->kernel_depth > XP_MAX_STACK_DEPTH)
		return NULL;
	if (need > xp_record_payload_len(h))
		return NULL;
	return (const uint64_t *)((const unsigned char *)xp_record_payload(h) + fixed);
}

const char *xp_record_path(const struct xp_record_header *h, size_t fixed,
			   uint16_t path_len)
{
	const char *path = (const char *)xp_record_payload(h) + fixed;

	if (fixed + (size_t)path_len + 1 > xp_record_payload_len(h))
		return NULL;
	if (path[path_len] != '\0' || memchr(path, '\0', path_len))
		return NULL;
	return path;
}

#include <stddef.h>
#define STACK_LAST(t) _Static_assert(offsetof(struct t, stack) + sizeof(struct xp_stack) == \
				     sizeof(struct t), #t ": stack must be the last member")
STACK_LAST(xp_sample);
STACK_LAST(xp_launch);
STACK_LAST(xp_switch);

int xp_record_user_copy(const struct xp_record_header *h, size_t fixed,
			const struct xp_stack *st, struct xp_user_regs_copy *regs,
			const uint8_t **bytes)
{
	const unsigned char *ips = (const void *)xp_record_stack_ips(h, fixed, st);
	size_t at, len = xp_record_payload_len(h);

	if (!ips)
		return -EBADMSG;
	if (!(st->flags & XP_STACK_HAS_USER_COPY))
		return -ENOENT;
	at = fixed + ((size_t)st->user_depth + st->kernel_depth) * 8;
	if (at + sizeof(*regs) > len)
		return -EBADMSG;
	memcpy(regs, (const unsigned char *)xp_record_payload(h) + at, sizeof(*regs));
	if (regs->size > XP_USER_COPY_MAX || regs->size % 8 ||
	    at + sizeof(*regs) + regs->size > len)
		return -EBADMSG;
	*bytes = (const uint8_t *)xp_record_payload(h) + at + sizeof(*regs);
	return 0;
}

static int stack_fits(const struct xp_record_header *h, size_t fixed)
{
	const struct xp_stack *st;
	struct xp_user_regs_copy regs;
	const uint8_t *bytes;

	st = (const void *)((const unsigned char *)xp_record_payload(h) + fixed - sizeof(*st));
	if (!xp_record_stack_ips(h, fixed, st))
		return 0;
	return !(st->flags & XP_STACK_HAS_USER_COPY) ||
	       xp_record_user_copy(h, fixed, st, &regs, &bytes) == 0;
}

int xp_record_check(const struct xp_record_header *h, const char **why)
{
	const struct xp_rec_kind *k = xp_rec_kind_of(h->type);
	const void *p = xp_record_payload(h);
	uint32_t fixed;

	if (!k)
		return 0;   /* a kind this reader does not know: its readers skip it */
	fixed = k->fixed;
	*why = "record shorter than its type";
	if (xp_record_payload_len(h) < fixed)
		return -EBADMSG;
	*why = "stack depth or user stack copy beyond the record";
	switch (h->type) {
	case XP_REC_SAMPLE:
	case XP_REC_LAUNCH:
	case XP_REC_SWITCH:
		/* xp_stack is the last member of each of these structs */
		return stack_fits(h, fixed) ? 0 : -EBADMSG;
	case XP_REC_EXEC:
		*why = "bad path in record";
		return xp_record_path(h, fixed, ((const struct xp_exec *)p)->path_len) ? 0 : -EBADMSG;
	case XP_REC_MMAP:
		*why = "bad path in record";
		if (((const struct xp_mmap *)p)->build_id_size > XP_BUILD_ID_MAX)
			return -EBADMSG;
		return xp_record_path(h, fixed, ((const struct xp_mmap *)p)->path_len) ? 0 : -EBADMSG;
	}
	return 0;
}
