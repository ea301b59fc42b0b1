/* meta.c - tolerant meta.json reading; see meta.h. */
#include "src/runmeta.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/runfile.h"

#define META_DEPTH_MAX 8

int xp_meta_load(json_t **out, const char *path, int *line)
{
	json_error_t jerr;
	struct stat st;
	int fd = xp_run_file_open(path);

	*line = 0;
	errno = 0;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || st.st_size > XP_META_MAX_BYTES) {
		int err = errno;

		close(fd);
		return err ? -err : -EFBIG;
	}
	*out = json_loadfd(fd, JSON_REJECT_DUPLICATES, &jerr);
	close(fd);
	if (!*out) {
		*line = jerr.line;
		return -EBADMSG;
	}
	return 0;
}

static int flatten(json_t *j, char *key, size_t keylen, size_t cap, int depth,
		   int (*fn)(void *, const char *, const char *), void *ctx)
{
	char val[64];
	int r = 0;

	if (depth > META_DEPTH_MAX)
		return 0;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *v;

		json_object_foreach(j, k, v) {
			int n = snprintf(key + keylen, cap - keylen, "%s%s", keylen ? "." : "", k);

			if (n < 0 || (size_t)n >= cap - keylen)
				continue;   /* absurdly long key: skip it */
			r = flatten(v, key, keylen + (size_t)n, cap, depth + 1, fn, ctx);
			key[keylen] = '\0';
			if (r)
				return r;
		}
		return 0;
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *v;

		json_array_foreach(j, i, v) {
			int n = snprintf(key + keylen, cap - keylen, "%s%zu", keylen ? "." : "", i);

			if (n < 0 || (size_t)n >= cap - keylen)
				continue;
			r = flatten(v, key, keylen + (size_t)n, cap, depth + 1, fn, ctx);
			key[keylen] = '\0';
			if (r)
				return r;
		}
		return 0;
	}
	case JSON_STRING:
		return fn(ctx, key, json_string_value(j));
	case JSON_INTEGER:
		snprintf(val, sizeof(val), "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		return fn(ctx, key, val);
	case JSON_REAL:
		snprintf(val, sizeof(val), "%.17g", json_real_value(j));
		return fn(ctx, key, val);
	case JSON_TRUE:
		return fn(ctx, key, "1");
	case JSON_FALSE:
		return fn(ctx, key, "0");
	default:
		return 0;
	}
}

int xp_meta_flatten(json_t *j, int (*fn)(void *ctx, const char *key,
					 const char *value), void *ctx)
{
	char key[1024] = "";

	return flatten(j, key, 0, sizeof(key), 0, fn, ctx);
}

int64_t xp_meta_int(json_t *j, const char *dotted, int64_t def)
{
	char part[256];

	while (j && *dotted) {
		size_t n = strcspn(dotted, ".");

		if (n >= sizeof(part) || !json_is_object(j))
			return def;
		memcpy(part, dotted, n);
		part[n] = '\0';
		j = json_object_get(j, part);
		dotted += n + (dotted[n] == '.');
	}
	return json_is_integer(j) ? (int64_t)json_integer_value(j) : def;
}
