// SPDX-License-Identifier: GPL-2.0
/*
 * PROCESS_VM_EXEC_SYSCALL (seed test 3): write(2) from the stub's memory
 * into our pipe, mmap(2) in the stub's mm, and the allowlist/seccomp rules.
 */
#include "vmexec_test.h"
#include <sys/uio.h>
#include <linux/seccomp.h>
#include <linux/filter.h>

#define TEST_VAL 0x1e511e51

static int test_val = TEST_VAL;

static long vm_syscall(pid_t pid, long nr, long a1, long a2, long a3,
		       long a4, long a5, long a6, long *result)
{
	struct process_vm_exec_context ctx = {0};
	long ret;

	ctx.rax = nr;
	ctx.rdi = a1;
	ctx.rsi = a2;
	ctx.rdx = a3;
	ctx.r10 = a4;
	ctx.r8 = a5;
	ctx.r9 = a6;
	ret = vmexec(pid, &ctx, PROCESS_VM_EXEC_SYSCALL, NULL, NULL);
	*result = ctx.rax;
	return ret;
}

int main(void)
{
	long ret, res;
	int p[2], val = 0;
	pid_t pid;
	char buf[64];
	struct iovec local, remote;

	tap_plan(7);
	pid = spawn_stub();
	/* the stub keeps TEST_VAL, we change our copy */
	test_val = 0;
	if (pipe(p))
		return 2;

	ret = vm_syscall(pid, SYS_write, p[1], (long)&test_val, sizeof(test_val),
			 0, 0, 0, &res);
	if (read(p[0], &val, sizeof(val)) != sizeof(val))
		val = -1;
	tap_ok(ret == 0 && res == sizeof(test_val) && val == TEST_VAL,
	       "write() of the stub's memory (ret %ld rax %ld data %#x)", ret, res, val);

	ret = vm_syscall(pid, SYS_mmap, 0, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &res);
	tap_ok(ret == 0 && res > 0 && res < (1L << 47),
	       "mmap() in the stub (ret %ld addr %#lx)", ret, res);

	/* the new mapping exists in the stub, not in us */
	strcpy(buf, "hello stub");
	local.iov_base = buf;
	local.iov_len = sizeof(buf);
	remote.iov_base = (void *)res;
	remote.iov_len = sizeof(buf);
	ret = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	tap_ok(ret == sizeof(buf) && msync((void *)res, 4096, MS_ASYNC) == -1 &&
	       errno == ENOMEM, "mapping is in the stub only (writev %ld)", ret);

	ret = vm_syscall(pid, SYS_write, p[1], res, 10, 0, 0, 0, &res);
	memset(buf, 0, sizeof(buf));
	if (read(p[0], buf, 10) != 10)
		buf[0] = 0;
	tap_ok(ret == 0 && res == 10 && !strcmp(buf, "hello stub"),
	       "write() from the new mapping (rax %ld '%s')", res, buf);

	ret = vm_syscall(pid, SYS_write, p[1], 8, 10, 0, 0, 0, &res);
	tap_ok(ret == 0 && res == -EFAULT, "bad buffer: rax -EFAULT (%ld)", res);

	ret = vm_syscall(pid, SYS_getpid, 0, 0, 0, 0, 0, 0, &res);
	tap_ok(ret == -1 && errno == EINVAL, "syscall outside the allowlist: EINVAL (%ld %d)",
	       ret, errno);

	/* under seccomp the inner syscall would bypass the filter: EPERM */
	{
		struct sock_filter allow[] = {
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = 1, .filter = allow };
		pid_t c = fork();

		if (c == 0) {
			prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
			if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
				_exit(3);
			ret = vm_syscall(pid, SYS_write, p[1], (long)&test_val, 4,
					 0, 0, 0, &res);
			_exit(ret == -1 && errno == EPERM ? 0 : 1);
		}
		waitpid(c, &val, 0);
		tap_ok(WIFEXITED(val) && WEXITSTATUS(val) == 0,
		       "caller under seccomp: EPERM (status %#x)", val);
	}
	kill_stub(pid);
	return tap_exit();
}
