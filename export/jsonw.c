/* jsonw.c - streaming JSON writer (see jsonw.h). */
#include "jsonw.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

void jsonw_init(struct jsonw *w, FILE *out)
{
	*w = (struct jsonw){ .out = out };
}

/* Separator before a value or key at the current level. */
static void value_prefix(struct jsonw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->need_comma[w->depth])
		putc(',', w->out);
	w->need_comma[w->depth] = 1;
	if (w->newline) {
		putc('\n', w->out);
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
	putc(c, w->out);
	w->need_comma[++w->depth] = 0;
}

static void close_level(struct jsonw *w, char c)
{
	if (w->depth == 0) {
		w->error = -EINVAL;
		return;
	}
	w->depth--;
	putc(c, w->out);
}

void jsonw_obj_begin(struct jsonw *w) { open_level(w, '{'); }
void jsonw_obj_end(struct jsonw *w) { close_level(w, '}'); }
void jsonw_arr_begin(struct jsonw *w) { open_level(w, '['); }
void jsonw_arr_end(struct jsonw *w) { close_level(w, ']'); }

static void put_escaped(struct jsonw *w, const char *s)
{
	putc('"', w->out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", w->out); break;
		case '\\': fputs("\\\\", w->out); break;
		case '\n': fputs("\\n", w->out); break;
		case '\t': fputs("\\t", w->out); break;
		case '\r': fputs("\\r", w->out); break;
		default:
			if (*p < 0x20)
				fprintf(w->out, "\\u%04x", *p);
			else
				putc(*p, w->out);
		}
	}
	putc('"', w->out);
}

void jsonw_key(struct jsonw *w, const char *key)
{
	value_prefix(w);
	put_escaped(w, key);
	putc(':', w->out);
	w->after_key = 1;
}

void jsonw_str(struct jsonw *w, const char *s)
{
	value_prefix(w);
	put_escaped(w, s ? s : "");
}

void jsonw_int(struct jsonw *w, int64_t v)
{
	value_prefix(w);
	fprintf(w->out, "%" PRId64, v);
}

void jsonw_uint(struct jsonw *w, uint64_t v)
{
	value_prefix(w);
	fprintf(w->out, "%" PRIu64, v);
}

void jsonw_ns_as_us(struct jsonw *w, int64_t ns)
{
	uint64_t mag = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	value_prefix(w);
	fprintf(w->out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

void jsonw_fixed(struct jsonw *w, double v, int decimals)
{
	if (!isfinite(v)) {
		jsonw_null(w);
		return;
	}
	value_prefix(w);
	fprintf(w->out, "%.*f", decimals, v);
}

void jsonw_bool(struct jsonw *w, int v)
{
	value_prefix(w);
	fputs(v ? "true" : "false", w->out);
}

void jsonw_null(struct jsonw *w)
{
	value_prefix(w);
	fputs("null", w->out);
}

void jsonw_newline(struct jsonw *w)
{
	w->newline = 1;
}

int jsonw_error(const struct jsonw *w)
{
	if (w->error)
		return w->error;
	return ferror(w->out) ? -EIO : 0;
}
