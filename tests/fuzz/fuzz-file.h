/* fuzz-file.h - the file a fuzz target writes each input to before a
 * reader opens it by name: a regular file in /dev/shm (memory, fast),
 * removed when the fuzzer exits. Readers refuse symbolic links, so a
 * memfd's /proc/self/fd/N name cannot stand in for it. */
#ifndef XP_FUZZ_FILE_H
#define XP_FUZZ_FILE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_file_path[256];

static void fuzz_file_remove(void)
{
	unlink(fuzz_file_path);
}

static int fuzz_file(const char *name, char *path, size_t len)
{
	const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	int fd;

	snprintf(path, len, "%s/xp-fuzz-%s-%d", dir, name, (int)getpid());
	snprintf(fuzz_file_path, sizeof(fuzz_file_path), "%s", path);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		atexit(fuzz_file_remove);
	return fd;
}

#endif
