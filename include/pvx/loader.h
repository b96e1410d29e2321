/* SPDX-License-Identifier: GPL-2.0 */
/* The static ELF loader: validate, map into the stub, build the initial stack. */
#ifndef PVX_LOADER_H
#define PVX_LOADER_H

#include <elf.h>
#include "pvx/task.h"

#define ELF_MAX_PHNUM 64	/* the kernel allows 65536/sizeof(phdr); real binaries use < 20 */

struct elf_info {
	Elf64_Ehdr eh;
	Elf64_Phdr ph[ELF_MAX_PHNUM];
	uint64_t file_size;
	bool exec_stack;	/* PT_GNU_STACK asks for PF_X */
	char interp[4096];	/* PT_INTERP (PATH_MAX with its NUL), or "" */
	const char *why;	/* human reason when elf_read fails */
};

/*
 * Read and validate the headers of an executable. Returns 0, -ENOEXEC
 * (with ei->why set) for anything pvx cannot run, or -errno of a host call.
 */
long elf_read(int fd, struct elf_info *ei) __must_check;

/*
 * Map the image (and its PT_INTERP, opened as ifd with headers iei, or -1
 * and NULL) into t's mm, laid out as binfmt_elf does with ASLR unless the
 * process's personality has ADDR_NO_RANDOMIZE, and set up the stack and
 * registers for the entry (the interpreter's when there is one).
 */
/*
 * Will argv, envp and execfn fit the stack image elf_load builds? 0, or
 * -E2BIG: asked before the point of no return, so that an exec into the
 * old stub fails with the old image intact (bprm_stack_limits' check).
 */
long elf_args_fit(char *const argv[], char *const envp[], const char *execfn) __must_check;
long elf_load(struct task *t, int fd, const struct elf_info *ei, int ifd, const struct elf_info *iei,
	      char *const argv[], char *const envp[], const char *execfn) __must_check;

#endif
