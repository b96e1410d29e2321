// SPDX-License-Identifier: GPL-2.0
/*
 * execve: "#!" interpreters (fs/binfmt_script.c), the ELF loader (with the
 * program's PT_INTERP) into a brand-new stub -- or into the old one, emptied,
 * when the process is alone in it (exec_in_place) -- then the point of no
 * return: the old address space goes, close-on-exec fds close, caught
 * signals reset to their default.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "pvx/aio.h"
#include "pvx/exec.h"
#include "pvx/fs_share.h"
#include "pvx/futex.h"
#include "pvx/keys.h"
#include "pvx/kernel.h"
#include "pvx/loader.h"
#include "pvx/log.h"
#include "pvx/path.h"
#include "pvx/policy.h"
#include "pvx/sigframe.h"
#include "pvx/timer.h"
#include "sentry/platform/platform.h"

#define MAX_INTERP_DEPTH 4	/* binfmt_script allows a few levels, as here */
#define SHEBANG_MAX 256		/* BINPRM_BUF_SIZE */

/* Parse "#!interp [arg]" from the first line; returns 1 if it is a script. */
static int parse_shebang(int fd, char *interp, size_t isize, char *arg, size_t asize)
{
	char buf[SHEBANG_MAX + 1];
	ssize_t n = pread(fd, buf, SHEBANG_MAX, 0);

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	buf[n] = 0;
	char *p = buf + 2, *end = strchr(p, '\n');
	if (end)
		*end = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	size_t len = strcspn(p, " \t");
	if (!len || len >= isize)
		return -ENOEXEC;
	memcpy(interp, p, len);
	interp[len] = 0;
	p += len;
	while (*p == ' ' || *p == '\t')
		p++;
	len = strlen(p);
	while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
		len--;
	if (len >= asize)
		return -ENOEXEC;
	memcpy(arg, p, len);
	arg[len] = 0;
	return 1;
}

/*
 * After the point of no return (execve(2) "signal dispositions ... reset"):
 * an fd table or dispositions shared with another process are first copied
 * (begin_new_exec's unshare_files, de_thread's unshare_sighand), so that
 * closing close-on-exec fds and resetting handlers touch ours alone. Out of
 * memory there, the process dies, as Linux's exec past that point.
 */
static void exec_reset(struct task *t)
{
	if (exec_unshare(t) < 0) {
		process_exit_group(t, SIGKILL);
		return;
	}
	for (unsigned fd = 0; fd < t->files->size; fd++) {
		struct fd_entry *e = &t->files->fds[fd];
		if (e->file && e->cloexec)
			(void)!fd_close(t->files, (int)fd);	/* a close: it drops the process's record locks on the file */
	}
	for (int i = 0; i < 64; i++) {
		struct sigaction_rec *sa = &t->proc->sigactions[i];
		if (sa->handler != (uint64_t)SIG_IGN)
			memset(sa, 0, sizeof(*sa));
	}
	t->clear_child_tid = 0;
	t->robust_list = 0;
	t->altstack_sp = t->altstack_size = 0;	/* execve(2): "the alternate signal stack is not preserved" */
	ptimers_release(t->proc);	/* execve(2): "POSIX timers are not preserved" */
	t->proc->execed = true;
	t->proc->personality &= ~READ_IMPLIES_EXEC;	/* set_personality_64bit() */
	t->proc->undumpable = false;	/* begin_new_exec(): set_dumpable(SUID_DUMP_USER) */
	t->proc->membarrier_reg = 0;	/* membarrier_exec_mmap(): a new mm is not registered */
	keys_exec(t);	/* no thread keyring, a new process keyring */
}

/* Keep argv for /proc/PID/cmdline. */
static void set_cmdline(struct task *t, char *const argv[])
{
	size_t len = 0;

	for (size_t i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	free(t->proc->cmdline);
	t->proc->cmdline = malloc(len + 1);
	t->proc->cmdline_len = t->proc->cmdline ? len : 0;
	for (size_t i = 0, at = 0; t->proc->cmdline && argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(t->proc->cmdline + at, argv[i], n);
		at += n;
	}
}

/* A reason that names a file, for the CLI's refusal ("pvx: prog: why"). */
static const char *why_file(const char *file, const char *what)
{
	static __thread char buf[PVX_PATH_MAX + 128];

	snprintf(buf, sizeof(buf), "%s: %s", file, what);
	return buf;
}

static long exec_open(struct task *t, int dirfd, const char *path, int at_flags, char *name, size_t size);

/*
 * Open and check the PT_INTERP program as load_elf_binary() does: by its
 * path in the guest's root, a regular executable file (open_exec: never
 * an open of a FIFO or device that could wait), an x86-64 ELF or -ELIBBAD.
 */
static long open_interp(struct task *t, const struct elf_info *ei, struct elf_info *iei, const char **why)
{
	char name[PVX_PATH_MAX];
	struct stat st;
	long fd = exec_open(t, AT_FDCWD, ei->interp, 0, name, sizeof(name)), r;

	if (fd < 0) {
		if (why)
			*why = why_file(ei->interp, fd == -ENOENT ? "the program's interpreter (PT_INTERP) does not exist"
								  : strerror((int)-fd));
		return fd;
	}
	if (fstat((int)fd, &st) < 0)
		r = neg_errno();
	else if (!S_ISREG(st.st_mode))
		r = -EACCES;
	else if (syscall(SYS_faccessat2, (int)fd, "", X_OK, AT_EMPTY_PATH) < 0)
		r = neg_errno();
	else if ((uint64_t)st.st_size < sizeof(Elf64_Ehdr))
		r = -EIO;	/* elf_read(): a short read of the interpreter's header */
	else
		r = elf_read((int)fd, iei);
	if (r == -ENOEXEC) {
		if (why)
			*why = why_file(ei->interp, iei->why);
		r = -ELIBBAD;
	} else if (r < 0 && why) {
		*why = why_file(ei->interp, strerror((int)-r));
	}
	if (r < 0) {
		close((int)fd);
		return r;
	}
	return fd;
}

/*
 * execve(2): "the calling thread's state is reset" -- the FPU too
 * (fpu_flush_thread): x87 and SSE control words to their defaults, every
 * XSAVE component to its init state (an XSAVE header with no bit set).
 * Needed when the image goes into the old stub thread (exec_in_place).
 */
static void fpu_reset(struct task *t)
{
	const struct platform_ops *ops = t->proc->as->ops;
	char buf[K_FPSTATE_MAX] __attribute__((aligned(64)));	/* on the stack, not TLS: see signal.c push_frame */

	if (!ops->fpu_get || !ops->fpu_set)
		return;
	long n = ops->fpu_get(t->ctx, buf, sizeof(buf));
	if (n < K_FXSAVE_SIZE)
		return;	/* no state of its own yet: the stub thread's start state */
	memset(buf, 0, K_FPX_SW_BYTES_OFFSET);	/* registers, tag and status words */
	const uint16_t fcw = 0x37f;		/* FPU_CW default */
	const uint32_t mxcsr = 0x1f80;		/* MXCSR_DEFAULT */
	memcpy(buf, &fcw, sizeof(fcw));
	memcpy(buf + 24, &mxcsr, sizeof(mxcsr));
	if (n >= K_FXSAVE_SIZE + 64)
		memset(buf + K_FXSAVE_SIZE, 0, 64);	/* the XSAVE header: xstate_bv 0, every component init */
	if (ops->fpu_set(t->ctx, buf, (size_t)n) < 0)
		pr_debug("exec: the FPU state of %d could not be reset", t->tid);
}

/*
 * Can t's image be replaced inside its own stub, saving a stub's spawn?
 * Only when its process is alone there: no vfork parent or other CLONE_VM
 * process (mm users), no other thread (de_thread ended them; the platform
 * says whether their stub threads are gone), and t runs the stub's first
 * context. Nothing is changed by asking.
 */
static bool exec_in_place(struct task *t)
{
	struct addr_space *as = t->proc->as;

	if (!as || !as->ops->as_exec || t->mm->users != 1 || t->mm->as != as || !t->ctx || !t->ctx->first)
		return false;
	return as->ops->as_exec(as, false) == 0;
}

/*
 * The reuse: past the checks of the images (begin_new_exec's point of no
 * return), the old image's robust and PI futexes go as exec_mm_release()
 * has them, then its every mapping; its mm (VMAs, brk, policies, seals,
 * locks, shm attachments, aio rings) is freed for a new one on the same
 * stub. A failure from here on kills the process, as Linux's
 * force_fatal_sig(SIGSEGV) after the point of no return.
 */
static long exec_mm_reuse(struct task *t, struct mm *mm, int fd, const struct elf_info *ei, int ifd,
			  const struct elf_info *iei, const char *path, char *const argv[], char *const envp[])
{
	struct addr_space *as = t->proc->as;
	struct mm *old_mm = t->mm;
	long r;

	futex_exit_robust(t, old_mm);
	futex_exit_pi(t);
	/* The wipe and the new image's host calls, in as few stops as the platform can (platform.h). */
	bool batch = as->ops->as_batch && as->ops->as_batch(as, AS_BATCH_BEGIN) == 0;
	r = as->ops->as_exec(as, true);
	aio_mm_gone(old_mm);
	mm_release(old_mm);
	free(old_mm);
	t->proc->mm = t->mm = mm;
	if (!r)
		r = mm_init(mm, as);
	if (!r) {
		fpu_reset(t);
		r = elf_load(t, fd, ei, ifd, iei, argv, envp, path);
	}
	if (batch) {
		long e = as->ops->as_batch(as, AS_BATCH_END);
		r = r < 0 ? r : e;
	}
	if (r < 0) {
		pr_debug("exec: %s failed past the point of no return: %s", path, strerror((int)-r));
		process_exit_group(t, SIGSEGV);
	}
	return r;
}

/* A new mm with the images in it, made t's; on failure before the point of no return nothing changed. */
static long exec_mm(struct task *t, int fd, const struct elf_info *ei, int ifd, const struct elf_info *iei,
		    const char *path, char *const argv[], char *const envp[], const char **why)
{
	/*
	 * A new mm and stub, never the old ones changed in place, unless t's
	 * process is alone in them: a vfork parent may run in those
	 * (exec_mmap() of a CLONE_VM child).
	 */
	struct addr_space *old_as = t->proc->as, *as;
	struct platform_ctx *old_ctx = t->ctx;
	struct mm *old_mm = t->mm, *mm = mm_new();
	struct pvx_regs old_regs = t->regs;
	long r;

	if (!mm)
		return -ENOMEM;
	fd_pt_off(t->files, old_as);	/* the stub's dups go, kept or not (seccomp_passthrough.md) */
	if ((r = elf_args_fit(argv, envp, path)) < 0) {
		free(mm);
		return r;
	}
	if (exec_in_place(t)) {
		pr_debug("exec: %s in place, in stub %d", path, old_as->pid);
		return exec_mm_reuse(t, mm, fd, ei, ifd, iei, path, argv, envp);
	}
	r = sandbox.platform->as_new(&as);
	if (r < 0) {
		free(mm);
		if (why)
			*why = "cannot start the stub process";
		return r;
	}
	t->proc->as = as;
	t->ctx = as->ctxs;	/* its first context, owned by this thread */
	t->proc->mm = t->mm = mm;
	r = mm_init(mm, as);
	if (!r)
		r = elf_load(t, fd, ei, ifd, iei, argv, envp, path);
	if (r < 0) {
		mm_release(mm);
		free(mm);
		as->ops->as_release(as, NULL);
		t->proc->as = old_as;
		t->ctx = old_ctx;
		t->proc->mm = t->mm = old_mm;
		t->regs = old_regs;
		return r;
	}
	futex_exit_robust(t, old_mm);	/* exec_mm_release(): the old image's locks */
	futex_exit_pi(t);		/* futex_exec_release(): PI locks it held with waiters go to them */
	mm_leave(t, old_mm, old_as);	/* its stub goes unless a vfork parent runs there */
	return 0;
}

/* Load an opened ELF (and its interpreter) into a new address space and make it t's. */
static long exec_elf(struct task *t, int fd, const char *path, char *const argv[], char *const envp[],
		     const char **why)
{
	cleanup_free struct elf_info *ei = malloc(sizeof(*ei));
	cleanup_free struct elf_info *iei = NULL;
	char exe[PVX_PATH_MAX];
	long r;

	if (!ei)
		return -ENOMEM;
	r = elf_read(fd, ei);
	if (r < 0) {
		if (why && r == -ENOEXEC)
			*why = why_file(path, ei->why);
		return r;
	}
	if (ei->interp[0]) {
		if (!(iei = malloc(sizeof(*iei))))
			return -ENOMEM;
		long ifd = open_interp(t, ei, iei, why);
		if (ifd < 0)
			return ifd;
		r = exec_mm(t, fd, ei, (int)ifd, iei, path, argv, envp, why);
		close((int)ifd);
	} else {
		r = exec_mm(t, fd, ei, -1, NULL, path, argv, envp, why);
	}
	if (r < 0)
		return r;
	free(t->proc->exe);
	t->proc->exe = path_of_fd(fd, exe, sizeof(exe)) >= 0 ? strdup(exe) : NULL;
	struct stat st;
	if (fstat(fd, &st) == 0)
		t->proc->exe_dev = st.st_dev, t->proc->exe_ino = st.st_ino;
	set_cmdline(t, argv);
	const char *base = strrchr(path, '/');
	/* __set_task_comm at exec: the file name, cut to 15 bytes. */
	strncpy(t->comm, base ? base + 1 : path, sizeof(t->comm) - 1);
	t->comm[sizeof(t->comm) - 1] = 0;
	t->keepcaps = false;	/* "This flag is always cleared on an execve(2)" */
	exec_reset(t);
	return 0;
}

/*
 * The file execveat(2) names, opened for reading, and the name the kernel
 * gives it (bprm->filename): path itself when absolute or relative to the
 * cwd, else "/dev/fd/N/path", or "/dev/fd/N" for AT_EMPTY_PATH.
 */
static long exec_open(struct task *t, int dirfd, const char *path, int at_flags, char *name, size_t size)
{
	struct stat st;
	int held = O_PATH;
	long r, fd;

	if (!path[0] && (at_flags & AT_EMPTY_PATH)) {
		int hfd = t->fs->cwd_fd;
		struct file *f = NULL;
		if (dirfd != AT_FDCWD && !(f = fd_lookup(t->files, dirfd)))
			return -EBADF;
		if (f && (hfd = (int)file_object(f, FILE_EXEC)) < 0)
			return hfd == FILE_CALL_DONE ? -EACCES : hfd;
		snprintf(name, size, "/dev/fd/%d", dirfd);
		fd = fcntl(hfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return neg_errno();
		held = f ? f->flags : O_PATH;
	} else {
		if (!path[0])
			return -ENOENT;
		if (dirfd == AT_FDCWD || path[0] == '/')
			snprintf(name, size, "%s", path);
		else
			snprintf(name, size, "/dev/fd/%d/%s", dirfd, path);
		fd = path_open(t, dirfd, path, O_PATH | (at_flags & AT_SYMLINK_NOFOLLOW ? O_NOFOLLOW : 0), 0);
		if (fd < 0)
			return fd;
		held = -1;
	}
	/* do_open_execat(): "if (!S_ISREG(...)) goto exit; ... -EACCES", before any open that could wait. */
	r = fstat((int)fd, &st) < 0 ? neg_errno() : S_ISREG(st.st_mode) ? 0 : S_ISLNK(st.st_mode) ? -ELOOP : -EACCES;
	if (r == 0)
		r = policy_reopen(NULL, (int)fd, O_RDONLY, 0, held);
	close((int)fd);
	return r;
}

/* Does a guest file open for writing refer to st's object? */
static bool open_for_write(const struct stat *st)
{
	for (struct file *f = file_next(NULL); f; f = file_next(f)) {
		struct stat fst;
		if ((f->flags & O_PATH) || (f->flags & O_ACCMODE) == O_RDONLY || f->ops->stat(f, &fst) < 0)
			continue;
		if (fst.st_dev == st->st_dev && fst.st_ino == st->st_ino && S_ISREG(fst.st_mode))
			return true;
	}
	return false;
}

bool exec_running(int host_fd)
{
	struct stat st;

	if (fstat(host_fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	for (struct task *p = task_next(NULL); p; p = task_next(p)) {
		if (!p->proc || p->state == TASK_ZOMBIE || p->exited)
			continue;
		if (p->proc->exe_dev == st.st_dev && p->proc->exe_ino == st.st_ino)
			return true;
	}
	return false;
}

long task_exec(struct task *t, const char *path, char *const argv[], char *const envp[], const char **why)
{
	return task_execveat(t, AT_FDCWD, path, 0, argv, envp, why);
}

long task_execveat(struct task *t, int dirfd, const char *path, int at_flags, char *const argv[],
		   char *const envp[], const char **why)
{
	char interp[SHEBANG_MAX], arg[SHEBANG_MAX], cur[PVX_PATH_MAX];
	char **args = NULL;
	long r = -ELOOP;

	for (int depth = 0; depth <= MAX_INTERP_DEPTH; depth++) {
		/* a "#!" interpreter is opened as the program is: O_PATH, a regular file, then read */
		long fd = depth ? exec_open(t, AT_FDCWD, interp, 0, cur, sizeof(cur))
				: exec_open(t, dirfd, path, at_flags, cur, sizeof(cur));
		if (fd < 0) {
			r = fd;
			if (depth && why)	/* name the interpreter, not the script */
				*why = why_file(interp, fd == -ENOENT ? "the script's interpreter does not exist"
								     : strerror((int)-fd));
			break;
		}
		struct stat st;
		if (fstat((int)fd, &st) == 0 && !S_ISREG(st.st_mode))
			r = -EACCES;
		else if (syscall(SYS_faccessat2, (int)fd, "", X_OK, AT_EMPTY_PATH) < 0)
			r = neg_errno();
		else if (open_for_write(&st))
			r = -ETXTBSY;	/* do_open_execat's deny_write_access */
		else
			r = parse_shebang((int)fd, interp, sizeof(interp), arg, sizeof(arg));
		if (r == 0)
			r = exec_elf(t, (int)fd, cur, args ? args : argv, envp, why);
		close((int)fd);
		if (r <= 0)
			break;
		/* "#!interp arg" runs interp [arg] path argv[1]... */
		size_t argc = 0;
		while (argv[argc])
			argc++;
		char **nargs = calloc(argc + 4, sizeof(*nargs));
		if (!nargs) {
			r = -ENOMEM;
			break;
		}
		size_t n = 0;
		nargs[n++] = strdup(interp);
		if (arg[0])
			nargs[n++] = strdup(arg);
		nargs[n++] = strdup(cur);
		for (size_t i = 1; i < argc; i++)
			nargs[n++] = strdup(argv[i]);
		if (args)
			for (char **a = args; *a; a++)
				free(*a);
		free(args);
		args = nargs;
		argv = args;
		r = -ELOOP;
	}
	if (args)
		for (char **a = args; *a; a++)
			free(*a);
	free(args);
	return r;
}
