/* pyframe.c - Python lines as data and their one name (pyframe.h). */
#include "db/pyframe.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/pypath.h"

/* A row of a database ingested before xp_frames.line: symbol is
 * "BASE:LINE qualname" or "BASE:? qualname", BASE the file's own name. */
static int older_row(const char *symbol, const char *module, struct xp_pyline *out)
{
	const char *base = xp_pypath_base(module), *p;
	size_t n = strlen(base);
	long line = 0;

	if (strncmp(symbol, base, n) || symbol[n] != ':')
		return 0;           /* a placeholder ("[python code not recorded]") */
	p = symbol + n + 1;
	if (*p == '?') {
		line = -1;
		p++;
	} else if (*p < '0' || *p > '9') {
		return 0;
	}
	for (; *p >= '0' && *p <= '9'; p++)
		if ((line = line * 10 + (*p - '0')) > INT_MAX)
			return 0;
	if (*p != ' ')
		return 0;
	*out = (struct xp_pyline){ .file = module, .qualname = p + 1, .line = (int)line };
	return 1;
}

int xp_pyline_of(int kind, const char *symbol, const char *module, const int64_t *line,
		 struct xp_pyline *out)
{
	if (kind != XP_FRAME_PYTHON || !symbol || !module)
		return 0;
	if (!line)
		return older_row(symbol, module, out);
	*out = (struct xp_pyline){ .file = module, .qualname = symbol,
				   .line = *line >= 0 && *line <= INT_MAX ? (int)*line : -1 };
	return 1;
}

const char *xp_pyline_name(const struct xp_pyline *p, char *buf, size_t len)
{
	const char *base = xp_pypath_base(p->file);
	int n;

	if (p->line >= 0)
		n = snprintf(buf, len, "%s:%d %s", base, p->line, p->qualname);
	else
		n = snprintf(buf, len, "%s:? %s", base, p->qualname);
	/* cut at a whole UTF-8 character: the last one kept, if incomplete, goes */
	if (n >= 0 && (size_t)n >= len && len > 1) {
		size_t last = len - 2, need;
		unsigned char c;

		while (last > 0 && ((unsigned char)buf[last] & 0xc0) == 0x80)
			last--;
		c = (unsigned char)buf[last];
		need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
		if (last + need > len - 1)
			buf[last] = '\0';
	}
	return buf;
}

const char *xp_frame_display(int kind, const char *symbol, const char *module,
			     const int64_t *line, char *buf, size_t len)
{
	struct xp_pyline p;

	return xp_pyline_of(kind, symbol, module, line, &p) ? xp_pyline_name(&p, buf, len) : symbol;
}

const char *xp_sql_frame_line(sqlite3 *db)
{
	return xp_db_has_column(db, "xp_frames", "line") ? "f.line" : "NULL";
}

static void frame_name_fn(sqlite3_context *ctx, int argc, sqlite3_value **v)
{
	int64_t line = sqlite3_value_int64(v[3]);
	const char *sym = (const char *)sqlite3_value_text(v[1]);
	const char *mod = (const char *)sqlite3_value_text(v[2]);
	struct xp_pyline p;
	char *buf;

	(void)argc;
	if (!xp_pyline_of(sqlite3_value_int(v[0]), sym, mod,
			  sqlite3_value_type(v[3]) == SQLITE_NULL ? NULL : &line, &p)) {
		if (sym)
			sqlite3_result_text(ctx, sym, -1, SQLITE_TRANSIENT);
		else
			sqlite3_result_null(ctx);
		return;
	}
	if (!(buf = sqlite3_malloc(XP_PYLINE_NAME_MAX))) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text(ctx, xp_pyline_name(&p, buf, XP_PYLINE_NAME_MAX), -1, sqlite3_free);
}

int xp_frame_name_sql(sqlite3 *db)
{
	return sqlite3_create_function(db, "xp_frame_name", 4, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
				       NULL, frame_name_fn, NULL, NULL);
}
