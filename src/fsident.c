/* fsident.c - another user's file-system identity, per thread (fsident.h). */
#include "src/fsident.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "src/array.h"

/* getgrouplist says how many it needs when the buffer is short. */
static int load_user_groups(struct xp_fsident *id)
{
	struct passwd *pw = getpwuid(id->uid);
	size_t cap = 0;
	int n = 32;

	for (;;) {
		if (xp_array__reserve((void **)&id->groups, &cap, (size_t)n, sizeof(gid_t), 32))
			return -ENOMEM;
		if (!pw) {      /* a uid without a name: its own group only */
			id->groups[0] = id->gid;
			n = 1;
			break;
		}
		if (getgrouplist(pw->pw_name, id->gid, id->groups, &n) >= 0)
			break;
	}
	id->ngroups = n;
	return 0;
}

int xp_fsident__init(struct xp_fsident *id, uid_t uid, gid_t gid, bool user_groups)
{
	int n;

	memset(id, 0, sizeof(*id));
	id->uid = uid;
	id->gid = gid;
	n = getgroups(0, NULL);
	if (n < 0)
		return -errno;
	id->own_groups = calloc((size_t)n + 1, sizeof(gid_t));
	if (!id->own_groups)
		return -ENOMEM;
	id->n_own_groups = getgroups(n, id->own_groups);
	if (id->n_own_groups < 0)
		return -errno;
	if (!user_groups || uid == 0)
		return 0;
	return load_user_groups(id);
}

void xp_fsident__free(struct xp_fsident *id)
{
	free(id->groups);
	free(id->own_groups);
	id->groups = id->own_groups = NULL;
	id->ngroups = id->n_own_groups = 0;
}

int xp_fsident__enter(const struct xp_fsident *id, struct xp_fsident_saved *s)
{
	s->on = false;
	if (syscall(SYS_setgroups, (size_t)id->ngroups, id->groups))
		return -errno;
	s->fsgid = (gid_t)setfsgid(id->gid);
	s->fsuid = (uid_t)setfsuid(id->uid);
	s->on = true;
	/* both calls return the old id; an invalid id reads the current one */
	if ((uid_t)setfsuid((uid_t)-1) != id->uid || (gid_t)setfsgid((gid_t)-1) != id->gid) {
		xp_fsident__leave(id, s);
		return -EPERM;
	}
	return 0;
}

void xp_fsident__leave(const struct xp_fsident *id, struct xp_fsident_saved *s)
{
	int keep = errno;

	if (!s->on)
		return;
	setfsuid(s->fsuid);
	setfsgid(s->fsgid);
	syscall(SYS_setgroups, (size_t)id->n_own_groups, id->own_groups);
	s->on = false;
	errno = keep;
}
