/* load_meta.c - the run's facts before its streams: meta.json into
 * META_DATA_EXPORT (and the capture's losses into xp_losses, the system
 * facts where nsys keeps them), then the kallsyms copy, checked against the
 * size meta.json gives. A missing or damaged file is a warning, a newer
 * format an error.
 */
#include "ingest/loader.h"

static int meta_pair(void *ctx, const char *key, const char *value)
{
	struct loader *L = ctx;
	char name[1100];
	const char *last = strrchr(key, '.');
	int err;

	snprintf(name, sizeof(name), "meta.%s", key);
	sqlite3_bind_text(L->st[STMT_META], 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(L->st[STMT_META], 2, value, -1, SQLITE_TRANSIENT);
	err = xp_loader_step(L, STMT_META);
	if (err)
		return err;
	if (!strcmp(key, "kallsyms_bytes") && value[0] >= '0' && value[0] <= '9')
		L->kallsyms_bytes = strtoll(value, NULL, 10);
	if (!strcmp(key, "kallsyms_error"))
		snprintf(L->kallsyms_error, sizeof(L->kallsyms_error), "%s", value);
	/* system facts also where nsys keeps them */
	if (!strcmp(key, "hostname") || !strcmp(key, "kernel_release") ||
	    !strcmp(key, "cpu_count") || !strcmp(key, "sample_frequency_hz")) {
		sqlite3_bind_text(L->st[STMT_ENV], 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(L->st[STMT_ENV], 2, value, -1, SQLITE_TRANSIENT);
		err = xp_loader_step(L, STMT_ENV);
		if (err)
			return err;
	}
	/* "records.sample.lost.ringbuf_full": 12 -> a loss counted by the capture */
	if (!strncmp(key, "records.", 8) && last && strtoll(value, NULL, 10) > 0) {
		char kind[256];
		const char *lost = strstr(key + 8, ".lost.");

		if (!lost || lost + 5 != last)
			return 0;
		uint32_t reason = xp_loss_reason_of_meta_key(last + 1);

		snprintf(kind, sizeof(kind), "%.*s", (int)(lost - (key + 8)), key + 8);
		sqlite3_bind_null(L->st[STMT_LOSS], 1);
		sqlite3_bind_text(L->st[STMT_LOSS], 2, kind, -1, SQLITE_TRANSIENT);
		/* one loss, one name: meta.json's "stack" is the records' "stack_unreadable" */
		sqlite3_bind_text(L->st[STMT_LOSS], 3, reason ? xp_loss_reason_name(reason) : last + 1,
				  -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(L->st[STMT_LOSS], 4, strtoll(value, NULL, 10));
		sqlite3_bind_text(L->st[STMT_LOSS], 5, "meta.json", -1, SQLITE_STATIC);
		return xp_loader_step(L, STMT_LOSS);
	}
	return 0;
}

int xp_loader_meta(struct loader *L)
{
	char path[4096];
	json_t *j = NULL;
	int line, err;
	int64_t ver;

	snprintf(path, sizeof(path), "%s/meta.json", L->o->run_dir);
	err = xp_meta_load(&j, path, &line);
	if (err == -ENOENT)
		return xp_loader_warn(L, "meta.json", 0, "%s: missing; run facts and capture losses unknown",
			    path);
	if (err == -EBADMSG)
		return xp_loader_warn(L, "meta.json", 0, "%s at line %d: not valid JSON; ignored", path, line);
	if (err)
		return xp_loader_warn(L, "meta.json", 0, "%s: %s; ignored", path, xp_run_file_strerror(err));
	ver = xp_meta_int(j, "format_version", 0);
	if (ver > XP_FORMAT_VERSION) {
		snprintf(L->res->error, sizeof(L->res->error), "%s: run format version %" PRId64
			 " is newer than this xpcorr reads (%d); upgrade xpcorr", path, ver,
			 XP_FORMAT_VERSION);
		json_decref(j);
		return -EPROTO;
	}
	err = xp_meta_flatten(j, meta_pair, L);
	json_decref(j);
	return err;
}

int xp_loader_kallsyms(struct loader *L)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/kallsyms", L->o->run_dir);
	err = xp_kallsyms_load(&L->ksyms, path);
	if (err == -ENOENT && L->kallsyms_error[0])
		return xp_loader_warn(L, "kallsyms", 0, "%s: not recorded (meta.json kallsyms_error:"
				      " %s); kernel frames stay addresses", path, L->kallsyms_error);
	if (err == -ENOENT)
		return 0;   /* told in info: kernel frames stay addresses */
	if (err == -ENOMEM)
		return err;
	if (err)
		return xp_loader_warn(L, "kallsyms", 0, "%s: %s; kernel frames stay addresses", path,
			    err == -E2BIG ? "larger than a kernel's symbols (256 MiB, 4M symbols)"
					  : xp_run_file_strerror(err));
	if (xp_kallsyms_skipped(L->ksyms) > 0 && xp_kallsyms_count(L->ksyms) == 0)
		return xp_loader_warn(L, "kallsyms", 0, "%s: no text symbols", path);
	/* a copy cut short (xpcap killed while writing it) must not lend its
	 * last symbol to every address above: told in xp_loader_finish(), with a count */
	if (!xp_kallsyms_complete(L->ksyms))
		L->ksyms_cut = "it ends in the middle of a line";
	else if (L->kallsyms_bytes >= 0 &&
		 (uint64_t)L->kallsyms_bytes != xp_kallsyms_bytes(L->ksyms))
		L->ksyms_cut = "its size is not the one meta.json gives (kallsyms_bytes)";
	if (L->ksyms_cut)
		xp_kallsyms_set_truncated(L->ksyms);
	return 0;
}
