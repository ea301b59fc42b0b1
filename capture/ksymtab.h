/* ksymtab.h - the kernel's text symbols (t, T, w, W: all that readers of a
 * run's kallsyms keep), sorted by address, read from /proc/kallsyms or
 * from root's copy of them, made once a boot. Reading /proc/kallsyms is
 * 50-80 ms of kernel CPU (the kernel formats 120k lines), most of what a
 * short run cost beside perf record (issue 42); the copy is mapped in
 * well under a millisecond.
 *
 * The copy is a file of root's, mode 0600, in a directory of root's that
 * no one else may write (KSYMTAB_DIR), opened without following a link. It
 * holds the key it was made under: the boot id and the loaded modules
 * (name, size, address; ksymtab_key). It answers for an IP only where
 * nothing loaded since can have changed the name: when the symbols on both
 * sides of the IP are vmlinux's, or both one module's that the key lists
 * (ksymtab_stable). BPF programs and ftrace or kprobe trampolines come and
 * go under one key: an IP among them reads /proc/kallsyms again.
 *
 *   char *key = NULL; struct ksymtab *t = NULL;
 *   int dir = ksymtab_dir(KSYMTAB_DIR, false);
 *   if (ksymtab_key(&key) == 0 && dir >= 0 && ksymtab_load(&t, dir, key) == 0 &&
 *       !ksymtab_stable(t, ip))
 *       ... ksymtab_free(t), ksymtab_read(&t, "/proc/kallsyms"), ksymtab_save(t, dir, key)
 *   if (ksymtab_find(t, ip, &first, &n) == 0)    // the n symbols at the address
 *       ksymtab_sym(t, first, &s);
 */
#ifndef XP_CAPTURE_KSYMTAB_H
#define XP_CAPTURE_KSYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef KSYMTAB_DIR
#define KSYMTAB_DIR "/run/xpcap"
#endif

struct ksymtab;

struct ksym {
	uint64_t addr;
	char type;                  /* t, T, w or W */
	const char *name;
	const char *module;         /* "" for vmlinux */
};

/* The directory of the copy, created (0700) when create: an fd, or
 * -EPERM when it is not root's or others may write it, -errno. */
int ksymtab_dir(const char *path, bool create);
/* This boot's key, "boot id\nname size address\n..." (a module line per
 * loaded module), in *key (malloc'd). -EAGAIN while a module is loading or
 * unloading (its symbols are changing), -errno. */
int ksymtab_key(char **key);
/* Parses a kallsyms text (the kernel's /proc/kallsyms, or a file of that
 * form). 0, -E2BIG (past 4M symbols or 256 MiB), -ENOMEM, -errno. */
int ksymtab_read(struct ksymtab **out, const char *path);
/* The copy "kallsyms" in dirfd, when made under key. -ESTALE (another
 * key, or another format), -ELOOP (a link), -ENXIO (not a regular file),
 * -EPERM (not root's, or writable by others), -EINVAL (malformed), -errno. */
int ksymtab_load(struct ksymtab **out, int dirfd, const char *key);
/* Writes t as the copy "kallsyms" in dirfd under key (a new file renamed
 * over the old name, so a reader never sees half of one). 0 or -errno. */
int ksymtab_save(const struct ksymtab *t, int dirfd, const char *key);
/* Whether a copy loaded under its key names ip as /proc/kallsyms would
 * now (see above); a table read from /proc/kallsyms is always stable. */
bool ksymtab_stable(const struct ksymtab *t, uint64_t ip);
/* The symbols at the highest address at or below ip (aliases share it):
 * indexes first..first+n-1. 0, or -ENOENT when no symbol is at or below ip. */
int ksymtab_find(const struct ksymtab *t, uint64_t ip, size_t *first, size_t *n);
size_t ksymtab_count(const struct ksymtab *t);
void ksymtab_sym(const struct ksymtab *t, size_t i, struct ksym *s);
void ksymtab_free(struct ksymtab *t);

#endif
