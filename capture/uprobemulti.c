/* uprobemulti.c - uprobe_multi links without libbpf's help; see
 * uprobemulti.h. */
#include "capture/uprobemulti.h"

#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>

/* BPF_LINK_CREATE's attr for a uprobe_multi link (uapi linux/bpf.h, 6.6);
 * the rest of union bpf_attr stays zero. */
union link_attr {
	struct {
		uint32_t prog_fd, target_fd, attach_type, flags;
		uint64_t path, offsets, ref_ctr_offsets, cookies;
		uint32_t cnt, multi_flags, pid;
	} u;
	char size[128];
};

static int link_create(int prog_fd, const char *path, const unsigned long *off)
{
	union link_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.u.prog_fd = (uint32_t)prog_fd;
	a.u.attach_type = XP_BPF_TRACE_UPROBE_MULTI;
	a.u.path = (uint64_t)(uintptr_t)path;
	a.u.offsets = (uint64_t)(uintptr_t)off;
	a.u.cnt = 1;
	fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

bool uprobe_multi_supported(void)
{
	static int known = -1;
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		    .expected_attach_type = (enum bpf_attach_type)XP_BPF_TRACE_UPROBE_MULTI);
	unsigned long off = 0;
	int prog, link;

	if (known >= 0)
		return known;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0)
		return (known = 0);
	/* "/" is no regular file: a kernel that knows the link says EBADF */
	link = link_create(prog, "/", &off);
	if (link >= 0)
		close(link);
	close(prog);
	return (known = link == -EBADF);
}

/* The file offset of the function sym (what a uprobe takes): its address
 * less its section's, plus the section's offset. */
static int sym_offset(Elf *elf, const char *sym, unsigned long *off)
{
	Elf_Scn *scn = NULL, *text;
	GElf_Shdr sh, tsh;
	GElf_Sym s;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;

			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    s.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, s.st_name)) || strcmp(name, sym))
				continue;
			if (!(text = elf_getscn(elf, s.st_shndx)) || !gelf_getshdr(text, &tsh) ||
			    s.st_value < tsh.sh_addr)
				return -ENOEXEC;
			*off = s.st_value - tsh.sh_addr + tsh.sh_offset;
			return 0;
		}
	}
	return -ENOENT;
}

int uprobe_multi_attach(int prog_fd, int lib_fd, const char *sym)
{
	unsigned long off = 0;
	char self[64];
	Elf *elf;
	int err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(lib_fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	err = sym_offset(elf, sym, &off);
	elf_end(elf);
	if (err)
		return err;
	/* the very file open on lib_fd, whatever its path names now */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", lib_fd);
	return link_create(prog_fd, self, &off);
}
