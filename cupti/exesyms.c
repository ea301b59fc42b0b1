/* exesyms.c - the main program's .symtab (see exesyms.h). Every offset and
 * size from the file is checked against its length: a stripped or odd
 * binary yields nothing, never a fault. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cupti/exesyms.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first object dl_iterate_phdr reports is the main program. */
static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
	return 1;
}

static void scan(const unsigned char *m, size_t len, uintptr_t bias,
		 const char *const *names, uintptr_t *addrs, size_t n)
{
	const Elf64_Ehdr *eh = (const void *)m;
	const Elf64_Shdr *sh;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(*sh) ||
	    eh->e_shoff > len || (uint64_t)eh->e_shnum * sizeof(*sh) > len - eh->e_shoff)
		return;
	sh = (const void *)(m + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *st = &sh[i], *str;
		const Elf64_Sym *syms;

		if (st->sh_type != SHT_SYMTAB || st->sh_link >= eh->e_shnum)
			continue;
		str = &sh[st->sh_link];
		if (st->sh_offset > len || st->sh_size > len - st->sh_offset ||
		    str->sh_offset > len || str->sh_size > len - str->sh_offset)
			continue;
		syms = (const void *)(m + st->sh_offset);
		for (size_t k = 0; k < st->sh_size / sizeof(*syms); k++) {
			const char *name;

			if (syms[k].st_shndx == SHN_UNDEF || !syms[k].st_value ||
			    syms[k].st_name >= str->sh_size)
				continue;
			name = (const char *)m + str->sh_offset + syms[k].st_name;
			for (size_t j = 0; j < n; j++)
				if (!addrs[j] && !strncmp(name, names[j],
							  str->sh_size - syms[k].st_name) &&
				    strlen(names[j]) < str->sh_size - syms[k].st_name)
					addrs[j] = bias + syms[k].st_value;
		}
	}
}

int xpc_exe_symbols(const char *const *names, uintptr_t *addrs, size_t n)
{
	uintptr_t bias = 0;
	struct stat sb;
	void *m;
	int fd;

	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) || sb.st_size <= 0) {
		close(fd);
		return -EINVAL;
	}
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	dl_iterate_phdr(main_bias, &bias);
	scan(m, (size_t)sb.st_size, bias, names, addrs, n);
	munmap(m, (size_t)sb.st_size);
	return 0;
}
