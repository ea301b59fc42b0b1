/* runfile.h - write and read *.xpr record streams (format in runfmt.h).
 *
 * The writer buffers records and writes large sequential blocks, so memory
 * stays bounded by its buffer whatever the length of the run:
 *
 *   struct xp_writer *w;
 *   if (xp_writer_open(&w, "run/cpu.xpr", XP_STREAM_CPU, 0) == 0) {
 *       xp_writer_append(w, XP_REC_SAMPLE, &sample, sizeof(sample), ips, nbytes);
 *       xp_writer_close(w);
 *   }
 *
 * The reader validates as it goes and stops at the first bad byte, telling
 * the offset; what came before stays usable:
 *
 *   struct xp_reader *r; const struct xp_record_header *rec;
 *   xp_reader_open(&r, "run/cpu.xpr");
 *   while ((err = xp_reader_next(r, &rec)) > 0) ...;
 *   if (err < 0) fprintf(stderr, "%s at offset %llu: %s\n", path,
 *                        xp_reader_offset(r), xp_reader_error(r));
 *
 * Both return 0 or a negative errno; no function here prints or exits.
 */
#ifndef XP_RUNFILE_H
#define XP_RUNFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "src/runfmt.h"

struct xp_writer;
struct xp_reader;

/* A block compressor, for XP_REC_ZBLOCK. runfile.c itself links nothing
 * but libc (it is also built into the CUPTI injection library, whose
 * writer never compresses); runfile_zstd.c provides xp_zstd_codec, and
 * xpcommon's build of runfile.c (XP_RUNFILE_ZSTD) makes readers use it. */
struct xp_block_codec {
	const char *name;           /* "zstd" */
	/* Largest encoding of len bytes. */
	size_t (*bound)(size_t len);
	/* A writer's encoder state: 0 and *state, or -ENOMEM; freed by
	 * encoder_free (which accepts NULL). */
	int (*encoder_new)(void **state);
	void (*encoder_free)(void *state);
	/* Encodes src into dst (cap bytes): 0 and *out_len, or -errno. */
	int (*encode)(void *state, void *dst, size_t cap, const void *src, size_t len,
		      size_t *out_len);
	/* Decodes exactly raw_len bytes into dst: 0, or -EBADMSG. */
	int (*decode)(void *dst, size_t raw_len, const void *src, size_t len);
};

/* Creates path (O_EXCL: never overwrites) and writes the header. */
int xp_writer_open(struct xp_writer **out, const char *path,
		   uint32_t stream, uint32_t pid);
/* Same, on a file descriptor the caller opened; the writer takes it. */
int xp_writer_open_fd(struct xp_writer **out, int fd, uint32_t stream,
		      uint32_t pid);
/* Appends one record: a fixed part and an optional variable tail, padded
 * to 8 bytes. Returns -EMSGSIZE above XP_RECORD_MAX, -errno on write error
 * (the writer then drops further records and counts them). */
int xp_writer_append(struct xp_writer *w, uint32_t type, const void *fixed,
		     size_t fixed_len, const void *tail, size_t tail_len);
/* From now on, each buffer of records is written as one XP_REC_ZBLOCK
 * (or as plain records when that would not be smaller). 0 or -ENOMEM. */
int xp_writer_set_codec(struct xp_writer *w, const struct xp_block_codec *codec);
/* Writes what is buffered; records are whole on disk after this. On a
 * write error (a full disk) the file is cut back to its last whole buffer,
 * so it stays readable to there, and the writer takes nothing more. */
int xp_writer_flush(struct xp_writer *w);
/* Records given to append but not written because of an earlier error. */
uint64_t xp_writer_dropped(const struct xp_writer *w);
uint64_t xp_writer_bytes(const struct xp_writer *w);
/* Of those, the bytes already in the file: grows with every flush, so a
 * caller sees when the records it appended reached the disk. */
uint64_t xp_writer_flushed_bytes(const struct xp_writer *w);
/* The same before compression: header plus records as appended. */
uint64_t xp_writer_raw_bytes(const struct xp_writer *w);
/* Flushes, fsyncs nothing, closes, frees; accepts NULL. Returns the first
 * write error seen during the writer's life, else 0. */
int xp_writer_close(struct xp_writer *w);

/* Opens a file of a run directory for reading (safeopen.h): a fd, or
 * -ELOOP for a symbolic link (never followed: a run may come from someone
 * else, and root may be the one reading it), -ENXIO for anything but a
 * regular file (a FIFO would block, a device never end), -errno. */
int xp_run_file_open(const char *path);
/* FILE * over xp_run_file_open, or NULL with errno set. */
FILE *xp_run_file_fopen(const char *path);
/* What an error of xp_run_file_open means, for a message: "a symbolic
 * link, not followed", "not a regular file", else strerror's text. */
const char *xp_run_file_strerror(int err);

int xp_reader_open(struct xp_reader **out, const char *path);

/* What the readers of a run may take from files that came from someone
 * else: a zstd bomb (a few KiB on disk that expand to GiB of records) or
 * billions of records end the stream with -E2BIG at the record that went
 * over, the records before it stay. One budget for the whole run, shared by
 * its readers one after the other: a run of many small streams gets no more
 * than one stream of their size. xpcap's own streams expand 6x (12 bytes a
 * record on disk, -F 20000 frame pointers) to 50x (95 bytes, dwarf). */
struct xp_read_budget {
	uint64_t records;           /* records still allowed */
	uint32_t expand;            /* compressed blocks decode to at most expand times the
				       bytes read from disk, and to expand / 1000 records
				       per byte */
	int over;                   /* set by the reader that went over: XP_BUDGET_* */
	uint64_t disk;              /* bytes read by the readers closed so far */
	uint64_t zraw, zrecords;    /* bytes and records that came out of blocks so far */
};
enum { XP_BUDGET_RECORDS = 1, XP_BUDGET_EXPAND };
#define XP_READ_EXPAND_DEFAULT 1000
#define XP_READ_RECORDS_DEFAULT 1000000000ull
/* Below these, blocks are never refused for expanding (small runs): per
 * budget, so per run; a reader without one has them to itself. */
#define XP_READ_EXPAND_FREE_BYTES (64ull << 20)
#define XP_READ_EXPAND_FREE_RECORDS (1ull << 20)
/* Every reader checks expansion at XP_READ_EXPAND_DEFAULT; with a budget,
 * at b->expand and over all the readers of b, and it counts records
 * against b->records (b: the caller's, kept while the reader is open,
 * which adds its bytes to b->disk when closed; NULL: back to the default
 * and a reader's own counts). */
void xp_reader_set_budget(struct xp_reader *r, struct xp_read_budget *b);
/* 1 and *rec set: a record (valid until the next call); 0: clean end;
 * -EBADMSG: corrupt; -ENODATA: truncated tail; -EPROTO: unsupported
 * version, or a compressed block and no codec; -E2BIG: over the budget
 * (xp_reader_set_budget); other -errno: I/O.
 * Compressed blocks are expanded: their records come out one by one, and
 * xp_reader_offset() is then the offset of the block. */
int xp_reader_next(struct xp_reader *r, const struct xp_record_header **rec);
const struct xp_file_header *xp_reader_header(const struct xp_reader *r);
/* Offset in the file of the last record returned, or of the error. */
uint64_t xp_reader_offset(const struct xp_reader *r);
/* What is wrong, in a few words, after a negative return. */
const char *xp_reader_error(const struct xp_reader *r);
void xp_reader_close(struct xp_reader *r);

/* Payload of a record and its length, for the typed accessors below. */
static inline const void *xp_record_payload(const struct xp_record_header *h)
{
	return h + 1;
}

static inline uint32_t xp_record_payload_len(const struct xp_record_header *h)
{
	return h->size - (uint32_t)sizeof(*h);
}

/* Validates a record whose payload starts with a fixed struct of `fixed`
 * bytes followed by a stack: returns the IP array or NULL if the record is
 * too short for the depths it claims. */
const uint64_t *xp_record_stack_ips(const struct xp_record_header *h,
				    size_t fixed, const struct xp_stack *st);
/* Dwarf mode: the registers and user stack bytes after the IPs of a
 * stack record (fixed: size of the struct ending with st). 0 and regs,
 * bytes set (bytes valid while h is); -ENOENT: the stack has no copy;
 * -EBADMSG: the record is too short for the copy it claims. */
int xp_record_user_copy(const struct xp_record_header *h, size_t fixed,
			const struct xp_stack *st, struct xp_user_regs_copy *regs,
			const uint8_t **bytes);
/* Checks that a record of a type this version knows is long enough for its
 * fixed part (every kind's, from the table in runnames.h) and for the stacks
 * and paths of the CPU kinds: 0, or -EBADMSG with
 * *why set. Unknown types pass (readers skip them). Every consumer calls
 * this before touching a payload, so validation lives in one place. */
int xp_record_check(const struct xp_record_header *h, const char **why);

/* The path that follows a struct xp_mmap or xp_exec, bounds-checked;
 * NULL if the record is too short for path_len. */
const char *xp_record_path(const struct xp_record_header *h, size_t fixed,
			   uint16_t path_len);

#endif
