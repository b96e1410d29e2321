// SPDX-License-Identifier: GPL-2.0
/* Unit tests of ELF validation (sentry/kernel/loader.c elf_read) on crafted images. */
#include <string.h>
#include <sys/mman.h>

#include "pvx/loader.h"
#include "tap.h"

struct img {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[2];
	char body[8192];
};

static void good(struct img *m)
{
	memset(m, 0, sizeof(*m));
	memcpy(m->eh.e_ident, ELFMAG, SELFMAG);
	m->eh.e_ident[EI_CLASS] = ELFCLASS64;
	m->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	m->eh.e_ident[EI_VERSION] = EV_CURRENT;
	m->eh.e_type = ET_EXEC;
	m->eh.e_machine = EM_X86_64;
	m->eh.e_entry = 0x401000;
	m->eh.e_phoff = offsetof(struct img, ph);
	m->eh.e_phentsize = sizeof(Elf64_Phdr);
	m->eh.e_phnum = 1;
	m->ph[0] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_offset = 0,
				 .p_vaddr = 0x400000, .p_filesz = sizeof(*m), .p_memsz = sizeof(*m) };
}

static struct elf_info ei;

/* Run elf_read on the first len bytes of m; returns its result, *why the reason. */
static long check(const struct img *m, size_t len, const char **why)
{
	int fd = memfd_create("elf", 0);

	if (fd < 0 || write(fd, m, len) != (ssize_t)len)
		return -999;
	long r = elf_read(fd, &ei);
	close(fd);
	*why = ei.why ? ei.why : "";
	return r;
}

int main(void)
{
	struct img m;
	const char *why;

	good(&m);
	ok(check(&m, sizeof(m), &why) == 0, "a minimal static x86-64 executable is accepted");
	m.eh.e_type = ET_DYN;
	ok(check(&m, sizeof(m), &why) == 0, "static-pie (ET_DYN without PT_INTERP) is accepted");

	good(&m);
	ok(check(&m, 3, &why) == -ENOEXEC && strstr(why, "not an ELF"), "3 bytes: not an ELF (%s)", why);
	ok(check(&m, 40, &why) == -ENOEXEC && strstr(why, "truncated"), "truncated header (%s)", why);
	memcpy(&m, "#!/bin/sh\necho hi\n", 18);
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "not an ELF"), "script: not an ELF");

	good(&m);
	m.eh.e_machine = EM_AARCH64;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "x86-64"), "aarch64 refused (%s)", why);
	good(&m);
	m.eh.e_ident[EI_CLASS] = ELFCLASS32;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "x86-64"), "ELF32 refused");
	good(&m);
	m.eh.e_type = ET_REL;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "e_type"), "relocatable refused");

	/* PT_INTERP, as load_elf_binary reads it: 2..PATH_MAX bytes in the file, NUL-terminated, not empty */
	good(&m);
	m.eh.e_phnum = 2;
	m.ph[1] = (Elf64_Phdr){ .p_type = PT_INTERP, .p_offset = 200, .p_filesz = 11 };
	memcpy(m.body + 200 - offsetof(struct img, body), "/lib/ld.so", 11);
	ok(check(&m, sizeof(m), &why) == 0 && !strcmp(ei.interp, "/lib/ld.so"), "PT_INTERP read (%s)", ei.interp);
	m.ph[1].p_filesz = 10;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "NUL"), "PT_INTERP without its NUL (%s)", why);
	m.ph[1].p_filesz = 1;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "PT_INTERP"), "PT_INTERP of 1 byte (%s)", why);
	m.ph[1].p_filesz = 4097;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "PT_INTERP"), "PT_INTERP past PATH_MAX (%s)", why);
	m.ph[1].p_filesz = 11;
	m.ph[1].p_offset = sizeof(m) - 4;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "PT_INTERP"), "PT_INTERP past the end (%s)", why);
	m.ph[1].p_offset = (uint64_t)-4;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "PT_INTERP"), "PT_INTERP offset overflow (%s)", why);
	m.ph[1].p_offset = 300;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "empty"), "an empty PT_INTERP path (%s)", why);

	good(&m);
	m.eh.e_phoff = sizeof(m) - 8;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "past end"), "phdrs past EOF (%s)", why);
	good(&m);
	m.eh.e_phnum = 0;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "e_phnum"), "no program headers");
	good(&m);
	m.eh.e_phnum = 60000;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "e_phnum"), "absurd e_phnum");
	good(&m);
	m.eh.e_phentsize = 32;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "e_phentsize"), "bad e_phentsize");
	good(&m);
	m.ph[0].p_memsz = 10;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "p_filesz > p_memsz"), "filesz > memsz");
	good(&m);
	m.ph[0].p_filesz = m.ph[0].p_memsz = 1UL << 40;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "past end of file"), "segment past EOF");
	good(&m);
	m.ph[0].p_vaddr = 0x400123;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "congruent"), "misaligned vaddr/offset");
	good(&m);
	m.ph[0].p_vaddr = 0xfffffffffffff000UL;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "address range"), "kernel-half vaddr");
	good(&m);
	m.ph[0].p_type = PT_NOTE;
	ok(check(&m, sizeof(m), &why) == -ENOEXEC && strstr(why, "no PT_LOAD"), "no PT_LOAD");
	return tap_done();
}
