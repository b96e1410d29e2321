#!/usr/bin/env bats
# The command line: help, version, the syscall table, and clear errors for programs pvx cannot run.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

# little-endian bytes as printf escapes
_le() {
	local v=$1 n=$2 i s=
	for ((i = 0; i < n; i++)); do s+=$(printf '\\x%02x' $(((v >> (8 * i)) & 255))); done
	printf '%s' "$s"
}

# make_elf OUT key=value...: a minimal static ELF64 x86-64 executable (header, one PT_LOAD program header,
# a 12-byte body doing exit(7)), with any field overridden:
#   class data machine type entry phoff phentsize phnum | ptype poffset vaddr filesz memsz flags align |
#   body (hex) | truncate (keep this many bytes)
make_elf() {
	local out=$1
	shift
	local class=2 data=1 machine=62 type=2 phoff=64 phentsize=56 phnum=1
	local ptype=1 poffset=0 vaddr=$((0x400000)) flags=5 align=4096
	local body=bf07000000b83c0000000f05 truncate= filesz= memsz= entry=
	local kv
	for kv in "$@"; do local "$kv"; done
	local size=$((64 + 56 + ${#body} / 2))
	filesz=${filesz:-$size} memsz=${memsz:-$size} entry=${entry:-$((vaddr + 120))}
	local f='\x7fELF'
	f+=$(_le "$class" 1)$(_le "$data" 1)$(_le 1 1)$(_le 0 1)$(_le 0 8)
	f+=$(_le "$type" 2)$(_le "$machine" 2)$(_le 1 4)$(_le "$entry" 8)$(_le "$phoff" 8)$(_le 0 8)
	f+=$(_le 0 4)$(_le 64 2)$(_le "$phentsize" 2)$(_le "$phnum" 2)$(_le 64 2)$(_le 0 2)$(_le 0 2)
	f+=$(_le "$ptype" 4)$(_le "$flags" 4)$(_le "$poffset" 8)$(_le "$vaddr" 8)$(_le "$vaddr" 8)
	f+=$(_le "$filesz" 8)$(_le "$memsz" 8)$(_le "$align" 8)
	local i
	for ((i = 0; i < ${#body}; i += 2)); do f+="\\x${body:i:2}"; done
	printf "$f" >"$out"
	if [[ -n $truncate ]]; then truncate -s "$truncate" "$out"; fi
	chmod +x "$out"
}

# expect_reject STATUS PATTERN PROG...: pvx refuses to run PROG with STATUS and one clear line on stderr
# matching the extended regex PATTERN (case-insensitive); nothing on stdout; pvx itself did not crash.
expect_reject() {
	local want=$1 pat=$2
	shift 2
	pvx_run_split "$@"
	echo "status=$status stdout=<$output> stderr=<$PVX_STDERR_TEXT>" >&2
	[[ $status == "$want" ]]
	[[ -z $output ]]
	[[ -n $PVX_STDERR_TEXT ]]
	grep -Eiq -- "$pat" <<<"$PVX_STDERR_TEXT"
	[[ $(wc -l <<<"$PVX_STDERR_TEXT") -le 2 ]]
}

@test "pvx --help prints usage on stdout and exits 0" {
	run "$PVX" --help
	assert_status 0
	assert_contains "$output" "pvx run"
	assert_contains "$output" "--root"
	assert_contains "$output" "--rw"
	assert_contains "$output" "--platform"
	assert_contains "$output" "--strace"
	assert_contains "$output" "--env"
}

@test "pvx --version prints a version and exits 0" {
	run "$PVX" --version
	assert_status 0
	[[ $output =~ ^pvx\ [0-9]+\.[0-9]+ ]]
}

@test "pvx without arguments or with an unknown command fails with usage" {
	run "$PVX"
	[[ $status -ne 0 ]]
	assert_contains "$output" "usage"
	run "$PVX" frobnicate
	[[ $status -ne 0 ]]
	assert_contains "$output" "frobnicate"
	run "$PVX" run
	[[ $status -ne 0 ]]
	run "$PVX" run --no-such-option -- /bin/busybox true
	[[ $status -ne 0 ]]
	run "$PVX" run --platform=no-such-platform -- "$(guest hello)"
	[[ $status -ne 0 ]]
	assert_not_contains "$output" "hello, world"
}

@test "pvx syscalls lists the table with support levels" {
	run "$PVX" syscalls
	assert_status 0
	local name
	for name in read write openat close fstat newfstatat mmap munmap mprotect mremap brk exit_group \
		getpid arch_prctl getrandom clock_gettime getdents64 dup3 fcntl ioctl uname prlimit64; do
		grep -Eq "\b$name\b.*\b(full|partial)\b" <<<"$output" || { echo "missing/unsupported: $name" >&2; false; }
	done
	# every line has a support level, and at least one syscall is not supported (-ENOSYS)
	grep -Eq '\bunsupported\b' <<<"$output"
	# each syscall appears once
	[[ $(grep -Ec '\bread\b +(full|partial|unsupported)' <<<"$output") == 1 ]]
	[[ $(grep -Ec '\b(full|partial|unsupported)\b' <<<"$output") -ge 300 ]]
}

# an ELF whose body does: rax = syscall NR(0, 0, 0); exit(-rax & 0xff)
_syscall_elf() {
	local nr=$1 out=$2
	make_elf "$out" body="b8$(printf '%02x%02x0000' $((nr & 255)) $((nr >> 8)))31ff31f631d20f0589c7f7dfb83c0000000f05"
}

@test "an unsupported syscall returns ENOSYS and is named under --debug" {
	local nr name
	read -r nr name _ < <("$PVX" syscalls | awk '$3 == "unsupported"' | head -1)
	[[ -n $name ]]
	_syscall_elf "$nr" nosys
	run "$PVX" run --platform="$PVX_PLATFORM" -- ./nosys
	assert_status 38
	run "$PVX" run --platform="$PVX_PLATFORM" --debug -- ./nosys
	assert_status 38
	assert_contains "$output" "$name"
}

@test "an unsupported syscall is named once, however often the guest calls it" {
	local nr name b
	read -r nr name _ < <("$PVX" syscalls | awk '$3 == "unsupported"' | head -1)
	b=$(printf 'b8%02x%02x00000f05' $((nr & 255)) $((nr >> 8)))
	# three calls, then exit(0)
	make_elf nosys3 body="${b}${b}${b}31ffb83c0000000f05"
	run "$PVX" run --platform="$PVX_PLATFORM" --debug -- ./nosys3
	assert_status 0
	[[ $(grep -c "unsupported.*\b$name\b\|\b$name\b.*unsupported\|\b$name\b.*ENOSYS" <<<"$output") == 1 ]]
}

@test "a syscall number beyond the table returns ENOSYS, like natively" {
	_syscall_elf 500 nr500
	run ./nr500
	assert_status 38
	pvx_run ./nr500
	assert_status 38
	_syscall_elf 1023 nr1023
	pvx_run ./nr1023
	assert_status 38
}

@test "--strace prints the guest's syscalls on stderr" {
	"$PVX" run --platform="$PVX_PLATFORM" --strace -- "$(guest hello)" strace-me >out 2>err
	grep -q 'argv\[1\]=<strace-me>' out
	grep -q 'write' err
	grep -q 'exit_group' err
	! grep -q 'write' out
}

@test "a hand-made minimal static ELF runs: exit(7)" {
	make_elf tiny
	run ./tiny
	assert_status 7
	pvx_run ./tiny
	assert_status 7
	[[ -z $output ]]
}

@test "a hand-made ELF with a bss larger than the file runs" {
	# movb $42, 0x401025 (in the bss page); movzbl 0x402fff,%edi (zero bss); add $7,%edi; exit
	make_elf bss memsz=$((0x5000)) flags=7 body=c60425251040002a0fb63c25ff2f400083c707b83c0000000f05
	run ./bss
	assert_status 7
	pvx_run ./bss
	assert_status 7
}

@test "missing program: 127 and a message" {
	expect_reject 127 "no such file|not found" "$BATS_TEST_TMPDIR/does-not-exist"
	# a PATH of searchable directories: one nobody cannot search (/root/bin as root) makes it EACCES, as execvp
	PVX_OPTS=(--env PATH=/usr/local/bin:/usr/bin:/bin)
	expect_reject 127 "no such file|not found" does-not-exist-anywhere-in-path
	# natively bash agrees
	run -127 "$BATS_TEST_TMPDIR/does-not-exist"
}

@test "a run that ends before its first exec (no such program) leaves no stub behind, not even a zombie for init" {
	command -v python3 >/dev/null || skip "no python3"
	# pvx under a child subreaper: whatever pvx leaves is this script's child once pvx is gone
	run timeout -k 5 60 python3 -c '
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)	# PR_SET_CHILD_SUBREAPER
for _ in range(3):
    r = subprocess.run(sys.argv[1:], stderr=subprocess.DEVNULL)
    if r.returncode != 127:
        sys.exit("pvx: %d" % r.returncode)
time.sleep(0.5)
left = 0
while True:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if not pid:
        left += 1
        time.sleep(0.1)
        if left > 20:
            print("left behind: a child still running")
            break
        continue
    print("left behind: pid", pid)
print("done")
' "$PVX" run --platform="$PVX_PLATFORM" -- "$BATS_TEST_TMPDIR/does-not-exist"
	echo "$output" >&2
	assert_status 0
	[[ $output == done ]]
}

@test "a text file with the x bit: 126, not an ELF" {
	printf 'hello world\nthis is not a program\n' >notelf
	chmod +x notelf
	expect_reject 126 "not an ELF|exec format" ./notelf
}

@test "an empty executable file: 126" {
	: >empty
	chmod +x empty
	expect_reject 126 "not an ELF|exec format|truncated" ./empty
}

@test "a directory as the program: 126" {
	mkdir dir
	expect_reject 126 "directory|permission|not a regular" ./dir
}

@test "a file without execute permission: 126" {
	cp "$(guest hello)" noexec
	chmod 0644 noexec
	run ./noexec
	assert_status 126
	expect_reject 126 "permission|not executable" ./noexec
}

@test "an AArch64 ELF: 126, not x86-64" {
	make_elf arm machine=183
	run ./arm
	assert_status 126
	expect_reject 126 "x86-64|x86_64|machine|architecture" ./arm
}

@test "a 32-bit ELF: 126, not x86-64 ELF64" {
	make_elf elf32 class=1
	expect_reject 126 "x86-64|ELF64|64-bit|class" ./elf32
}

@test "a big-endian ELF: 126" {
	make_elf be data=2
	expect_reject 126 "x86-64|endian|ELF" ./be
}

@test "an ET_REL object file: 126" {
	make_elf rel type=1
	run ./rel
	assert_status 126
	expect_reject 126 "executable|e_type|ELF" ./rel
}

@test "a dynamic binary runs; one whose interpreter is missing or bad is refused naming the interpreter" {
	require_prog /bin/true
	readelf -l /bin/true | grep -q 'Requesting program interpreter' || skip "/bin/true is static here"
	pvx_run /bin/true
	assert_status 0
	"$BATS_TEST_DIRNAME/set-interp" /bin/true nointerp /nonexistent/ld-pvx.so
	expect_reject 127 "/nonexistent/ld-pvx.so" ./nointerp
	head -c 200 /dev/urandom >junk && chmod +x junk
	"$BATS_TEST_DIRNAME/set-interp" /bin/true junkinterp "$PWD/junk"
	expect_reject 126 "$PWD/junk: not an ELF" ./junkinterp
	"$BATS_TEST_DIRNAME/set-interp" /bin/true nonul /lib64/ld-linux-x86-64.so.2 --no-nul
	expect_reject 126 "malformed PT_INTERP" ./nonul
}

@test "a #! script whose interpreter is missing, not ELF or a FIFO: the refusal names the interpreter" {
	printf '#!/nonexistent/pvx-sh\n' >missing.sh
	head -c 200 /dev/urandom >junk
	printf '#!%s/junk\n' "$PWD" >junk.sh
	mkfifo fifo
	chmod 0666 fifo
	printf '#!%s/fifo\n' "$PWD" >fifo.sh
	chmod 0755 missing.sh junk junk.sh fifo.sh
	expect_reject 127 "/nonexistent/pvx-sh" ./missing.sh
	expect_reject 126 "$PWD/junk: not an ELF" ./junk.sh
	expect_reject 126 "$PWD/fifo: permission denied" ./fifo.sh
}

@test "malformed program headers: e_phnum huge" {
	make_elf bigphnum phnum=65535
	run ./bigphnum
	assert_status 126
	expect_reject 126 "malformed|program header|phnum" ./bigphnum
}

@test "malformed program headers: e_phoff past EOF" {
	make_elf farphoff phoff=$((0x100000))
	run ./farphoff
	assert_status 126
	expect_reject 126 "malformed|program header|end of file" ./farphoff
}

@test "malformed program headers: e_phentsize wrong" {
	make_elf phent phentsize=32
	run ./phent
	assert_status 126
	expect_reject 126 "malformed|phentsize|program header" ./phent
}

@test "malformed program headers: e_phnum 0 / no PT_LOAD" {
	make_elf nophdr phnum=0
	expect_reject 126 "malformed|phnum|PT_LOAD|program header" ./nophdr
	make_elf noload ptype=4
	expect_reject 126 "malformed|PT_LOAD|program header" ./noload
}

@test "malformed program headers: p_filesz > p_memsz" {
	make_elf fsz filesz=200 memsz=100
	expect_reject 126 "malformed|filesz|program header" ./fsz
}

@test "malformed program headers: segment past end of file" {
	make_elf past filesz=$((0x100000)) memsz=$((0x100000))
	expect_reject 126 "malformed|end of file|program header" ./past
}

@test "malformed program headers: p_vaddr/p_offset not congruent" {
	make_elf cong poffset=0 vaddr=$((0x400010))
	run ./cong
	[[ $status -ne 0 ]]
	expect_reject 126 "malformed|congruent|program header" ./cong
}

@test "a segment in the stub's range or beyond the user address space is refused" {
	make_elf high vaddr=$((0x7ffffffff000)) memsz=$((0x3000))
	expect_reject 126 "malformed|address|range|program header" ./high
	make_elf kern vaddr=$((0xffffffff81000000))
	expect_reject 126 "malformed|address|range|program header" ./kern
	local stub
	stub=$(sed -n 's/^#define PVX_GUEST_TASK_SIZE \(0x[0-9a-fA-F]*\)UL.*/\1/p' "$BATS_TEST_DIRNAME/../include/pvx/guest_layout.h")
	[[ -n $stub ]] || fail_msg "PVX_GUEST_TASK_SIZE not found in include/pvx/guest_layout.h"
	make_elf onstub vaddr=$((stub))
	expect_reject 126 "malformed|address|range|program header" ./onstub
	make_elf belowstub vaddr=$((stub - 0x1000)) memsz=$((0x2000))
	expect_reject 126 "malformed|address|range|program header" ./belowstub
}

@test "a truncated ELF header: 126" {
	head -c 20 "$(guest hello)" >trunc20
	chmod +x trunc20
	run ./trunc20
	assert_status 126
	expect_reject 126 "truncated|malformed|not an ELF|exec format" ./trunc20
	make_elf trunc100 truncate=100
	expect_reject 126 "truncated|malformed|program header" ./trunc100
}

@test "a real binary truncated after its headers fails cleanly" {
	head -c 8192 "$(guest hello)" >trunc8k
	chmod +x trunc8k
	pvx_run_split ./trunc8k
	echo "status=$status stderr=$PVX_STDERR_TEXT" >&2
	# either refused up front (126) or the guest dies of SIGBUS/SIGSEGV with a message; never a hang or
	# a crash of pvx itself (which would leave stderr empty)
	[[ $status == 126 || $status == 135 || $status == 139 ]]
	[[ -n $PVX_STDERR_TEXT ]]
	assert_not_contains "$output" "hello, world"
}

@test "an entry point outside every segment: the guest dies of SIGSEGV (139), like natively" {
	make_elf badentry entry=$((0x900000))
	COMPARE_ALLOW_EMPTY=1 compare_native_status 139 ./badentry
	grep -q 'Segmentation fault' "$sandbox_err"
}

@test "--root that does not exist is an error" {
	run "$PVX" run --platform="$PVX_PLATFORM" --root "$BATS_TEST_TMPDIR/nope" -- /bin/busybox true
	[[ $status -ne 0 ]]
	assert_contains "$output" "nope"
}

@test "the program is looked up in PATH inside the guest" {
	mkdir -p root/bin
	cp "$(guest hello)" root/bin/hello-in-root
	run env PATH=/bin "$PVX" run --platform="$PVX_PLATFORM" --root "$BATS_TEST_TMPDIR/root" -- hello-in-root x
	assert_status 0
	assert_contains "$output" "argv[1]=<x>"
	# not found when PATH does not include it
	run -127 env PATH=/nowhere "$PVX" run --platform="$PVX_PLATFORM" --root "$BATS_TEST_TMPDIR/root" -- hello-in-root
}

@test "the default platform (auto) and an explicit --platform=ptrace both run a guest" {
	run "$PVX" run -- "$(guest hello)" auto
	assert_status 0
	assert_contains "$output" "argv[1]=<auto>"
	run "$PVX" run --platform=ptrace -- "$(guest hello)" ptrace
	assert_status 0
	assert_contains "$output" "argv[1]=<ptrace>"
}

@test "pvx platforms lists ptrace as available" {
	run "$PVX" platforms
	[[ $status == 0 ]] || skip "no 'pvx platforms' command"
	grep -Eq '^ptrace +available' <<<"$output"
}

@test "cli: pvx's notes on what it does not support reach the guest's stderr only under --debug" {
	local g
	g=$(guest misc)
	"$PVX" run -- "$g" >out 2>err
	grep -q '^prctl(unknown option) = -1 EINVAL' out
	[[ ! -s err ]] || { cat err >&2; false; }
	"$PVX" run --debug -- "$g" >out 2>err
	grep -q 'prctl option 2147422772 is not supported' err
}

@test "cli: seccomp tells a busy neighbour from its own load (host_crowded): a CPU-bound loop beside a fork chain is seen" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "$PVX_PLATFORM platform: no hand-off policy"
	(($(nproc) >= 2)) || skip "one CPU: nothing to place"
	# a loop on the last CPU, the neighbour; the guest's tasks could all fit on the others
	taskset -c "$(($(nproc) - 1))" sh -c 'while :; do :; done' &
	local hog=$!
	PVX_HANDOFF_STATS=1 "$PVX" run --platform=seccomp -- "$BUSYBOX" sh -c \
		"for i in \$($BUSYBOX seq 200); do $BUSYBOX true; done" >out 2>err
	local st=$?
	kill "$hog"
	wait "$hog" 2>/dev/null || true
	((st == 0)) || { cat err >&2; return 1; }
	local line
	line=$(grep '^busy neighbour' err) || { cat err >&2; return 1; }
	echo "$line" >&2
	# looks every 100 ms or more while two tasks live: the loop runs for 0.3 s or more here
	[[ $line =~ ^busy\ neighbour\ \(host_crowded\):\ ([0-9]+)\ of\ ([0-9]+)\ looks$ ]]
	((BASH_REMATCH[2] >= 2 && BASH_REMATCH[1] >= 1))
}

# ho_count FILE KIND OUTCOME: the count of that row of the PVX_HANDOFF_STATS table (empty if there is none)
ho_count() {
	awk -v k="$2" -v o="$3" '$1 == k && $2 == o { print $3 }' "$1"
}

@test "cli: PVX_HANDOFF_STATS=1 reports the seccomp sentry's waits for its stub at exit, and nothing without it" {
	[[ $PVX_PLATFORM == seccomp ]] || skip "$PVX_PLATFORM platform: no stub hand-offs to count"
	local walk=("$BUSYBOX" find /usr/share -maxdepth 2)
	PVX_HANDOFF_STATS=1 "$PVX" run --platform=seccomp -- "${walk[@]}" >out 2>err
	grep -qx 'pvx: seccomp hand-offs (PVX_HANDOFF_STATS)' err
	local total=0 k o n
	for k in command run; do
		for o in spun spun+slept slept; do
			n=$(ho_count err "$k" "$o")
			[[ $n =~ ^[0-9]+$ ]] || { echo "no row $k $o" >&2; cat err >&2; return 1; }
			[[ $k == run ]] && total=$((total + n))
		done
	done
	# every lstat of the walk is a trap the sentry waited for: at least one a name printed
	((total >= $(wc -l <out))) || { echo "run waits $total < $(wc -l <out) names" >&2; cat err >&2; return 1; }
	# no spinning at all: every wait slept
	PVX_SECCOMP_PIN=0 PVX_HANDOFF_STATS=1 "$PVX" run --platform=seccomp -- "${walk[@]}" >out 2>err
	for k in command run; do
		[[ $(ho_count err "$k" spun) == 0 && $(ho_count err "$k" spun+slept) == 0 ]] || { cat err >&2; return 1; }
	done
	(($(ho_count err run slept) >= $(wc -l <out)))
	grep -qE '^busy neighbour \(host_crowded\): [0-9]+ of [0-9]+ looks$' err
	PVX_HANDOFF_STATS=0 "$PVX" run --platform=seccomp -- "${walk[@]}" >out 2>err
	! grep -q 'hand-offs' err
	"$PVX" run --platform=seccomp -- "${walk[@]}" >out 2>err
	! grep -q 'hand-offs' err
}
