#!/usr/bin/env bats
# Dynamic executables (issue 14): the host's own dynamically linked userland (ld.so, libc.so, coreutils,
# dash, bash, python3, perl, git, gcc, make) in the sandbox, compared with native runs; the loader's
# auxiliary vector and ASLR; $ORIGIN, LD_LIBRARY_PATH and LD_PRELOAD; and PT_INTERP as a hostile guest
# writes it.

load helpers

LDSO=/lib64/ld-linux-x86-64.so.2

# The dynamic guests (tests/dyn/*.c) are built with the rest, against the host's glibc (Makefile.am's
# DYN_GUESTS): $DYN_DIR, by default next to the static guests.
DYN_DIR=${DYN_DIR:-${GUEST_DIR%/guest}/dyn}

setup() {
	require_pvx
	require_prog "$LDSO"
	readelf -l /bin/ls | grep -q 'Requesting program interpreter' || skip "/bin/ls is not dynamic here"
	DYN=$DYN_DIR
	[[ -x $DYN/auxv ]] || fail_msg "dynamic guests not built: $DYN (make in the build dir)"
	cd "$BATS_TEST_TMPDIR"
}

# sh_cmp SCRIPT: /bin/sh (dash) -c SCRIPT, native vs sandbox
sh_cmp() {
	compare_native /bin/sh -c "$@"
}

@test "coreutils: ls -la, sort, du, date, stat, find, wc over a tree" {
	sh_cmp "ls -la $TREE | sed 1d; ls -1 /usr/bin | sort -r | head -3; du -sk $TREE; date +%Y; stat -c '%n %s %F %a' $TREE/a.txt $TREE/link"
	grep -q a.txt "$sandbox_out"
	sh_cmp "find $TREE -type f | sort; find /usr/include -maxdepth 1 -name 'std*.h' | sort | wc -l; sort -n $LINES | tail -2 | wc -c"
}

@test "coreutils: cp, mv, rm, mkdir, ln in a --rw directory" {
	PVX_OPTS=(--rw)
	mkdir n s
	chmod 0777 n s
	local script='cd "$1" && mkdir d && cp /etc/hostname d/h && mv d/h d/h2 && ln -s h2 d/l && cp -r d e && rm -r d && ls -l e | sed 1d | cut -c1-10 && cat e/l'
	(cd n && /bin/sh -c "$script" sh "$PWD") >native.out
	pvx_run /bin/sh -c "$script" sh "$PWD/s"
	assert_status 0
	[[ $output == "$(<native.out)" ]]
	[[ ! -e s/d && -L s/e/l && -f s/e/h2 ]]
}

@test "dash and bash scripts: pipelines, command substitution, functions, subshells" {
	sh_cmp 'f() { echo "$1" | tr a-z A-Z; }; x=$(f hello); echo "$x $(echo nested $(echo deep))"; seq 1 200 | grep 7 | wc -l; (cd /; pwd); echo $((6*7))'
	[[ $(head -1 "$sandbox_out") == "HELLO nested deep" ]]
	compare_native /bin/bash --norc --noprofile -c 'a=(); for i in $(seq 5); do a+=($((i*i))); done; echo "${a[@]}"; mapfile -t l < <(printf "x\ny\n"); echo ${#l[@]}; echo ok | cat | cat | cat'
	[[ $(head -1 "$sandbox_out") == "1 4 9 16 25" ]]
}

@test "a #! script whose interpreter is dynamic (/bin/sh) runs" {
	printf '#!/bin/sh\necho "script $1"; ls / >/dev/null && echo listed\n' >s.sh
	chmod 0755 s.sh
	compare_native ./s.sh arg
	[[ $(<"$sandbox_out") == $'script arg\nlisted' ]]
	printf '#!/usr/bin/python3\nprint("py", 6*7)\n' >p.py
	chmod 0755 p.py
	compare_native ./p.py
}

@test "python3: -c, -m json.tool, and its own test_json" {
	require_prog /usr/bin/python3
	compare_native /usr/bin/python3 -c 'import os, sys, json, hashlib; print(6*7, sys.version_info[0], json.dumps({"a": [1, 2]}), hashlib.sha256(b"pvx").hexdigest()[:12])'
	[[ $(cut -d' ' -f1 "$sandbox_out") == 42 ]]
	printf '{"b": [1, 2, {"c": null}], "a": "x"}' >j.json
	compare_native /usr/bin/python3 -m json.tool --sort-keys j.json
	/usr/bin/python3 -c 'import test.support' 2>/dev/null || skip "python3's test package is not installed (./setup installs it)"
	chmod 0777 .
	PVX_OPTS=(--rw --env "TMPDIR=$PWD")
	pvx_run /usr/bin/python3 -m test test_json
	echo "$output" | tail -5
	assert_status 0
	assert_contains "Tests result: SUCCESS"
}

@test "perl -e" {
	require_prog /usr/bin/perl
	compare_native perl -e 'my %h = (a => 1, b => 2); print join(",", map { "$_=$h{$_}" } sort keys %h), "\n"; print scalar(localtime(0)) =~ /1970/ ? "epoch\n" : "?\n"'
}

@test "git init, add, commit, log in a --rw directory" {
	require_prog /usr/bin/git
	chmod 0777 .
	PVX_OPTS=(--rw --env "HOME=$PWD" --env GIT_CONFIG_NOSYSTEM=1)
	pvx_run /bin/sh -c 'git init -q r && cd r && echo one >f && git add f && git -c user.name=p -c user.email=p@x commit -qm first && echo two >>f && git -c user.name=p -c user.email=p@x commit -qam second && git log --format=%s && git show HEAD:f'
	assert_status 0
	[[ $output == $'second\nfirst\none\ntwo' ]]
	# the repository is a real one: the host's git reads it
	[[ $(git -c safe.directory='*' -C r log --format=%s | head -1) == second ]]
}

@test "gcc compiles, links and runs a hello world inside the sandbox; make -j2 builds a project" {
	require_prog /usr/bin/gcc
	require_prog /usr/bin/make
	chmod 0777 .
	printf '#include <stdio.h>\nint main(void) { puts("hello from gcc in pvx"); return 0; }\n' >h.c
	PVX_OPTS=(--rw --env "TMPDIR=$PWD")
	pvx_run /bin/sh -c "cd $PWD && gcc -O2 -o h h.c && ./h"
	assert_status 0
	[[ $output == "hello from gcc in pvx" ]]
	mkdir p && chmod 0777 p
	for i in 1 2 3 4; do printf 'int f%d(void) { return %d; }\n' $i $i >p/f$i.c; done
	printf 'int f1(void), f2(void), f3(void), f4(void);\n#include <stdio.h>\nint main(void) { printf("%%d\\n", f1() + f2() + f3() + f4()); return 0; }\n' >p/main.c
	printf 'OBJS = main.o f1.o f2.o f3.o f4.o\nprog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -c -o $@ $<\n' >p/Makefile
	# not the jobserver of a make that runs this test (its fds are not the guest's)
	pvx_run /bin/sh -c "unset MAKEFLAGS MFLAGS MAKELEVEL; make -s -j2 -C $PWD/p && $PWD/p/prog"
	assert_status 0
	[[ $output == 10 ]]
}

@test "the loader run directly: ld.so PROGRAM, and ld.so --list" {
	compare_native "$LDSO" /bin/echo direct
	[[ $(<"$sandbox_out") == direct ]]
	pvx_run "$LDSO" --verify /bin/true
	assert_status 0
	pvx_run "$LDSO" --list /bin/true
	assert_status 0
	assert_contains "libc.so.6 => "
}

@test "auxv: AT_BASE is ld.so's, AT_ENTRY and AT_PHDR the program's, as Linux sets them" {
	compare_native "$DYN/auxv" check
	grep -qx "AT_BASE is ld.so's load address: yes" "$sandbox_out"
	grep -qx "AT_ENTRY is the program's _start: yes" "$sandbox_out"
	grep -qx "AT_PHDR/AT_PHNUM are the program's: yes" "$sandbox_out"
	compare_native setarch -R "$DYN/auxv" check
	grep -qx "ADDR_NO_RANDOMIZE: on" "$sandbox_out"
}

@test "ASLR: the program, ld.so, stack, break and mmap move between runs; setarch -R pins them" {
	pvx_run "$DYN/auxv" addrs
	assert_status 0
	local a=$output
	pvx_run "$DYN/auxv" addrs
	local b=$output
	echo "run 1: $a" >&2
	echo "run 2: $b" >&2
	local i
	for i in 2 4 6 8 10; do
		[[ $(cut -d' ' -f$i <<<"$a") != $(cut -d' ' -f$i <<<"$b") ]] || fail_msg "field $i did not move: $a / $b"
	done
	pvx_run setarch -R "$DYN/auxv" addrs
	a=$output
	pvx_run setarch -R "$DYN/auxv" addrs
	[[ $output == "$a" ]]
	# ELF_ET_DYN_BASE, as natively under setarch -R
	[[ $(setarch -R "$DYN/auxv" addrs | cut -d' ' -f2) == 0x555555554000 ]]
	[[ $(cut -d' ' -f2 <<<"$a") == 0x555555554000 ]]
}

@test "\$ORIGIN, LD_LIBRARY_PATH and LD_PRELOAD (from --env) find and replace libraries inside the guest" {
	compare_native "$DYN/origin"
	[[ $(<"$sandbox_out") == "pvxt_value 42" ]]
	pvx_run_split "$DYN/norpath"
	[[ $status == 127 ]]
	grep -q "libpvxt.so" <<<"$PVX_STDERR_TEXT"
	PVX_OPTS=(--env "LD_LIBRARY_PATH=$DYN/lib")
	pvx_run "$DYN/norpath"
	assert_status 0
	[[ $output == "pvxt_value 42" ]]
	PVX_OPTS=(--env "LD_PRELOAD=$DYN/pre/libpre.so")
	pvx_run "$DYN/origin"
	assert_status 0
	[[ $output == "pvxt_value 7" ]]
}

@test "posix_spawn of a missing program is ENOENT; system() and popen() run the dynamic /bin/sh (glibc, static, musl)" {
	compare_native "$DYN/spawn"
	grep -qx "posix_spawn of a missing program: No such file or directory" "$sandbox_out"
	grep -qx "popen read: two" "$sandbox_out"
	# a static program running dynamic helpers
	compare_native "$DYN/spawn.static"
	grep -qx "system: 3" "$sandbox_out"
	# musl's dynamic loader (PT_INTERP /lib/ld-musl-x86_64.so.1), and run directly
	compare_native "$DYN/spawn.musl"
	grep -qx "popen read: two" "$sandbox_out"
	compare_native /lib/ld-musl-x86_64.so.1 "$DYN/spawn.musl"
}

@test "busybox tar -z runs gzip; busybox sh runs dynamic programs from PATH" {
	require_prog "$BUSYBOX"
	compare_native "$BUSYBOX" sh -c "$BUSYBOX tar -czf - -C $TREE . | $BUSYBOX tar -tzf - | sort; ls $TREE | wc -l; gzip -c </etc/hostname | gzip -dc"
	grep -qx './a.txt' "$sandbox_out"
}

@test "hostile PT_INTERP: missing, a directory, a device, a FIFO, not executable, not ELF: errno as Linux's" {
	mkdir idir
	head -c 200 /dev/urandom >junk
	chmod 0755 junk
	cp "$LDSO" noexec.so
	chmod 0644 noexec.so
	printf 'hi' >short
	chmod 0755 short
	# a FIFO: an open for reading would wait for a writer; exec never opens one (EACCES)
	mkfifo fifo
	chmod 0666 fifo
	printf '#!%s\n' "$PWD/fifo" >t.script-fifo
	chmod 0755 t.script-fifo
	local f
	for f in /nonexistent/ld.so "$PWD/idir" /dev/zero /dev/null "$PWD/noexec.so" "$PWD/junk" "$PWD/short" /proc/self/exe \
		"$PWD/fifo"; do
		"$BATS_TEST_DIRNAME/set-interp" /bin/true "t.${f//\//_}" "$f"
	done
	"$BATS_TEST_DIRNAME/set-interp" /bin/true nonul "$LDSO" --no-nul
	"$BATS_TEST_DIRNAME/set-interp" /bin/true huge "$LDSO" --filesz 5000
	"$BATS_TEST_DIRNAME/set-interp" /bin/true empty ""
	# bash names the errno: the messages must match
	compare_native /bin/bash --norc --noprofile -c 'for f in ./t.* ./nonul ./huge ./empty; do "$f"; echo "$f $?"; done 2>&1 | sed -E "s/^.*: (.*)$/\1/; s/^ *[0-9]+ +Segmentation fault.*/Segmentation fault/"'
	grep -q "t._nonexistent_ld.so 127" "$sandbox_out"
}

@test "hostile PT_INTERP: resolved inside --root, never the host's, however many ..s" {
	mkdir -p root/bin
	cp /bin/true root/bin/
	"$BATS_TEST_DIRNAME/set-interp" /bin/true root/bin/dotdot "/../../../../../../..$LDSO"
	"$BATS_TEST_DIRNAME/set-interp" /bin/true root/bin/rel "../../../../../../..$LDSO"
	chmod -R a+rX root
	local p
	for p in /bin/true /bin/dotdot /bin/rel; do
		PVX_OPTS=(--root "$PWD/root")
		pvx_run_split "$p"
		echo "$p: status $status: $PVX_STDERR_TEXT" >&2
		[[ $status == 127 && -z $output ]]
		grep -q "interpreter" <<<"$PVX_STDERR_TEXT"
	done
	# with the loader and libc copied in, the root's own copies run it
	mkdir -p root/lib64 root/lib/x86_64-linux-gnu
	cp "$LDSO" root/lib64/
	cp /lib/x86_64-linux-gnu/libc.so.6 root/lib/x86_64-linux-gnu/
	chmod -R a+rX root
	PVX_OPTS=(--root "$PWD/root")
	pvx_run /bin/dotdot
	assert_status 0
}

@test "personality: any value is kept and read back (0xffffffff only asks); PER_LINUX32 makes uname say i686" {
	require_prog /usr/bin/python3
	compare_native /usr/bin/python3 -c 'import ctypes
l = ctypes.CDLL(None); l.personality.restype = ctypes.c_int
for v in (0x0400000, 0x7fff0000, 0x0008):
	l.personality(v); print(hex(l.personality(0xffffffff)))'
	[[ $(<"$sandbox_out") == $'0x400000\n0x7fff0000\n0x8' ]]
	compare_native setarch linux32 uname -m
	[[ $(<"$sandbox_out") == i686 ]]
}

@test "hostile PT_INTERP race: its name swapped between ld.so and a FIFO while the guest execs: never a hang, only 0 or EACCES" {
	chmod 0777 .
	cp "$LDSO" ldso
	mkfifo fifo
	chmod 0755 ldso
	chmod 0666 fifo
	ln ldso ld
	"$BATS_TEST_DIRNAME/set-interp" /bin/true prog "$PWD/ld"
	# the host renames ld between the two, atomically, as fast as it can
	(for ((i = 0; i < 100000; i++)); do ln -f fifo ld.new && mv -f ld.new ld; ln -f ldso ld.new && mv -f ld.new ld; done) &
	local swapper=$!
	PVX_TIMEOUT=60
	pvx_run /bin/bash --norc --noprofile -c 'ok=0 denied=0 other=0; for i in $(seq 150); do ./prog 2>/dev/null; case $? in 0) ok=$((ok+1));; 126) denied=$((denied+1));; *) other=$((other+1));; esac; done; echo "ok=$ok denied=$denied other=$other"'
	kill "$swapper" 2>/dev/null || true
	wait "$swapper" 2>/dev/null || true
	echo "$output"
	assert_status 0
	[[ $output =~ other=0$ ]]
}
