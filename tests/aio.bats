#!/usr/bin/env bats
# Linux AIO (io_setup, io_submit, io_getevents, io_pgetevents, io_cancel,
# io_destroy): each guest against its native run (musl and glibc) on a file
# in the test's directory, and hostile input: forged contexts, bad iocb
# arrays, iocbs and buffers, huge nr, a full eventfd, io_destroy while a
# thread waits, signals during a wait.

load helpers

setup() {
	cd "$BATS_TEST_TMPDIR"
	PVX_OPTS=(--rw)
}

aio() { compare_flavours 0 aio "$1"; }

@test "aio: io_setup's checks, pread/pwrite/preadv/pwritev/fsync/fdsync, a pipe, RWF_NOWAIT, getevents ranges" {
	aio basic
	has "read 'aio world'" "readv 'ABC' 'DE'" "nowait: res EAGAIN data yes obj yes" "getevents times out: 0" \
		"setup over aio-max-nr: EAGAIN" "destroy again: EINVAL"
}

@test "aio: IOCB_FLAG_RESFD counts completions in an eventfd; bad resfd; a full one saturates (POLLERR) as Linux" {
	aio notify
	has "eventfd count 2" "resfd a pipe: EINVAL" "events: 3" "revents POLLERR: yes" "count is UINT64_MAX: yes"
}

@test "aio hostile: forged contexts, bad iocb pointers and fields, bad buffers, huge nr, a forked child" {
	aio hostile
	has "submit forged ctx: EINVAL" "submit iocbpp -1: EFAULT" "pread to unmapped: res EFAULT data yes obj yes" \
		"getevents after EFAULT: 1" "huge nr submitted some: yes" "reaped all: yes" "child submit: EINVAL"
}

@test "aio: io_destroy wakes a waiting thread (EINVAL); a signal ends a wait with EINTR; io_pgetevents' mask" {
	aio wait
	has "waiter: EINVAL" "getevents with SA_RESTART alarm: EINTR" "pgetevents masked: 0" "alarms some" "alarms 1"
}

@test "aio: the ring is a readable mapping with no user-visible events, unmapped by io_destroy; fs.aio-nr" {
	pvx_run "$(guest aio)" ring
	echo "$output"
	[[ $status == 0 ]]
	for l in "aio-max-nr 65536" "aio-nr grew by 100" "ring mapped: yes" "ring magic 0: yes" "aio-nr back: yes" \
		"ring unmapped: yes"; do
		grep -qxF "$l" <<<"$output"
	done
}

@test "aio hostile: io_destroy while another thread's io_submit waits in a pipe read" {
	pvx_run "$(guest aio)" busy
	echo "$output"
	[[ $status == 0 ]]
	[[ $output == $'destroy under a busy submit: 0\nbusy submit: 1\ngetevents on it: EINVAL\ndestroy it again: EINVAL' ]]
}

@test "aio: /proc/config.gz says CONFIG_AIO=y" {
	pvx_run "$BUSYBOX" sh -c 'zcat /proc/config.gz | grep -x CONFIG_AIO=y'
	[[ $status == 0 ]]
}
