/* buildid.c - see buildid.h. Walks the SHT_NOTE sections (falling back to
 * PT_NOTE segments for stripped files) for NT_GNU_BUILD_ID. The file is
 * the user's: it is read (ELF_C_READ), never mapped, so a file cut short
 * meanwhile cannot SIGBUS xpcap, and notes larger than any build id note
 * are not read at all. */
#include "capture/buildid.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "capture/mapfile.h"

#define MAX_NOTES_BYTES 65536

static int note_find(Elf_Data *data, uint8_t *id, size_t max, size_t *n)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0) {
			*n = nh.n_descsz < max ? nh.n_descsz : max;
			memcpy(id, (char *)data->d_buf + desc_off, *n);
			return 0;
		}
	}
	return -ENOENT;
}

static int read_fd(int fd, uint8_t *id, size_t max, size_t *n)
{
	Elf_Scn *scn = NULL;
	Elf *elf = NULL;
	size_t phnum;
	int err = -ENOENT;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOSYS;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		err = -ENOEXEC;
		goto cleanup;
	}
	while ((scn = elf_nextscn(elf, scn)) && err) {
		GElf_Shdr sh;

		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    sh.sh_size <= MAX_NOTES_BYTES)
			err = note_find(elf_getdata(scn, NULL), id, max, n);
	}
	if (err && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && err; i++) {
			GElf_Phdr ph;
			Elf_Data *d;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE ||
			    ph.p_filesz > MAX_NOTES_BYTES)
				continue;
			d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						 ELF_T_NHDR);
			if (d)
				err = note_find(d, id, max, n);
		}
	}
cleanup:
	elf_end(elf);
	return err;
}

int buildid_read_mapping(const struct mapfile_id *m, uint8_t *id, size_t max, size_t *n)
{
	int fd = mapfile_open(m), err;

	if (fd < 0)
		return fd;
	err = read_fd(fd, id, max, n);
	close(fd);
	return err;
}
