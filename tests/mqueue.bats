#!/usr/bin/env bats
# POSIX message queues: the sandbox's one mqueue namespace, each guest
# against its native run (musl and glibc), and hostile input: names with
# '/', '.', '..', empty and overlong, bad pointers and timespecs, huge
# lengths and priorities, messages lost to EFAULT as on Linux, waits ended
# by timeouts and signals, the queue count limit.

load helpers

mq() { compare_flavours 0 mqueue "$1"; }

@test "mqueue: create/open/O_EXCL, attributes and defaults, priorities, QSIZE line, poll, O_NONBLOCK, unlink while open" {
	mq basic
	has "receive: 'high' prio 30" "receive: 'mid2' prio 10" "send full nonblock: EAGAIN" "revents POLLIN yes" \
		"receive after unlink: 'still' prio 0" "default maxmsg 10 msgsize 8192"
}

@test "mqueue: a receiver woken by another process's send, a sender by a receive; timeouts; signals end waits" {
	mq block
	has "woken receiver: 'from child' prio 7" "got 'two'" "child exit 0" "receive times out: ETIMEDOUT" \
		"receive interrupted: EINTR" "send interrupted: EINTR"
}

@test "mqueue: mq_notify SIGEV_SIGNAL fires once with SI_MESGQ; SIGEV_THREAD's netlink cookie; EBUSY; bad sigevents" {
	mq notify
	has "signal with SI_MESGQ, value, pid: yes" "second signal (registration gone): no" "child notify: busy: EBUSY" \
		"bad signal: EINVAL" "thread ran with the value: yes" "SIGEV_THREAD to stdin: ENOTSOCK" \
		"SIGEV_THREAD bad cookie: EFAULT" "notify with the old owner a zombie: 0"
}

@test "mqueue hostile: bad names, pointers, timespecs, priorities and lengths; EFAULT loses the message" {
	mq hostile
	has "name with a slash: EACCES" "name ..: EACCES" "name 299 bytes: ENAMETOOLONG" "receive bad timespec: EINVAL" \
		"send huge len: EMSGSIZE" "curmsgs after EFAULT 0" \
		"receive len SIZE_MAX: 1"
}

@test "mqueue: queues_max (256) then ENOSPC; /proc/sys/fs/mqueue; CONFIG_POSIX_MQUEUE=y" {
	pvx_run "$(guest mqueue)" limit
	echo "$output"
	[[ $status == 0 && $output == "made 256, then ENOSPC" ]]
	# unlinked queues still open count too (each holds host eventfds of the sentry's)
	pvx_run "$(guest mqueue)" limit-unlinked
	echo "$output"
	[[ $status == 0 && $output == "made 256, then ENOSPC" ]]
	pvx_run "$BUSYBOX" sh -c 'cat /proc/sys/fs/mqueue/msg_max /proc/sys/fs/mqueue/msgsize_max /proc/sys/fs/mqueue/queues_max; zcat /proc/config.gz | grep -x CONFIG_POSIX_MQUEUE=y'
	echo "$output"
	[[ $status == 0 && $output == $'10\n8192\n256\nCONFIG_POSIX_MQUEUE=y' ]]
}

@test "mqueue: SIGEV_THREAD registrations, each a host mqueue of the sentry's, are capped at 16 (ENOMEM)" {
	pvx_run "$(guest mqueue)" thread-limit
	echo "$output"
	[[ $status == 0 && $output == $'registered 16, then ENOMEM\nanother after one went: 0' ]]
}

@test "mqueue: SIGEV_THREAD to a full netlink socket waits as Linux does, with the sentry lock dropped: a signal ends it" {
	mq thread-congested
	has "SIGEV_THREAD to a full socket: EINTR"
}

@test "mqueue: a waiting receiver does not keep the sandbox from being killed" {
	pvx_run "$BUSYBOX" sh -c "$(guest mqueue) forever & sleep 1; kill -9 \$! && echo killed; wait; echo done"
	echo "$output"
	[[ $status == 0 && $output == $'waiting\nkilled\ndone' ]]
	# and pvx itself ends with a receiver still waiting in a process it kills at exit_group
	pvx_run "$BUSYBOX" sh -c "$(guest mqueue) forever & sleep 1; echo leaving"
	echo "$output"
	[[ $status == 0 && $output == *leaving* ]]
}
