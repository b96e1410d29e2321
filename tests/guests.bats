#!/usr/bin/env bats
# Each static guest, in its musl and glibc builds, must behave identically natively and under pvx.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# each case takes the flavour suffix: "" (musl) or ".glibc"

case_hello() {
	compare_native_status 0 "$(guest hello$1)" one "two words" "" "ünïcødé" -x --
	grep -qx 'argv\[2\]=<two words> len=9' "$sandbox_out"
	grep -qx 'argv\[3\]=<> len=0' "$sandbox_out"
}

case_auxv() {
	compare_native_status 0 "$(guest auxv$1)"
	grep -qx 'AT_PAGESZ=4096' "$sandbox_out"
	grep -qx 'AT_RANDOM 16 bytes not all zero: yes' "$sandbox_out"
	grep -qx 'AT_PHDR==ehdr+e_phoff: yes' "$sandbox_out"
	grep -qx 'AT_EXECFN==argv\[0\]: yes' "$sandbox_out"
}

case_envp() {
	# pvx passes its own environment through, plus --env
	COMPARE_STDIN=/dev/null
	local g
	g=$(guest envp$1)
	native_status=0
	env -i PVXT_A=alpha PVXT_B="b c" PVXT_EMPTY= "$g" >native.out || native_status=$?
	run env -i PVXT_A=alpha PVXT_B="b c" PVXT_EMPTY= "$PVX" run --platform="$PVX_PLATFORM" -- "$g"
	assert_status "$native_status"
	[[ $output == "$(<native.out)" ]]
	grep -qx 'PVXT count=3' native.out
	grep -qx 'envp==argv+argc+1: yes' native.out
}

case_env_option() {
	local g
	g=$(guest envp$1)
	run env -i PVXT_A=inherited "$PVX" run --platform="$PVX_PLATFORM" --env PVXT_B=set --env PVXT_A=override -- "$g"
	assert_status 0
	assert_contains "$output" "env: PVXT_A=override"
	assert_contains "$output" "env: PVXT_B=set"
	assert_contains "$output" "PVXT count=2"
	assert_contains "$output" "getenv(PVXT_A)=override"
}

case_fileio() {
	compare_native_status 0 "$(guest fileio$1)" "$TREE" "$LINES"
	grep -qx 'readlink link = 5 <a.txt>' "$sandbox_out"
	grep -qx 'read whole lines.txt: 13000 bytes, hash 6e66ce183e303d44' "$sandbox_out"
}

case_filewrite() {
	mkdir -p n s
	chmod 0777 s	# as root, the guest's file access is nobody's (see helpers.bash)
	# the scratch dirs differ, so each run gets its own; output must still match
	local g
	g=$(guest filewrite$1)
	native_status=0
	(_exec_stdio_only "$g" "$BATS_TEST_TMPDIR/n") >native.out 2>&1 || native_status=$?
	PVX_OPTS=(--rw)
	pvx_run_split "$g" "$BATS_TEST_TMPDIR/s"
	echo "$PVX_STDERR_TEXT" >&2
	diff -u native.out "$PVX_STDOUT"
	assert_status "$native_status"
	[[ $native_status == 0 ]]
	# the sandbox's writes reached the host file system
	cmp n/f1 s/f1
	cmp n/f2 s/f2
	[[ $(<s/f1) == new ]]
}

case_dupfcntl() {
	compare_native_status 0 "$(guest dupfcntl$1)" "$LINES"
	grep -qx 'first open fd = 3' "$sandbox_out"
	grep -qx 'F_DUPFD 5 again = 6 ' "$sandbox_out"
}

case_memory() {
	compare_native_status 0 "$(guest memory$1)" "$LINES"
	grep -qx 'mmap file == read: yes' "$sandbox_out"
	grep -qx 'middle zero after MAP_FIXED: yes' "$sandbox_out"
}

case_tlsfp() {
	compare_native_status 0 "$(guest tlsfp$1)"
	grep -qx 'step 20 d=152.948623' "$sandbox_out"
	grep -qx 'tls after syscalls: counter=499505 buf=Tls-initialised' "$sandbox_out"
}

case_timeg() {
	compare_native_status 0 "$(guest timeg$1)"
	grep -q 'nanosleep 10ms = 0, slept >= 10ms: yes' "$sandbox_out"
}

case_misc() {
	compare_native_status 0 "$(guest misc$1)"
	grep -qx 'sysname=Linux machine=x86_64' "$sandbox_out"
	grep -qx 'getrandom 64 = 64 ' "$sandbox_out"
}

case_errors() {
	compare_native_status 0 "$(guest errors$1)" "$LINES"
	grep -qx 'write(1, 1, 10) = -1 EFAULT' "$sandbox_out"
	grep -qx 'read = -1 EBADF' "$sandbox_out"
}

case_exitcode() {
	local g
	g=$(guest exitcode$1)
	compare_native_status 42 "$g"
	compare_native_status 0 "$g" 0
	compare_native_status 1 "$g" 1
	compare_native_status 255 "$g" 255
	compare_native_status 0 "$g" 256
	compare_native_status 7 "$g" 7 raw
	compare_native_status 9 "$g" 9 group
	compare_native_status 3 "$g" 3 return
}

case_crash() {
	local g mode sig
	g=$(guest crash$1)
	for mode in segv:139 null-exec:139 ill:132 fpe:136 trap:133 wprot:139 stack:139; do
		compare_native_status "${mode#*:}" "$g" "${mode%%:*}"
		# a shell-like one-line message on stderr
		grep -q . "$sandbox_err"
		[[ $(wc -l <"$sandbox_err") -le 1 ]] || { cat "$sandbox_err" >&2; false; }
	done
	compare_native_status 139 "$g" segv
	grep -qx 'Segmentation fault.*' "$sandbox_err"
	compare_native_status 132 "$g" ill
	grep -qx 'Illegal instruction.*' "$sandbox_err"
	compare_native_status 135 "$g" bus "$TREE/a.txt"
	grep -qx 'Bus error.*' "$sandbox_err"
	compare_native_status 0 "$g" deep
	# signals sent to itself (kill/tgkill is partially supported: default actions)
	compare_native_status 134 "$g" abort
	grep -qx 'Aborted.*' "$sandbox_err"
	compare_native_status 143 "$g" term
	compare_native_status 0 "$g" ignored
	grep -qx 'survived ignored SIGUSR1' "$sandbox_out"
}

case_bigout() {
	local g
	g=$(guest bigout$1)
	compare_native_status 0 "$g"
	[[ $(stat -c %s "$sandbox_out") == 1048576 ]]
	[[ $(sha256_of "$sandbox_out") == $(sha256_of "$native_out") ]]
	compare_native_status 0 "$g" 300000 --small
	# through a pipe (short writes are possible)
	local want
	want=$("$g" | sha256sum)
	[[ $("$PVX" run --platform="$PVX_PLATFORM" -- "$g" | sha256sum) == "$want" ]]
	[[ $("$PVX" run --platform="$PVX_PLATFORM" -- "$g" 4194304 | wc -c) == 4194304 ]]
}

case_stdin() {
	local g
	g=$(guest catfile$1)
	printf 'line one\nline two\n' >in.txt
	COMPARE_STDIN=in.txt
	compare_native_status 0 "$g"
	[[ $(<"$sandbox_out") == $'line one\nline two' ]]
	# a pipe on stdin
	[[ $(printf 'piped\n' | "$PVX" run --platform="$PVX_PLATFORM" -- "$g") == piped ]]
	# bigger than a pipe buffer
	head -c 300000 /dev/urandom >rnd
	[[ $("$PVX" run --platform="$PVX_PLATFORM" -- "$g" <rnd | sha256sum) == $(sha256sum <rnd) ]]
}

case_stderr() {
	local g
	g=$(guest hello$1)
	pvx_run_split "$g"
	assert_status 0
	[[ $PVX_STDERR_TEXT == "hello, stderr" ]] || { echo "stderr: <$PVX_STDERR_TEXT>" >&2; false; }
	assert_not_contains "$output" "hello, stderr"
}

@test "hello (musl)" { case_hello ""; }
@test "hello (glibc)" { case_hello .glibc; }
@test "auxv (musl)" { case_auxv ""; }
@test "auxv (glibc)" { case_auxv .glibc; }
@test "envp passes the environment through (musl)" { case_envp ""; }
@test "envp passes the environment through (glibc)" { case_envp .glibc; }
@test "--env sets and overrides variables (musl)" { case_env_option ""; }
@test "--env sets and overrides variables (glibc)" { case_env_option .glibc; }
@test "fileio: read-side file syscalls (musl)" { case_fileio ""; }
@test "fileio: read-side file syscalls (glibc)" { case_fileio .glibc; }
@test "filewrite: write-side file syscalls with --rw (musl)" { case_filewrite ""; }
@test "filewrite: write-side file syscalls with --rw (glibc)" { case_filewrite .glibc; }
@test "dupfcntl: dup/dup2/dup3/fcntl (musl)" { case_dupfcntl ""; }
@test "dupfcntl: dup/dup2/dup3/fcntl (glibc)" { case_dupfcntl .glibc; }
@test "memory: malloc/mmap/munmap/mprotect/mremap/brk/madvise (musl)" { case_memory ""; }
@test "memory: malloc/mmap/munmap/mprotect/mremap/brk/madvise (glibc)" { case_memory .glibc; }
@test "tlsfp: TLS and FPU state across syscalls (musl)" { case_tlsfp ""; }
@test "tlsfp: TLS and FPU state across syscalls (glibc)" { case_tlsfp .glibc; }
@test "timeg: clocks and sleeps (musl)" { case_timeg ""; }
@test "timeg: clocks and sleeps (glibc)" { case_timeg .glibc; }
@test "misc: ids, uname, getrandom, rlimits, signals bookkeeping (musl)" { case_misc ""; }
@test "misc: ids, uname, getrandom, rlimits, signals bookkeeping (glibc)" { case_misc .glibc; }
@test "errors: EFAULT and EBADF (musl)" { case_errors ""; }
@test "errors: EFAULT and EBADF (glibc)" { case_errors .glibc; }
@test "errors: a buffer running into an unmapped page gives a short transfer, like Linux" {
	compare_native_status 0 "$(guest errors)" "$LINES" partial
	grep -q 'read(buffer crossing into unmapped page): short (10), offset now 10' "$sandbox_out"
}
@test "exitcode: exit statuses (musl)" { case_exitcode ""; }
@test "exitcode: exit statuses (glibc)" { case_exitcode .glibc; }
@test "crash: fault signals give 128+sig and a message (musl)" { case_crash ""; }
@test "crash: fault signals give 128+sig and a message (glibc)" { case_crash .glibc; }
@test "bigout: 1 MiB on stdout (musl)" { case_bigout ""; }
@test "bigout: 1 MiB on stdout (glibc)" { case_bigout .glibc; }
@test "stdin passes through (musl)" { case_stdin ""; }
@test "stdin passes through (glibc)" { case_stdin .glibc; }
@test "stderr passes through (musl)" { case_stderr ""; }
@test "stderr passes through (glibc)" { case_stderr .glibc; }

@test "the sandbox gives the guest pid 1 and tid 1" {
	pvx_run "$(guest ids)"
	assert_status 0
	assert_contains "$output" "pid=1"$'\n'
	assert_contains "$output" "tid=1"$'\n'
	assert_contains "$output" "set_tid_address=1"$'\n'
}

@test "the sandbox reports the host uid/gid (nobody's as root on the host's /, unless --privileged)" {
	local u=$(id -u) g=$(id -g)
	[[ $u != 0 ]] || u=65534 g=65534
	pvx_run "$(guest ids)"
	assert_status 0
	assert_contains "$output" "uid=$u euid=$u gid=$g egid=$g"
	PVX_OPTS=(--privileged)
	pvx_run "$(guest ids)"
	assert_status 0
	assert_contains "$output" "uid=$(id -u) euid=$(id -u) gid=$(id -g) egid=$(id -g)"
}

@test "guest fd numbers are the sentry's: host fds above 2 are not visible to the guest" {
	# pvx itself runs with extra fds open; the guest must still get 3 on its first open
	pvx_run "$(guest dupfcntl)" "$LINES" 7<"$LINES" 8<"$LINES"
	assert_status 0
	assert_contains "$output" "first open fd = 3"
	assert_contains "$output" "dup2 bad old = -1 EBADF"
}

@test "TCGETS/TIOCGWINSZ on a terminal" {
	command -v script >/dev/null || skip "script(1) not installed"
	local g
	g=$(guest ttyinfo)
	run script -qec "stty rows 33 cols 77; '$PVX' run --platform=$PVX_PLATFORM -- '$g'" /dev/null
	assert_status 0
	assert_contains "$output" "fd 0: TCGETS=ok TIOCGWINSZ=ok rows=33 cols=77 icanon=1 isatty=1"
	assert_contains "$output" "fd 1: TCGETS=ok TIOCGWINSZ=ok rows=33 cols=77 icanon=1 isatty=1"
	# and not a terminal: ENOTTY
	pvx_run "$g" </dev/null
	assert_status 0
	assert_contains "$output" "fd 0: TCGETS=ENOTTY TIOCGWINSZ=ENOTTY isatty=0"
}

# stdio_case REDIRECTIONS...: run stdinfo natively and in the sandbox under the same redirections
# (a bash snippet), compare everything it prints and the status.
stdio_case() {
	local g=$1 redir=$2 n s
	n=$(bash -c "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; $redir '$g'" 2>&1; echo "status=$?")
	s=$(bash -c "$redir timeout 60 '$PVX' run --platform=$PVX_PLATFORM -- '$g'" 2>&1; echo "status=$?")
	if [[ $n != "$s" ]]; then
		echo "redirection: $redir" >&2
		diff -u <(echo "$n") <(echo "$s") >&2
		return 1
	fi
	[[ $n == *"fd 0:"* ]]
}

@test "stdio: stdout opened O_APPEND on a file" {
	local g
	g=$(guest stdinfo)
	printf 'x\n' >in.txt
	: >n.txt
	: >s.txt
	bash -c "exec 3>&-; '$g' <in.txt >>n.txt"
	"$PVX" run --platform="$PVX_PLATFORM" -- "$g" <in.txt >>s.txt
	diff -u n.txt s.txt
	grep -q 'fd 1: reg w lseek=ok append=1' s.txt
}

@test "stdio: stdin a pipe (musl)" { stdio_case "$(guest stdinfo)" "echo hi |"; }
@test "stdio: stdin a pipe (glibc)" { stdio_case "$(guest stdinfo.glibc)" "echo hi |"; }
@test "stdio: stdin /dev/null" { stdio_case "$(guest stdinfo)" "</dev/null"; }
@test "stdio: stdin a regular file" { printf 'x\n' >in.txt; stdio_case "$(guest stdinfo)" "<in.txt"; }
@test "stdio: stdin closed stays closed in the guest" { stdio_case "$(guest stdinfo)" "<&-"; }
@test "stdio: stdout closed stays closed in the guest" { printf 'x\n' >in.txt; stdio_case "$(guest stdinfo)" "2>&1 >&- <in.txt"; }
@test "stdio: stderr closed stays closed in the guest" { printf 'x\n' >in.txt; stdio_case "$(guest stdinfo)" "2>&- <in.txt"; }

# creds MODE: both builds of the creds guest against their native runs
creds() { compare_flavours 0 creds "$1"; }

@test "creds: get/set*id to the ids the process has, getgroups and setgroups" {
	creds ids
	grep -qx 'setuid(own uid): ok' "$sandbox_out"
	grep -qx 'getgroups(0) = getgroups(list): yes' "$sandbox_out"
}

@test "creds: getpriority/setpriority per process, inherited by fork, ESRCH and EINVAL" {
	creds prio
	grep -qx "child's nice + 5, ours still + 3: yes" "$sandbox_out"
}

@test "creds: scheduling policies SCHED_OTHER/BATCH/IDLE, priority ranges, getcpu" {
	creds sched
	grep -qx 'FIFO 1..99, RR 1..99, OTHER 0..0, BATCH 0..0' "$sandbox_out"
	has 'sched_get_priority_max(SCHED_DEADLINE): ok' 'sched_get_priority_min(SCHED_DEADLINE): ok'
}

@test "creds: setrlimit/prlimit: RLIMIT_NOFILE enforced, kept across fork and execve, another process's limits" {
	creds rlimit
	grep -qx 'opens fail with EMFILE from fd 16' "$sandbox_out"
	grep -q '^after execve: NOFILE soft 16, core ' "$sandbox_out"	# core: 0, or 1 where pvx may raise hard limits
}

@test "fd table: RLIMIT_NOFILE inherited from pvx and past 1024; lowest free fd, dup2/F_DUPFD/poll edges (musl, glibc)" {
	for f in fdlimit fdlimit.glibc; do
		compare_native_status 0 "$(guest $f)"
		grep -qx 'soft now 3000' "$sandbox_out"
		grep -qx 'dup until EMFILE, last fd 2999' "$sandbox_out"
	done
}

@test "creds: one identity: other ids are EPERM, no capabilities, no real-time policy" {
	pvx_run "$(guest creds.glibc)" sandbox
	[[ $status == 0 ]]
	[[ ${lines[0]} == "setuid(uid + 1): EPERM" ]]
	[[ ${lines[1]} == "setresgid(-1, gid + 1, -1): EPERM" ]]
	[[ ${lines[3]} == "capabilities: 0 0 0" ]]
	[[ ${lines[4]} == "SCHED_FIFO 10: EPERM" ]]
}

@test "busybox sh: ulimit -n and -c set limits the shell and its children see" {
	require_prog "$BUSYBOX"
	compare_native "$BUSYBOX" sh -c 'ulimit -n 64; ulimit -c 0; ulimit -n; ulimit -c; sh -c "ulimit -n"'
	[[ $(<"$sandbox_out") == $'64\n0\n64' ]]
}
