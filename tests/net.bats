#!/usr/bin/env bats
# Issue 13, networking: AF_UNIX and AF_INET/AF_INET6 sockets over loopback (guests tests/guest/net_unix.c and
# net_inet.c, musl and glibc builds, compared with their native runs), busybox nc and httpd + wget, and the
# sandbox's private network: under --network=none (the default) nothing on the host is reachable; with
# --network=host the host's loopback is. Tests only ever use loopback addresses.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

teardown() {
	# the host-side listeners this test started (by pid, never by name)
	local p
	for p in ${HOST_PIDS:-}; do
		kill "$p" 2>/dev/null || true
	done
}

net() { compare_flavours 0 "$@"; }

net_rw() {
	PVX_OPTS=(--rw)
	compare_flavours 0 "$@"
}

have_ipv6_loopback() {
	[[ -r /proc/net/if_inet6 ]] && grep -q '^0\{31\}1 ' /proc/net/if_inet6
}

# A port that is free on the host's loopback now (for tests that run one server and one client in one sandbox
# and natively alike).
free_port() {
	local p
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		p=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
	done
	echo 0
}

# host_serve ADDR: start `net_inet serve ADDR` natively in the background; sets HOST_PORT, HOST_PID, HOST_OUT
host_serve() {
	HOST_OUT=$BATS_TEST_TMPDIR/serve.$RANDOM
	"$(guest net_inet)" serve "$1" >"$HOST_OUT" 2>&1 &
	HOST_PID=$!
	HOST_PIDS="${HOST_PIDS:-} $HOST_PID"
	local i
	for i in $(seq 100); do
		grep -q '^port ' "$HOST_OUT" 2>/dev/null && break
		sleep 0.1
	done
	HOST_PORT=$(awk '/^port /{print $2}' "$HOST_OUT")
	[[ -n $HOST_PORT ]] || {
		echo "the host listener did not start: $(<"$HOST_OUT")" >&2
		return 1
	}
}

# pvx_with OPTION... -- PROG ARGS...: pvx_run with these pvx options (PVX_OPTS) for this one run
pvx_with() {
	local o=()
	while [[ $1 != -- ]]; do
		o+=("$1")
		shift
	done
	shift
	PVX_OPTS=("${o[@]}")
	pvx_run "$@"
	PVX_OPTS=()
}

@test "AF_UNIX socketpair stream: data both ways, flags, EAGAIN, shutdown, EOF, EPIPE and SIGPIPE" {
	net net_unix stream
	grep -qx 'read b, 100: 11 "hello world"' "$sandbox_out"
	grep -qx 'write, peer closed: -1 EPIPE, SIGPIPE 1' "$sandbox_out"
}

@test "AF_UNIX datagrams and seqpackets keep boundaries; named datagram sockets give sender addresses" {
	net_rw net_unix dgram
	grep -qx 'recv 2 of 5, MSG_TRUNC: 5 "th"' "$sandbox_out"
	grep -qx 'recvfrom: 5 "dgram" from "net_unix.d2"' "$sandbox_out"
	net_rw net_unix seqpacket
	grep -qx 'recv 3 of 6: 3 "sec"' "$sandbox_out"
	grep -qx 'recv: 10 "from child"' "$sandbox_out"
}

@test "AF_UNIX named sockets in a --rw directory: bind, EADDRINUSE, connect, accept, names, ECONNREFUSED" {
	net_rw net_unix named
	grep -qx 'stat: 0, a socket yes' "$sandbox_out"
	grep -qx 'bind the same path again: -1 EADDRINUSE' "$sandbox_out"
	grep -qx 'getsockname of the listener: "net_unix.sock" length ok yes' "$sandbox_out"
	grep -qx 'server reads the child: 5 "child"' "$sandbox_out"
}

@test "AF_UNIX abstract names: bind, EADDRINUSE, connect, autobind, no file" {
	net net_unix abstract
	grep -qx 'bind the same name again: -1 EADDRINUSE' "$sandbox_out"
	grep -qx 'autobound name: length 6, leading NUL yes' "$sandbox_out"
}

@test "SCM_RIGHTS passes fds parent -> child and child -> parent, several at once, MSG_CTRUNC" {
	net net_unix rights
	grep -qx 'child: received 1 fd, at the lowest free number yes' "$sandbox_out"
	grep -qx 'parent: read from it: 14 "from the child"' "$sandbox_out"
	grep -qx 'received 3, the same files in order yes' "$sandbox_out"
}

@test "SO_PEERCRED and SCM_CREDENTIALS show the guest's pids and ids" {
	net_rw net_unix creds
	grep -qx 'peer pid is my child: yes, uid mine: yes, gid mine: yes' "$sandbox_out"
	grep -qx 'message P: SCM_CREDENTIALS yes, pid is my child yes, uid mine yes, gid mine yes' "$sandbox_out"
}

@test "AF_UNIX errors: EAFNOSUPPORT, EPROTONOSUPPORT, ENOTSOCK, EFAULT, bad lengths and control messages" {
	net net_unix errors
	grep -qx 'socket(family 99): -1 EAFNOSUPPORT' "$sandbox_out"
	grep -qx 'recvmsg, bad msghdr pointer: -1 EFAULT' "$sandbox_out"
}

@test "a read-only root refuses to bind a named socket with EROFS and no file appears" {
	chmod 0777 .
	pvx_run "$(guest net_unix)" bind "$PWD/ro.sock"
	assert_contains "$output" 'bind: -1 EROFS'
	[[ ! -e ro.sock ]]
	# ... and with --rw the socket file is made on the host where the guest said
	pvx_with --rw -- "$(guest net_unix)" bind "$PWD/rw.sock"
	assert_contains "$output" 'bind: 0'
	[[ -S rw.sock ]]
}

@test "named sockets resolve inside --root: bind and connect are confined" {
	local R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R"
	chmod 0777 "$R"
	cp "$(guest net_unix)" "$R/net_unix"
	pvx_with --rw --root "$R" -- /net_unix bind /in-root.sock
	assert_contains "$output" 'bind: 0'
	[[ -S $R/in-root.sock && ! -e /in-root.sock ]]
	# the host path of the socket means nothing inside the root (ENOENT, not ECONNREFUSED)
	pvx_with --rw --root "$R" -- /net_unix connect "$R/in-root.sock"
	assert_contains "$output" 'connect: -1 ENOENT'
}

@test "named sockets: symlinks and .. cannot lead bind or connect out of --root" {
	local T=$BATS_TEST_TMPDIR R=$BATS_TEST_TMPDIR/root
	mkdir -p "$R"
	chmod 0777 "$R"
	cp "$(guest net_unix)" "$R/net_unix"
	ln -s / "$R/up"
	ln -s "$T/host.sock" "$R/abs-link"
	ln -s ../host.sock "$R/rel-link"
	# binds through an absolute symlink and through .. land inside the root
	pvx_with --rw --root "$R" -- /net_unix bind /up/escape1.sock
	assert_contains "$output" 'bind: 0'
	pvx_with --rw --root "$R" -- /net_unix bind /../../escape2.sock
	assert_contains "$output" 'bind: 0'
	[[ -S $R/escape1.sock && -S $R/escape2.sock && ! -e /escape1.sock && ! -e /escape2.sock ]]
	# a listener on the host, next to the root: links to it from inside do not reach it
	"$(guest net_unix)" serve-path "$T/host.sock" >serve.out 2>&1 &
	HOST_PIDS=$!
	for _ in $(seq 100); do grep -q listening serve.out && break; sleep 0.1; done
	grep -q listening serve.out
	local l
	for l in /abs-link /rel-link "$T/host.sock" "/up$T/host.sock"; do
		pvx_with --rw --root "$R" -- /net_unix connect "$l"
		assert_contains "$output" 'connect: -1 ENOENT'
	done
	# the listener was there all along
	run timeout 20 "$(guest net_unix)" connect "$T/host.sock"
	assert_contains "$output" 'read: 20 "hello from the host'
}

@test "fds received from outside the sandbox meet the file policy: a device is refused (MSG_CTRUNC), a file is not" {
	[[ -r /dev/kmsg ]] || skip "/dev/kmsg cannot be opened here: no device to pass"
	chmod 0777 .
	"$(guest net_unix)" serve-fd "$PWD/fd.sock" /dev/kmsg >serve.out 2>&1 &
	HOST_PIDS=$!
	for _ in $(seq 100); do grep -q listening serve.out && break; sleep 0.1; done
	grep -q listening serve.out || skip "the host side could not pass /dev/kmsg: $(<serve.out)"
	pvx_run "$(guest net_unix)" recv-fd "$PWD/fd.sock"
	assert_contains "$output" 'connect: 0'
	assert_contains "$output" 'recv-fd: 0 fds, MSG_CTRUNC yes, new fds 0'
	wait "$HOST_PIDS" || true
	# a regular file the host process passes is the host process's to give
	echo data >file
	chmod 0644 file
	rm -f fd.sock
	"$(guest net_unix)" serve-fd "$PWD/fd.sock" "$PWD/file" >serve.out 2>&1 &
	HOST_PIDS=$!
	for _ in $(seq 100); do grep -q listening serve.out && break; sleep 0.1; done
	pvx_run "$(guest net_unix)" recv-fd "$PWD/fd.sock"
	assert_contains "$output" 'recv-fd: 1 fds, MSG_CTRUNC no, new fds 1'
	assert_contains "$output" 'fd: regular'
}

@test "SCM_CREDENTIALS: a guest cannot claim another pid, uid or gid (EPERM)" {
	pvx_run "$(guest net_unix)" forge-creds
	assert_contains "$output" 'forged pid: -1 EPERM'
	assert_contains "$output" 'forged uid: -1 EPERM'
	assert_contains "$output" 'forged gid: -1 EPERM'
	assert_contains "$output" 'forged nothing: 1'
}

@test "abstract names are private to the sandbox: a host listener's name is not reachable" {
	local name=pvx-test-$$-$RANDOM
	"$(guest net_unix)" serve-abstract "$name" >serve.out 2>&1 &
	HOST_PIDS=$!
	for _ in $(seq 100); do grep -q listening serve.out && break; sleep 0.1; done
	grep -q listening serve.out
	pvx_run "$(guest net_unix)" connect-abstract "$name"
	assert_contains "$output" 'connect-abstract: -1 ECONNREFUSED'
	# the listener was there all along: the host reaches it
	run timeout 20 "$(guest net_unix)" connect-abstract "$name"
	assert_contains "$output" 'read: 20 "hello from the host'
}

@test "TCP over 127.0.0.1: bind port 0, listen, connect, accept/accept4, 4 MiB, shutdown, reset, refused" {
	net net_inet tcp4
	grep -qx 'address 127.0.0.1, a port was chosen yes, length ok yes' "$sandbox_out"
	grep -qx 'child: received 4194304 bytes, pattern ok yes, then 0' "$sandbox_out"
	grep -qx 'recv after the peer closed with unread data: -1 ECONNRESET' "$sandbox_out"
	grep -qx 'connect to a closed port: -1 ECONNREFUSED' "$sandbox_out"
}

@test "TCP over ::1" {
	have_ipv6_loopback || skip "the host has no ::1"
	net net_inet tcp6
	grep -qx 'address ::1, a port was chosen yes, length ok yes' "$sandbox_out"
	grep -qx 'child: received 4194304 bytes, pattern ok yes, then 0' "$sandbox_out"
}

@test "UDP over 127.0.0.1: sendto/recvfrom, connect, MSG_TRUNC, sendmsg/recvmsg, sendmmsg/recvmmsg" {
	net net_inet udp4
	grep -qx 'recvfrom: 12 "datagram one" from 127.0.0.1, b.s port yes' "$sandbox_out"
	grep -qx 'recvmmsg 4, MSG_DONTWAIT: 3: 2 "m1" 3 "mm2" 4 "mmm3"' "$sandbox_out"
	grep -qx 'recv: -1 ECONNREFUSED' "$sandbox_out"
}

@test "UDP over ::1" {
	have_ipv6_loopback || skip "the host has no ::1"
	net net_inet udp6
	grep -qx 'recvfrom: 12 "datagram one" from ::1, b.s port yes' "$sandbox_out"
}

@test "non-blocking connect: EINPROGRESS, poll, SO_ERROR; refused; non-blocking and blocking accept" {
	net net_inet nonblock
	grep -qx 'SO_ERROR: ECONNREFUSED' "$sandbox_out"
	grep -qx 'accept, non-blocking, no client: -1 EAGAIN' "$sandbox_out"
}

@test "MSG_PEEK, MSG_DONTWAIT, MSG_WAITALL, MSG_NOSIGNAL" {
	net net_inet flags
	grep -qx 'MSG_PEEK 4: 4 "peek"' "$sandbox_out"
	grep -qx 'MSG_WAITALL 12, sent in two parts: 12 "first-second"' "$sandbox_out"
}

@test "get/setsockopt: SO_REUSEADDR, SO_RCVBUF, TCP_NODELAY, SO_ERROR, SO_TYPE, SO_RCVTIMEO, SO_REUSEPORT" {
	net net_inet sockopt
	grep -qx 'SO_RCVBUF (doubled): 0 value 131072 length 4' "$sandbox_out"
	grep -qx 'TCP_NODELAY: 0 value 1 length 4' "$sandbox_out"
	grep -qx 'bind the same port with SO_REUSEPORT: 0' "$sandbox_out"
}

@test "FIONREAD/SIOCINQ/SIOCOUTQ/FIONBIO/SIOCATMARK/SIOCGIFCONF on sockets" {
	net net_inet ioctl
	grep -qx 'FIONREAD after 10 bytes: 0 value 10' "$sandbox_out"
	grep -qx 'UDP FIONREAD, 2 datagrams: 0 value 3 (the first one.s size)' "$sandbox_out"
	has 'SIOCATMARK on TCP: 0 value 0' 'SIOCATMARK on UDP: -1 ENOTTY' 'SIOCATMARK on TCP, NULL: -1 EFAULT' \
		'SIOCGIFCONF: 0, lo 127.0.0.1 listed: yes, buffer pointer kept: yes' 'SIOCGIFCONF room for one: 0, length 40' \
		'SIOCGIFCONF bad buffer: -1 EFAULT'
}

@test "other families and types: EAFNOSUPPORT, EPROTONOSUPPORT, ESOCKTNOSUPPORT; socket errors" {
	net net_inet families
	grep -qx 'AF_IPX: -1 EAFNOSUPPORT' "$sandbox_out"
	grep -qx 'family 99: -1 EAFNOSUPPORT' "$sandbox_out"
	net net_inet errors
	grep -qx 'bind 192.0.2.1 (not local): -1 EADDRNOTAVAIL' "$sandbox_out"
}

@test "busybox nc: a listener and a client over 127.0.0.1 in one sandbox" {
	require_prog "$BUSYBOX"
	local p
	p=$(free_port)
	PVX_OPTS=(--rw)
	# each run removes what the one before left (the native one may run as root)
	compare_native "$BUSYBOX" sh -c "busybox rm -f got; busybox nc -l -p $p > got & l=\$!; sleep 1
		echo hello nc | busybox nc 127.0.0.1 $p || echo client failed; wait \$l || echo listener failed; cat got"
	[[ $(<"$sandbox_out") == 'hello nc' ]] || { cat "$sandbox_err" >&2; false; }
}

@test "busybox httpd + wget over 127.0.0.1 in one sandbox" {
	require_prog "$BUSYBOX"
	mkdir -p www
	echo 'hello httpd' >www/index.html
	chmod -R a+rX www
	local p
	p=$(free_port)
	compare_native "$BUSYBOX" sh -c "busybox httpd -f -p 127.0.0.1:$p -h www & h=\$!
		for i in \$(busybox seq 50); do busybox wget -q -O - http://127.0.0.1:$p/index.html 2>/dev/null && break; sleep 0.2; done
		kill \$h"
	[[ $(<"$sandbox_out") == 'hello httpd' ]] || { cat "$sandbox_err" >&2; false; }
}

@test "--network takes none or host; other values are a usage error" {
	pvx_with --network=none -- "$(guest hello)"
	assert_status 0
	pvx_with --network=host -- "$(guest hello)"
	assert_status 0
	PVX_OPTS=(--network=bogus)
	pvx_run_split "$(guest hello)"
	PVX_OPTS=()
	[[ $status != 0 ]]
	assert_contains "$PVX_STDERR_TEXT" bogus
	run "$PVX" run --help
	assert_contains "$output" '--network'
}

@test "--network=none (the default): a listener on the host's 127.0.0.1 is not reachable (ECONNREFUSED)" {
	host_serve 127.0.0.1
	pvx_run "$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	assert_contains "$output" 'connect: -1 ECONNREFUSED'
	pvx_with --network=none -- "$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	assert_contains "$output" 'connect: -1 ECONNREFUSED'
	# the listener was there all along: the host reaches it
	run timeout 20 "$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	assert_contains "$output" 'read: 20 hello from the host'
}

@test "--network=none: a listener on the host's ::1 is not reachable" {
	have_ipv6_loopback || skip "the host has no ::1"
	host_serve ::1
	pvx_run "$(guest net_inet)" connect ::1 "$HOST_PORT"
	assert_contains "$output" 'connect: -1 ECONNREFUSED'
	run timeout 20 "$(guest net_inet)" connect ::1 "$HOST_PORT"
	assert_contains "$output" 'read: 20 hello from the host'
}

@test "--network=none: a guest's listener is not reachable from the host" {
	local out=$BATS_TEST_TMPDIR/guest-serve.out
	timeout -k 5 "$PVX_TIMEOUT" "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest net_inet)" serve 127.0.0.1 >"$out" 2>&1 &
	HOST_PIDS=$!
	for _ in $(seq 300); do grep -q '^port ' "$out" && break; sleep 0.1; done
	local port
	port=$(awk '/^port /{print $2}' "$out")
	[[ -n $port ]] || { cat "$out" >&2; false; }
	run timeout 20 "$(guest net_inet)" connect 127.0.0.1 "$port"
	assert_contains "$output" 'connect: -1 ECONNREFUSED'
}

@test "--network=none without a namespace of its own (unshare -U: ids unmapped): said on stderr, EACCES, never the host's network" {
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare -U true 2>/dev/null || skip "unshare -U is not allowed here"
	host_serve 127.0.0.1
	run timeout -k 5 "$PVX_TIMEOUT" unshare -U "$PVX" run --platform="$PVX_PLATFORM" -- \
		"$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	if [[ $output == *"cannot make a network namespace"* ]]; then
		assert_contains "$output" 'socket: -1 EACCES'
		run timeout -k 5 "$PVX_TIMEOUT" unshare -U "$PVX" run --platform="$PVX_PLATFORM" -- "$(guest net_unix)" connect-abstract pvx-none-$$
		assert_contains "$output" 'connect-abstract: -1 EACCES'
	else
		assert_contains "$output" 'connect: -1 ECONNREFUSED'	# a namespace was made after all
	fi
	# the listener was there all along
	run timeout 20 "$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	assert_contains "$output" 'read: 20 hello from the host'
}

@test "--network=host: a listener on the host's 127.0.0.1 is reachable" {
	host_serve 127.0.0.1
	pvx_with --network=host -- "$(guest net_inet)" connect 127.0.0.1 "$HOST_PORT"
	assert_status 0
	assert_contains "$output" 'connect: 0'
	assert_contains "$output" 'read: 20 hello from the host'
}

# AF_NETLINK: NETLINK_ROUTE's GET requests only (sentry/fs/netlink.c); guest tests/guest/net_netlink.c.
@test "netlink: link and address dumps, port ids, getifaddrs and if_nametoindex as natively (lo)" {
	net net_netlink lo
	grep -qx 'addr lo inet 127.0.0.1/8' "$sandbox_out"
	grep -qx 'replies carry the port id: yes, the sequence: yes, a DONE: yes' "$sandbox_out"
}

@test "netlink: the sandbox's own network has only lo; with --network=host the host's links, as natively" {
	pvx_run "$(guest net_netlink)" links
	assert_status 0
	local own=$output
	assert_contains "$own" lo
	# what a fresh network namespace has (lo; sit0 where the kernel has SIT built in), nothing of the host's
	if unshare -n true 2>/dev/null; then
		run unshare -n "$(guest net_netlink)" links
		[[ $own == "$output" ]] || fail_msg "links under --network=none: $own; a fresh namespace's: $output"
	else
		[[ $own == lo ]] || fail_msg "links under --network=none: $own"
	fi
	PVX_OPTS=(--network=host)
	compare_native_status 0 "$(guest net_netlink)" links
	PVX_OPTS=()
}

@test "netlink (hostile): changes, other namespaces, other ports and groups, splice and other protocols refused" {
	pvx_run "$(guest net_netlink)" hostile	# in the sandbox's own network: a failure here changes nothing real
	assert_status 0
	local want
	want=$(cat <<-'END'
	RTM_NEWADDR: send -1 EPERM
	RTM_DELADDR: send -1 EPERM
	RTM_SETLINK: send -1 EPERM
	RTM_NEWROUTE: send -1 EPERM
	GETLINK then NEWADDR in one send: -1 EPERM
	GETLINK dump, IFLA_TARGET_NETNSID after ifinfomsg: send -1 EPERM
	GETLINK dump, IFLA_TARGET_NETNSID after rtgenmsg: send -1 EPERM
	GETLINK, IFLA_NET_NS_FD 3 (a sentry fd): send -1 EPERM
	GETLINK, IFLA_NET_NS_PID 1 with a flag bit: send -1 EPERM
	GETADDR dump, IFA_TARGET_NETNSID: send -1 EPERM
	RTM_GETNSID: send -1 EOPNOTSUPP
	sendto port 1: -1 EPERM
	sendto a multicast group: -1 EPERM
	connect port 1: -1 EPERM
	NETLINK_LISTEN_ALL_NSID: -1 EPERM
	a header with a length past the end: 64
	splice a NEWADDR into it: -1 EINVAL
	NETLINK_AUDIT: -1 EPROTONOSUPPORT
	NETLINK_KOBJECT_UEVENT: -1 EPROTONOSUPPORT
	NETLINK_SOCK_DIAG: -1 EPROTONOSUPPORT
	NETLINK_GENERIC: -1 EPROTONOSUPPORT
	SOCK_STREAM: -1 ESOCKTNOSUPPORT
	END
	)
	diff <(printf '%s\n' "$want") <(printf '%s\n' "$output")
}

# pvx as root holds CAP_NET_ADMIN in the network it runs in; with --network=host that is the host's. Run in a
# throwaway network namespace so that a failure changes nothing real; natively the same guest adds the address.
@test "netlink (hostile): RTM_NEWADDR by write, send, sendmsg, sendmmsg and writev never reaches --network=host" {
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare -n true 2>/dev/null || skip "unshare -n is not allowed here"
	run timeout -k 5 "$PVX_TIMEOUT" unshare -n sh -c '"$1" run --platform="$2" --network=host -- "$3" add 127.0.0.99; "$3" lo' \
		sh "$PVX" "$PVX_PLATFORM" "$(guest net_netlink)"
	assert_contains "$output" 'write: -1 EPERM'
	assert_contains "$output" 'sendmmsg: -1 EPERM'
	assert_contains "$output" 'writev: -1 EPERM'
	assert_not_contains "$output" 'ack error'
	assert_not_contains "$output" '127.0.0.99'
	# the guest can do it natively (as root), so the check above can fail
	run timeout 20 unshare -n sh -c '"$1" add 127.0.0.99; "$1" lo' sh "$(guest net_netlink)"
	assert_contains "$output" 'addr lo inet 127.0.0.99/8'
}

# SCM_RIGHTS of the kinds whose state is pvx's (sentry/fs/fd_pass.c): guest tests/guest/net_passkinds.c.
@test "SCM_RIGHTS: eventfd, timerfd, epoll, inotify, signalfd and /proc files pass as the same open file" {
	chmod 0777 .
	PVX_OPTS=(--rw)
	compare_flavours 0 net_passkinds kinds
	grep -qx '  parent reads 6 (1 + the child'"'"'s 5)' "$sandbox_out"
	grep -qx '  child: epoll_wait 1, data 4242' "$sandbox_out"
	grep -qx '  parent: offset after the child'"'"'s read 7' "$sandbox_out"
}

@test "SCM_RIGHTS (hostile): files in flight are capped (ETOOMANYREFS) and let go when their messages are" {
	pvx_run "$(guest net_passkinds)" inflight
	assert_status 0
	assert_contains "$output" 'sent 16 messages of 64 fds, then -1 ETOOMANYREFS'	# 1024 in flight
	assert_contains "$output" 'after closing the pair, send: 1'
	assert_contains "$output" 'received: an fd, it reads 8'
}

# A file closed by another thread while a call waits on it (tests/guest/net_race.c): Linux keeps the open file
# for the call, which ends as it would have; the fd number is free at once. pvx holds its file the same way.
@test "close during a blocking recv, read, accept and epoll_wait: the call goes on, as natively" {
	chmod 0777 .
	PVX_OPTS=(--rw)
	local m
	for m in recv read accept epoll; do
		compare_flavours 0 net_race "$m"
		grep -q 'the waiting call returned a result' "$sandbox_out"
	done
}

# What LTP's socket and epoll families check, natively vs pvx (tests/guest/net_errs.c).
@test "sockets: raw protocol 0, connect's states, option levels, O_PATH fds and SOL_SOCKET cmsgs on TCP, as natively" {
	local m
	for m in raw connect levels opath cmsg; do
		net net_errs "$m"
		[[ $m != connect ]] || grep -qx 'connect again: -1 EISCONN' "$sandbox_out"
	done
}

@test "epoll: EPOLLEXCLUSIVE, one write wakes one of four waiters, as natively" {
	net net_errs excl
	grep -qx 'one write woke 1 of 4' "$sandbox_out"
}
