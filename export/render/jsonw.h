/* jsonw.h - a streaming JSON writer: constant memory whatever the output
 * size, for traces of millions of events (a jansson tree would hold them all).
 *
 *   struct jsonw w; jsonw_init(&w, stdout);
 *   jsonw_obj_begin(&w); jsonw_key(&w, "ts"); jsonw_ns_as_us(&w, 1500);
 *   jsonw_key(&w, "name"); jsonw_str(&w, "k\"1"); jsonw_obj_end(&w);
 *   -> {"ts":1.500,"name":"k\"1"}
 * Errors are sticky: check jsonw_error() once at the end.
 */
#ifndef XP_JSONW_H
#define XP_JSONW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSONW_MAX_DEPTH 32

struct jsonw {
	FILE *out;                  /* not owned */
	char *buf;                  /* NULL, or jsonw_buffer's: writes gather here */
	size_t len, cap;
	uint64_t bytes;             /* written so far (buffered ones included) */
	int depth;
	int error;                  /* -errno once a write failed or nesting broke */
	uint8_t need_comma[JSONW_MAX_DEPTH];
	uint8_t after_key;          /* a key was written: the next value takes no comma */
	uint8_t newline;            /* start the next key or value on a new line */
};

void jsonw_init(struct jsonw *w, FILE *out);
/* Gather output in buf (not owned) and write it in cap-sized blocks: per
 * value stdio calls cost more than the formatting in traces of millions of
 * events. Nothing else may write to out until jsonw_flush. */
void jsonw_buffer(struct jsonw *w, char *buf, size_t cap);
/* Writes what is gathered; 0 or the sticky error. */
int jsonw_flush(struct jsonw *w);
void jsonw_obj_begin(struct jsonw *w);
void jsonw_obj_end(struct jsonw *w);
void jsonw_arr_begin(struct jsonw *w);
void jsonw_arr_end(struct jsonw *w);
void jsonw_key(struct jsonw *w, const char *key);
void jsonw_str(struct jsonw *w, const char *s);
/* A string of the caller's own that needs no escaping (a category, "X"),
 * written without the scan. */
void jsonw_str_plain(struct jsonw *w, const char *s);
/* Text that is already JSON (a literal of the caller's), written as is: a
 * key "\"name\":" or a value. The _lit macros quote a string literal at
 * compile time; it must need no escaping. Keys are most of a trace's bytes. */
void jsonw_raw_key(struct jsonw *w, const char *json, size_t n);
void jsonw_raw_value(struct jsonw *w, const char *json, size_t n);
#define jsonw_key_lit(w, lit) jsonw_raw_key((w), "\"" lit "\":", sizeof("\"" lit "\":") - 1)
#define jsonw_str_lit(w, lit) jsonw_raw_value((w), "\"" lit "\"", sizeof("\"" lit "\"") - 1)
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_uint(struct jsonw *w, uint64_t v);
/* A nanosecond count as microseconds with 3 decimals: Chrome trace's unit,
 * ns precision kept without floating point rounding. */
void jsonw_ns_as_us(struct jsonw *w, int64_t ns);
/* A number with a fixed count of decimals (NaN and infinities as null). */
void jsonw_fixed(struct jsonw *w, double v, int decimals);
void jsonw_bool(struct jsonw *w, int v);
void jsonw_null(struct jsonw *w);
/* The next key or value starts a new line (after its comma): one trace
 * event a line keeps big files readable with grep, diff and head. */
void jsonw_newline(struct jsonw *w);
/* 0, or the first failure: a write's errno (src/writeerr.h: never a
 * made-up -EIO), -E2BIG or -EINVAL (nesting), -ENOSPC when the stream
 * failed in a write not the writer's. */
int jsonw_error(const struct jsonw *w);

#endif
