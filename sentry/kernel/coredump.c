// SPDX-License-Identifier: GPL-2.0
/*
 * Core dumps (fs/coredump.c, fs/binfmt_elf.c). A signal whose default
 * action is "core" (signal(7)) writes a core file and sets WCOREDUMP (0x80)
 * in the wait status -- Linux sets the bit only when a dump was written, so
 * pvx writes one: a small ELF core with the thread's registers and the
 * process's name (NT_PRSTATUS, NT_PRPSINFO) and no memory segments, named
 * "core" in the working directory inside the root, as the sandbox's
 * /proc/sys/kernel/core_pattern ("core") and core_uses_pid (0) say. As
 * do_coredump(): nothing when RLIMIT_CORE is below a page
 * (binfmt->min_coredump), when the process is not dumpable
 * (PR_SET_DUMPABLE 0), or when the file cannot be made (read-only root,
 * no write permission); an old "core" is unlinked first and the new one is
 * made O_EXCL|O_NOFOLLOW, mode 0600 less the umask.
 */
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/procfs.h>
#include <unistd.h>

#include "pvx/cred.h"
#include "pvx/kernel.h"
#include "pvx/path.h"
#include "pvx/sandbox.h"
#include "pvx/task.h"

#define CORE_MIN_LIMIT 4096	/* ELF_EXEC_PAGESIZE: binfmt_elf's min_coredump */

/* sig_kernel_coredump(): the signals whose default action dumps core. */
static bool sig_default_core(int sig)
{
	switch (sig) {
	case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS:
	case SIGFPE: case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
		return true;
	}
	return false;
}

/* One ELF note: its header, a name padded to 4 ("CORE"), the descriptor. */
struct core_note_hdr {
	Elf64_Nhdr n;
	char name[8];
};

/* The whole core file: ELF header, one PT_NOTE program header, two notes. */
struct core_file {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct core_note_hdr prstatus_h;
	struct elf_prstatus prstatus;
	struct core_note_hdr prpsinfo_h;
	struct elf_prpsinfo prpsinfo;
} __attribute__((packed));

_Static_assert(sizeof(struct elf_prstatus) % 4 == 0 && sizeof(struct elf_prpsinfo) % 4 == 0,
	       "notes need no padding");
_Static_assert(sizeof(((struct elf_prstatus *)0)->pr_reg) == sizeof(struct pvx_regs),
	       "pr_reg is user_regs_struct");

/* Fill the core image of t killed by sig (fill_prstatus, fill_psinfo). */
static void core_fill(struct core_file *c, const struct task *t, int sig)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->eh.e_ident, ELFMAG, SELFMAG);
	c->eh.e_ident[EI_CLASS] = ELFCLASS64;
	c->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	c->eh.e_ident[EI_VERSION] = EV_CURRENT;
	c->eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	c->eh.e_type = ET_CORE;
	c->eh.e_machine = EM_X86_64;
	c->eh.e_version = EV_CURRENT;
	c->eh.e_phoff = offsetof(struct core_file, ph);
	c->eh.e_ehsize = sizeof(c->eh);
	c->eh.e_phentsize = sizeof(c->ph);
	c->eh.e_phnum = 1;
	c->ph.p_type = PT_NOTE;
	c->ph.p_offset = offsetof(struct core_file, prstatus_h);
	c->ph.p_filesz = sizeof(*c) - c->ph.p_offset;
	c->ph.p_align = 4;

	c->prstatus_h.n = (Elf64_Nhdr){ .n_namesz = 5, .n_descsz = sizeof(c->prstatus), .n_type = NT_PRSTATUS };
	memcpy(c->prstatus_h.name, "CORE", 5);
	c->prstatus.pr_info.si_signo = c->prstatus.pr_cursig = (short)sig;
	c->prstatus.pr_sigpend = t->pending.set | t->proc->pending.set;
	c->prstatus.pr_sighold = t->sigmask;
	c->prstatus.pr_pid = t->tid;
	c->prstatus.pr_ppid = t->proc->ppid;
	c->prstatus.pr_pgrp = t->proc->pgid;
	c->prstatus.pr_sid = t->proc->sid;
	memcpy(&c->prstatus.pr_reg, &t->regs, sizeof(t->regs));

	c->prpsinfo_h.n = (Elf64_Nhdr){ .n_namesz = 5, .n_descsz = sizeof(c->prpsinfo), .n_type = NT_PRPSINFO };
	memcpy(c->prpsinfo_h.name, "CORE", 5);
	c->prpsinfo.pr_state = 'R' - 'R';
	c->prpsinfo.pr_sname = 'R';
	c->prpsinfo.pr_pid = t->pid;
	c->prpsinfo.pr_ppid = t->proc->ppid;
	c->prpsinfo.pr_pgrp = t->proc->pgid;
	c->prpsinfo.pr_sid = t->proc->sid;
	memcpy(c->prpsinfo.pr_fname, t->comm, sizeof(c->prpsinfo.pr_fname) - 1);
	if (t->proc->cmdline) {
		size_t n = t->proc->cmdline_len < sizeof(c->prpsinfo.pr_psargs) - 1 ? t->proc->cmdline_len
									   : sizeof(c->prpsinfo.pr_psargs) - 1;
		memcpy(c->prpsinfo.pr_psargs, t->proc->cmdline, n);
		for (size_t i = 0; i < n; i++)
			if (!c->prpsinfo.pr_psargs[i])
				c->prpsinfo.pr_psargs[i] = ' ';
	}
}

/* Write the core of t killed by sig into "core" in its cwd; true if it was written. */
static bool core_write(struct task *t, int sig)
{
	const uint64_t limit = t->proc->rlim[RLIMIT_CORE].rlim_cur;
	struct core_file c;

	if (!sandbox.rw)
		return false;
	if (unlinkat(t->fs->cwd_fd, "core", 0) < 0 && errno != ENOENT)
		return false;	/* "a directory named core", no permission: filp_open would fail too */
	long fd = path_open(t, AT_FDCWD, "core", O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
			    0600 & ~t->fs->umask);
	if (fd < 0)
		return false;
	core_fill(&c, t, sig);
	size_t n = sizeof(c) < limit ? sizeof(c) : (size_t)limit;
	bool ok = write((int)fd, &c, n) == (ssize_t)n;
	close((int)fd);
	return ok;
}

void signal_fatal(struct task *t, int sig)
{
	struct process *p = t->proc;
	int status = sig;

	/* Only the first fatal signal of the process dumps: the rest of the group is dying already. */
	if (!p->group_exit && sig_default_core(sig) && !p->undumpable &&
	    p->rlim[RLIMIT_CORE].rlim_cur >= CORE_MIN_LIMIT && core_write(t, sig))
		status |= 0x80;	/* WCOREDUMP */
	process_exit_group(t, status);
}
