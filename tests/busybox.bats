#!/usr/bin/env bats
# Debian's static busybox: applets that need no fork/exec, native vs sandbox.

load helpers

setup() {
	require_pvx
	require_prog "$BUSYBOX"
	file -L "$BUSYBOX" | grep -q 'statically linked' || skip "$BUSYBOX is not static"
	cd "$BATS_TEST_TMPDIR"
}

bb() {
	compare_native "$BUSYBOX" "$@"
}

@test "busybox echo" {
	bb echo hello world
	[[ $(<"$sandbox_out") == "hello world" ]]
	bb echo -n no-newline
	bb echo -e 'tab\there\nnewline'
}

@test "busybox cat of files and of stdin" {
	bb cat "$TREE/a.txt" "$TREE/b.txt" "$TREE/sub/c.txt"
	[[ $(<"$sandbox_out") == $'alpha\nbravo bravo\ncharlie in sub' ]]
	bb cat "$LINES"
	cmp "$sandbox_out" "$LINES"
	COMPARE_STDIN=$LINES
	bb cat
	cmp "$sandbox_out" "$LINES"
	bb cat - "$TREE/a.txt"
}

@test "busybox cat of a missing file fails like natively" {
	COMPARE_ALLOW_EMPTY=1
	bb cat "$TREE/a.txt" "$TREE/missing"
	[[ $native_status != 0 ]]
	grep -q 'No such file or directory' "$sandbox_err"
}

@test "busybox ls" {
	bb ls "$TREE"
	bb ls -1a "$TREE"
	grep -qx 'dangling' "$sandbox_out"
	bb ls -l "$TREE/a.txt" "$TREE/link"
	bb ls -la "$TREE"
	bb ls -R "$TREE"
	bb ls -i "$TREE/a.txt"
	bb ls -d "$TREE" /
	bb ls /
}

@test "busybox wc" {
	bb wc "$LINES" "$TREE/a.txt" "$TREE/b.txt"
	grep -q '1300 *2600 *13000 .*lines.txt' "$sandbox_out"
	bb wc -l "$LINES"
	COMPARE_STDIN=$LINES
	bb wc -c
}

@test "busybox sha256sum matches coreutils sha256sum" {
	bb sha256sum "$LINES" "$TREE/a.txt"
	head -c 3000000 /dev/urandom >big.bin
	bb sha256sum big.bin
	[[ $(<"$sandbox_out") == "$(sha256sum big.bin)" ]]
	pvx_run "$BUSYBOX" sha256sum "$LINES"
	assert_status 0
	[[ $output == "$(sha256sum "$LINES")" ]]
	COMPARE_STDIN=big.bin
	bb sha256sum
	[[ $(cut -d' ' -f1 "$sandbox_out") == "$(sha256_of big.bin)" ]]
}

@test "busybox md5sum / sha1sum / sha512sum" {
	bb md5sum "$LINES"
	bb sha1sum "$LINES"
	bb sha512sum "$LINES"
}

@test "busybox text applets: head tail sort uniq tr cut grep sed awk" {
	bb head -n 3 "$LINES"
	bb tail -n 2 "$LINES"
	bb tail -c 25 "$LINES"
	bb sort -r "$TREE/a.txt" "$TREE/b.txt" "$TREE/sub/c.txt"
	bb uniq -c "$TREE/b.txt"
	bb cut -c 6-9 "$LINES"
	bb grep -n 'line 07.7' "$LINES"
	bb grep -c line "$LINES"
	bb sed -n 's/line 00\(1[0-3]\)/L\1/p' "$LINES"
	bb awk '{ s += substr($2, 1) } END { print s, NR }' "$LINES"
	COMPARE_STDIN=$TREE/b.txt
	bb tr a-z A-Z
}

@test "busybox computation applets: seq expr printf factor basename dirname" {
	bb seq 1 7 100
	bb expr 6 \* 7
	bb printf '%05d|%-6s|%x|%.3f\n' 42 ab 255 3.14159
	bb factor 1234567890
	bb basename /a/b/c.txt .txt
	bb dirname /a/b/c.txt
	bb od -An -tx1 "$TREE/a.txt"
	bb hexdump -C "$TREE/b.txt"
}

@test "busybox true/false/test exit statuses" {
	COMPARE_ALLOW_EMPTY=1
	bb true
	[[ $sandbox_status == 0 ]]
	bb false
	[[ $sandbox_status == 1 ]]
	bb test -f "$TREE/a.txt"
	[[ $sandbox_status == 0 ]]
	bb test -d "$TREE/a.txt"
	[[ $sandbox_status == 1 ]]
	bb test -L "$TREE/link"
	[[ $sandbox_status == 0 ]]
	bb test -e "$TREE/dangling"
	[[ $sandbox_status == 1 ]]
}

@test "busybox stat, du, readlink, realpath on the fixture tree" {
	bb stat -c '%n %s %F %h' "$TREE/a.txt" "$TREE/link" "$TREE/sub"
	bb stat -L -c '%n %s %F' "$TREE/link"
	bb readlink "$TREE/link"
	bb readlink -f "$TREE/link"
	bb realpath "$TREE/sub/../a.txt"
	bb du -a "$TREE"
}

@test "busybox uname, pwd, env, id" {
	bb uname -s -m
	[[ $(<"$sandbox_out") == "Linux x86_64" ]]
	cd "$TREE"
	bb pwd
	[[ $(<"$sandbox_out") == "$TREE" ]]
	env -i PVXT_ONLY=1 "$PVX" run --platform="$PVX_PLATFORM" -- "$BUSYBOX" env >"$BATS_TEST_TMPDIR/env.out"
	[[ $(<"$BATS_TEST_TMPDIR/env.out") == "PVXT_ONLY=1" ]]
	# as root the guest is nobody unless --privileged (tests/security_files.bats tests that)
	PVX_OPTS=(--privileged)
	bb id -u
}

@test "busybox sh -c with builtins only (no fork)" {
	bb sh -c 'echo $((6*7)); x=1; for i in 1 2 3 4; do x=$((x*i+1)); done; echo $x; printf "%s-" a b c; echo'
	[[ $(head -1 "$sandbox_out") == 42 ]]
	COMPARE_ALLOW_EMPTY=1
	bb sh -c 'exit 7'
	[[ $sandbox_status == 7 ]]
}

@test "busybox sh: the read builtin (needs poll)" {
	require_syscall poll
	COMPARE_STDIN=$TREE/b.txt
	bb sh -c 'read a b; echo "[$b][$a]"'
	[[ $(<"$sandbox_out") == "[bravo][bravo]" ]]
}

@test "busybox 1 MiB through stdout" {
	head -c 1048576 /dev/urandom >rnd.bin
	bb cat rnd.bin
	[[ $(sha256_of "$sandbox_out") == $(sha256_of rnd.bin) ]]
}
