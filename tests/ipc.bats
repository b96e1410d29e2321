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

@test "shm: remap_file_pages keeps a segment's mapping; after IPC_RMID it fails and the segment goes (shmctl05 loops on it)" {
	ipc ipc_shm remap
	grep -q 'remap after rmid: EINVAL or EIDRM' "$sandbox_out"
	grep -q 'page 0 now a, nattch 1' "$sandbox_out"
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

@test "sem: keys, SETVAL/GETVAL/SETALL/GETALL, ERANGE, atomic semop, EFBIG, IPC_STAT/IPC_SET, *_INFO, SEM_STAT" {
	ipc ipc_sem basic
	grep -q 'atomic left: 1 2' "$sandbox_out"
}

@test "sem: waiters wake when they can go; GETNCNT/GETZCNT; timeout EAGAIN, signal EINTR, removal EIDRM, SIGKILL" {
	ipc ipc_sem block
	grep -q 'waiter: EIDRM' "$sandbox_out"
	grep -q 'semop interrupted: EINTR' "$sandbox_out"
}

@test "sem: SEM_UNDO applied at exit and at SIGKILL, clamped, cleared by SETVAL, not inherited; ERANGE past SEMAEM" {
	ipc ipc_sem undo
	grep -q 'after kill: 3' "$sandbox_out"
}

@test "sem hostile: bad pointers, nsops 0, 501 and huge, bad timeouts, negative, forged and removed ids" {
	ipc ipc_sem hostile
	grep -q 'semop nsops huge: E2BIG' "$sandbox_out"
}

# hang_then CMD: start `pvx run ipc_sem hang stay`, wait for its waiters, run CMD on pvx's pid; pvx must end.
hang_then() {
	require_pvx
	local out=$BATS_TEST_TMPDIR/hang.out
	"$PVX" run --platform="$PVX_PLATFORM" -- "$(guest "$1")" hang stay >"$out" 2>&1 &
	local pid=$! i
	for ((i = 0; i < 200; i++)); do
		grep -q ready "$out" && break
		sleep 0.1
	done
	grep -q ready "$out"
	kill "-$2" "$pid"
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		echo "pvx did not end within 10 s of SIG$2" >&2
		return 1
	fi
	wait "$pid" || true
}

@test "sem: pid 1 exits while its children wait in semop: the sandbox ends at once" {
	pvx_run "$(guest ipc_sem)" hang
	[[ $status == 0 && $output == ready ]]
}

@test "sem: SIGTERM to pvx while every process waits in semop ends the sandbox" {
	hang_then ipc_sem TERM
}

@test "msg: type selection (0, >0, <0, MSG_EXCEPT), MSG_COPY, MSG_NOERROR/E2BIG, ENOMSG, msg_qbytes, IPC_SET, *_INFO" {
	ipc ipc_msg basic
	grep -q "type <= 4: type 1 len 4 'one'" "$sandbox_out"
	grep -q 'copies leave them: 5' "$sandbox_out"
}

@test "msg: receivers and senders wait and wake; EINTR with SA_RESTART; removal EIDRM to both; SIGKILL" {
	ipc ipc_msg block
	grep -q 'rmid 0 0, exits 43 43' "$sandbox_out"
}

@test "msg hostile: bad pointers, types, sizes near SIZE_MAX, negative, forged and removed ids, a full queue" {
	ipc ipc_msg hostile
	grep -q 'send text beyond: EFAULT' "$sandbox_out"
}

@test "msg: pid 1 exits while its children wait in msgrcv and msgsnd: the sandbox ends at once" {
	pvx_run "$(guest ipc_msg)" hang
	[[ $status == 0 && $output == ready ]]
}

@test "msg: SIGTERM to pvx while every process waits in msgrcv or msgsnd ends the sandbox" {
	hang_then ipc_msg TERM
}

@test "/proc/sys/kernel shows Linux's default IPC limits, read-only; /proc/sysvipc lists shm, sem, msg" {
	require_prog "$BUSYBOX"
	pvx_run "$BUSYBOX" sh -c 'cd /proc/sys/kernel && for f in msgmax msgmnb msgmni sem shmall shmmax shmmni; do
		echo "$f $(cat $f)"; done; ls /proc/sysvipc | tr "\n" " "; echo; echo 1 > shmmni && echo written'
	printf '%s\n' "${lines[@]}"
	[[ ${lines[0]} == "msgmax 8192" && ${lines[1]} == "msgmnb 16384" && ${lines[2]} == "msgmni 32000" ]]
	[[ ${lines[3]} == "sem "$'32000\t1024000000\t500\t32000' ]]
	[[ ${lines[4]} == "shmall 18446744073692774399" && ${lines[5]} == "shmmax 18446744073692774399" ]]
	[[ ${lines[6]} == "shmmni 4096" && ${lines[7]} == "msg sem shm " ]]
	[[ $output != *written* ]]
}
