#!/usr/bin/env bats
# System V IPC: the sandbox's one IPC namespace (shared memory, semaphores,
# message queues), each guest against its native run (musl and glibc), and
# hostile arguments: bad pointers, huge sizes, forged and removed ids,
# removal while another process waits, kills of waiters, the limits.

load helpers

# ipc NAME MODE: both builds of guest NAME in MODE against their native runs.
ipc() { compare_flavours 0 "$1" "$2"; }

@test "shm: keys, attach, nattch across fork, SHM_RDONLY, split and shmdt, IPC_SET, IPC_RMID while attached" {
	ipc ipc_shm basic
	grep -q 'after rmid: mode 1640 key 0 nattch 1 in proc 1' "$sandbox_out"
}

@test "shm: SHM_RND, SHM_REMAP, overlap, another process attaches by id; exec and SIGKILL detach" {
	ipc ipc_shm attach
	grep -q 'other exit 0, data from other' "$sandbox_out"
	grep -q 'stat of gone: EINVAL' "$sandbox_out"
}

@test "shm hostile: bad buffers, huge sizes, negative, forged and removed ids, *_INFO and *_STAT, /proc/sys" {
	ipc ipc_shm hostile
	grep -q 'stat bad buf: EFAULT' "$sandbox_out"
}

@test "shm: SHMMNI segments, then ENOSPC" {
	ipc ipc_shm limit
	grep -q 'stopped with ENOSPC, all yes' "$sandbox_out"
}

@test "shm: segments are charged to --memory once, and given back when removed" {
	PVX_OPTS=(--memory=64M)
	pvx_run "$(guest ipc_shm)" mem
	echo "$output"
	[[ $status == 0 ]]
	grep -q '128M: ENOMEM' <<<"$output"
	for i in 0 1 2; do grep -q "40M round $i: ok" <<<"$output"; done
	[[ $(grep -c 'child 0' <<<"$output") == 3 ]]
}
