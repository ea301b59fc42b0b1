/* jsonw.c - streaming JSON writer (see jsonw.h). Hot path of traces with
 * millions of events: unlocked stdio, strings written by runs of plain
 * characters, integers formatted by hand (fprintf costs ~10x more). */
#include "export/render/jsonw.h"
#include "src/utf8.h"
#include "src/writeerr.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

static void write_out(struct jsonw *w, const char *s, size_t n)
{
	if (fwrite_unlocked(s, 1, n, w->out) < n && !w->error)
		w->error = xp_write_errno();
}

static void put(struct jsonw *w, const char *s, size_t n)
{
	w->bytes += n;
	if (!w->buf) {
		write_out(w, s, n);
		return;
	}
	if (w->len + n > w->cap) {
		write_out(w, w->buf, w->len);
		w->len = 0;
		if (n > w->cap) {
			write_out(w, s, n);
			return;
		}
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void putch(struct jsonw *w, char c)
{
	if (w->buf && w->len < w->cap) {
		w->buf[w->len++] = c;
		w->bytes++;
	} else {
		put(w, &c, 1);
	}
}

/* Decimal digits of v, written backwards from end; returns the first. */
static char *digits(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

void jsonw_init(struct jsonw *w, FILE *out)
{
	*w = (struct jsonw){ .out = out };
}

void jsonw_buffer(struct jsonw *w, char *buf, size_t cap)
{
	jsonw_flush(w);
	w->buf = cap ? buf : NULL;
	w->cap = cap;
}

int jsonw_flush(struct jsonw *w)
{
	if (w->buf && w->len)
		write_out(w, w->buf, w->len);
	w->len = 0;
	return w->error;
}

/* Separator before a value or key at the current level. */
static void value_prefix(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->need_comma[w->depth])
		putch(w, ',');
	w->need_comma[w->depth] = 1;
	if (w->newline) {
		putch(w, '\n');
		w->newline = 0;
	}
}

static void open_level(struct jsonw *w, char c)
{
	value_prefix(w);
	if (w->depth + 1 >= JSONW_MAX_DEPTH) {
		w->error = -E2BIG;
		return;
	}
	putch(w, c);
	w->need_comma[++w->depth] = 0;
}

static void close_level(struct jsonw *w, char c)
{
	if (w->depth == 0) {
		w->error = -EINVAL;
		return;
	}
	w->depth--;
	putch(w, c);
}

void jsonw_obj_begin(struct jsonw *w) { open_level(w, '{'); }
void jsonw_obj_end(struct jsonw *w) { close_level(w, '}'); }
void jsonw_arr_begin(struct jsonw *w) { open_level(w, '['); }
void jsonw_arr_end(struct jsonw *w) { close_level(w, ']'); }

/* 1 for the bytes a JSON string holds as they are (printable ASCII but '"'
 * and '\\'): the scan of a name is one table look-up a byte. */
#define PLAIN8(b) ((b) >= 0x20 && (b) < 0x80 && (b) != '"' && (b) != '\\')
#define PLAIN16(b) PLAIN8(b), PLAIN8((b) + 1), PLAIN8((b) + 2), PLAIN8((b) + 3), \
	PLAIN8((b) + 4), PLAIN8((b) + 5), PLAIN8((b) + 6), PLAIN8((b) + 7), \
	PLAIN8((b) + 8), PLAIN8((b) + 9), PLAIN8((b) + 10), PLAIN8((b) + 11), \
	PLAIN8((b) + 12), PLAIN8((b) + 13), PLAIN8((b) + 14), PLAIN8((b) + 15)
static const uint8_t plain[256] = {
	PLAIN16(0x00), PLAIN16(0x10), PLAIN16(0x20), PLAIN16(0x30),
	PLAIN16(0x40), PLAIN16(0x50), PLAIN16(0x60), PLAIN16(0x70),
};

static void put_escaped(struct jsonw *w, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *run = p;

	putch(w, '"');
	for (; *p; p++) {
		while (plain[*p])
			p++;
		if (!*p)
			break;
		if (*p >= 0x80) {
			/* names come from received runs: invalid UTF-8 is U+FFFD */
			size_t n = xp_utf8_seq((const char *)p, strnlen((const char *)p, 4));

			if (n) {
				p += n - 1;
				continue;
			}
			put(w, (const char *)run, (size_t)(p - run));
			run = p + 1;
			put(w, "\\ufffd", 6);
			continue;
		}
		if (*p >= 0x20 && *p != '"' && *p != '\\')
			continue;
		put(w, (const char *)run, (size_t)(p - run));
		run = p + 1;
		switch (*p) {
		case '"': put(w, "\\\"", 2); break;
		case '\\': put(w, "\\\\", 2); break;
		case '\n': put(w, "\\n", 2); break;
		case '\t': put(w, "\\t", 2); break;
		case '\r': put(w, "\\r", 2); break;
		default: {
			char u[8];

			snprintf(u, sizeof(u), "\\u%04x", *p);
			put(w, u, 6);
		}
		}
	}
	put(w, (const char *)run, (size_t)(p - run));
	putch(w, '"');
}

void jsonw_key(struct jsonw *w, const char *key)
{
	value_prefix(w);
	put_escaped(w, key);
	putch(w, ':');
	w->after_key = 1;
}

void jsonw_raw_key(struct jsonw *w, const char *json, size_t n)
{
	value_prefix(w);
	put(w, json, n);
	w->after_key = 1;
}

void jsonw_raw_value(struct jsonw *w, const char *json, size_t n)
{
	value_prefix(w);
	put(w, json, n);
}

void jsonw_str(struct jsonw *w, const char *s)
{
	value_prefix(w);
	put_escaped(w, s ? s : "");
}

void jsonw_str_plain(struct jsonw *w, const char *s)
{
	value_prefix(w);
	putch(w, '"');
	put(w, s, strlen(s));
	putch(w, '"');
}

void jsonw_int(struct jsonw *w, int64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p;

	value_prefix(w);
	p = digits(end, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
	if (v < 0)
		*--p = '-';
	put(w, p, (size_t)(end - p));
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p = digits(end, v);

	value_prefix(w);
	put(w, p, (size_t)(end - p));
}

void jsonw_ns_as_us(struct jsonw *w, int64_t ns)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char buf[32], *end = buf + sizeof(buf), *p = end;

	value_prefix(w);
	for (int i = 0; i < 3; i++, mag /= 10)       /* ns: always 3 decimals */
		*--p = (char)('0' + mag % 10);
	*--p = '.';
	p = digits(p, mag);
	if (ns < 0)
		*--p = '-';
	put(w, p, (size_t)(end - p));
}

void jsonw_fixed(struct jsonw *w, double v, int decimals)
{
	if (!isfinite(v)) {
		jsonw_null(w);
		return;
	}
	char b[512];                /* %f of the largest double: 309 digits */
	int n = snprintf(b, sizeof(b), "%.*f", decimals, v);

	value_prefix(w);
	put(w, b, n > 0 && (size_t)n < sizeof(b) ? (size_t)n : 0);
}

void jsonw_bool(struct jsonw *w, int v)
{
	value_prefix(w);
	put(w, v ? "true" : "false", v ? 4 : 5);
}

void jsonw_null(struct jsonw *w)
{
	value_prefix(w);
	put(w, "null", 4);
}

void jsonw_newline(struct jsonw *w)
{
	w->newline = 1;
}

int jsonw_error(const struct jsonw *w)
{
	if (w->error)
		return w->error;
	/* a write not ours failed (putc beside us): its errno is long gone */
	return ferror(w->out) ? -ENOSPC : 0;
}
