#!/usr/bin/env bats
# Real shells (issue 6): busybox sh and bash-static scripts with pipelines, background jobs, traps,
# subshells, here-docs, xargs, find, tar; compared with their native runs (stdout and exit status).
# Nothing prints a pid: the sandbox has its own pid space.

load helpers

setup() {
	require_pvx
	require_prog "$BUSYBOX"
	file -L "$BUSYBOX" | grep -q 'statically linked' || skip "$BUSYBOX is not static"
	cd "$BATS_TEST_TMPDIR"
}

# bbsh SCRIPT [ARGS...]: busybox sh -c SCRIPT, native vs sandbox
bbsh() {
	compare_native "$BUSYBOX" sh -c "$@"
}

# bs SCRIPT [ARGS...]: bash-static -c SCRIPT, native vs sandbox
bs() {
	require_prog "$BASH_STATIC"
	compare_native "$BASH_STATIC" --norc --noprofile -c "$@"
}

@test "busybox sh: seq 1 1000 | sort -r | uniq | head -5" {
	bbsh 'seq 1 1000 | sort -r | uniq | head -5'
	[[ $(<"$sandbox_out") == $'999\n998\n997\n996\n995' ]]
	bbsh 'seq 1 1000 | sort -rn | uniq | head -5; echo "status ${?}"'
	[[ $(head -1 "$sandbox_out") == 1000 ]]
	bbsh 'seq 1 20000 | sed "s/0/zero/g" | grep zero | wc -l'
}

@test "busybox sh: for-loop with background jobs and wait" {
	bbsh 'for i in 1 2 3 4 5 6 7 8; do ( sleep 0.0$i; echo "job $i" ) & done | sort; wait; echo all done'
	[[ $(tail -1 "$sandbox_out") == "all done" ]]
	[[ $(grep -c '^job' "$sandbox_out") == 8 ]]
	# completion order follows the sleeps
	bbsh 'for i in 3 1 2; do ( sleep 0.$((i * 3)); echo "job $i" ) & done; wait'
	[[ $(<"$sandbox_out") == $'job 1\njob 2\njob 3' ]]
	bbsh '( exit 4 ) & wait $!; echo "wait \$! gave $?"; sleep 0.01 & wait; echo "plain wait gave $?"'
	grep -qx 'wait $! gave 4' "$sandbox_out"
}

@test "busybox sh: trap USR1 and kill -USR1 \$\$" {
	bbsh 'trap "echo got" USR1; kill -USR1 $$; echo after'
	[[ $(<"$sandbox_out") == $'got\nafter' ]]
	bbsh 'trap "echo term; exit 5" TERM; kill -TERM $$; echo not reached'
	[[ $native_status == 5 ]]
	# a trap set while a child runs: the signal is handled after the child finishes
	bbsh 'trap "echo usr2" USR2; ( sleep 0.1; kill -USR2 $$ ) & wait; echo end'
	grep -qx usr2 "$sandbox_out"
	# untrapped USR1 kills the shell
	COMPARE_ALLOW_EMPTY=1
	bbsh 'kill -USR1 $$; echo not reached'
	[[ $native_status == 138 ]]
}

@test "busybox sh: trap ... EXIT" {
	bbsh 'trap "echo bye from exit trap" EXIT; echo main; exit 3'
	[[ $native_status == 3 ]]
	[[ $(<"$sandbox_out") == $'main\nbye from exit trap' ]]
	bbsh 'trap "echo exit trap" EXIT; ( trap "echo sub exit" EXIT; echo in sub ); echo back'
	bbsh 'trap "echo trapped \$?" EXIT; false'
	[[ $native_status == 1 ]]
}

@test "busybox sh: subshells \$(...) and ( ... )" {
	bbsh 'x=$(echo a; echo b | tr a-z A-Z); echo "[$x]"; y=$(echo $(echo nested $(echo deeper))); echo "$y"'
	grep -qx 'nested deeper' "$sandbox_out"
	bbsh 'cd /; ( cd "$1" && pwd ); pwd; ( exit 7 ); echo "subshell status $?"; v=1; ( v=2 ); echo "v=$v"' _ "$TREE"
	grep -qx 'subshell status 7' "$sandbox_out"
	bbsh 'x=$(seq 1 100000); echo ${#x}; echo "$x" | tail -1'
	grep -qx 588894 "$sandbox_out"
	bbsh '{ echo out; echo err >&2; } 2>&1 | sort'
	[[ $(<"$sandbox_out") == $'err\nout' ]]
}

@test "busybox sh: exit codes of pipelines, pipefail, command not found" {
	bbsh 'false | true; echo "a $?"; true | false; echo "b $?"; (exit 3) | (exit 4); echo "c $?"; ! true; echo "d $?"'
	[[ $(<"$sandbox_out") == $'a 0\nb 1\nc 4\nd 1' ]]
	bbsh 'set -o pipefail; (exit 3) | true; echo "pipefail $?"'
	bbsh '/nonexistent/cmd 2>/dev/null; echo "missing $?"; '"$TREE"'/a.txt 2>/dev/null; echo "not executable $?"'
	grep -qx 'missing 127' "$sandbox_out"
	grep -qx 'not executable 126' "$sandbox_out"
	COMPARE_ALLOW_EMPTY=1
	bbsh 'exit 300'
	[[ $native_status == 44 ]]
}

@test "busybox sh: set -e" {
	bbsh 'set -e; echo a; false; echo b'
	[[ $native_status == 1 ]]
	[[ $(<"$sandbox_out") == a ]]
	bbsh 'set -e; if false; then :; fi; false || echo "or ok"; ! false; x=$(false) || echo "subst failed"; echo done'
	grep -qx done "$sandbox_out"
	bbsh 'set -e; echo start; ( false; echo not here ); echo nor here'
	[[ $native_status == 1 ]]
}

@test "busybox sh: here-docs (small, quoted, <<-, larger than a pipe)" {
	cat >hd.sh <<'EOS'
x=world
cat <<EOF
hello $x
$(echo subst) `echo backq`
EOF
cat <<'EOF'
literal $x
EOF
	cat <<-EOF
	tabs stripped
	EOF
EOS
	compare_native "$BUSYBOX" sh hd.sh
	grep -qx 'hello world' "$sandbox_out"
	grep -qx 'subst backq' "$sandbox_out"
	grep -qx 'literal $x' "$sandbox_out"
	grep -qx 'tabs stripped' "$sandbox_out"
	# ~170 KB here-docs: more than a pipe holds
	{
		echo 'wc -l <<EOF'
		seq 1 30000
		echo 'EOF'
		echo 'md5sum <<EOF'
		seq 1 30000
		echo 'EOF'
	} >heredoc.sh
	compare_native "$BUSYBOX" sh heredoc.sh
	grep -q '^30000' "$sandbox_out"
}

@test "busybox sh: xargs" {
	bbsh 'seq 1 20 | xargs -n 5 /bin/busybox echo'
	[[ $(wc -l <"$sandbox_out") == 4 ]]
	bbsh 'echo a b c | xargs -n1 /bin/busybox echo x'
	bbsh 'printf "%s\n" one two three | xargs -I{} /bin/busybox sh -c "echo [{}]"'
	grep -qx '\[two\]' "$sandbox_out"
	bbsh 'seq 1 3 | xargs /bin/busybox false; echo "xargs status $?"'
	grep -qx 'xargs status 123' "$sandbox_out"
}

@test "busybox sh: xargs running an applet by name (echo, wc)" {
	bbsh 'seq 1 10 | xargs echo; find "$1" -type f | sort | xargs wc -c' _ "$TREE"
	grep -qx '1 2 3 4 5 6 7 8 9 10' "$sandbox_out"
}

@test "busybox sh: find DIR | sort | xargs busybox wc -l on the data tree" {
	bbsh 'find "$1" | sort | xargs /bin/busybox wc -l; echo "status $?"' _ "$TREE"
	grep -q 'a.txt' "$sandbox_out"
	bbsh 'find "$1" -type f | sort | xargs /bin/busybox wc -l' _ "$TREE"
	grep -q '^ *3 total$' "$sandbox_out"
	bbsh 'cd "$1" && find . -name "*.txt" -exec /bin/busybox cat {} \; | sort' _ "$TREE"
	grep -qx 'charlie in sub' "$sandbox_out"
	bbsh 'find "$1" -type l | sort; find "$1" -type d | wc -l' _ "$TREE"
}

@test "busybox sh: tar czf / tar xzf round trip (needs --rw and the fs syscalls)" {
	PVX_OPTS=(--rw)
	cp -a "$TREE" tree
	# tar z runs "gzip" from PATH: make it the static busybox (the sandbox runs only static programs)
	mkdir bbin
	ln -s "$BUSYBOX" bbin/gzip
	# each run works in a directory of its own made by the guest (mkdir); the outputs must agree
	cat >rt.sh <<'EOS'
set -e
PATH=$PWD/bbin:$PATH
d=$(mktemp -d "$PWD/rt.XXXXXX")
tar czf "$d/t.tgz" -C tree .
mkdir "$d/x"
tar xzf "$d/t.tgz" -C "$d/x"
cd "$d/x"
find . | sort
md5sum a.txt b.txt sub/c.txt
readlink link; readlink dangling
tar tzf ../t.tgz | sort | wc -l
cd / && rm -rf "$d" && echo cleaned
EOS
	compare_native "$BUSYBOX" sh rt.sh
	grep -qx './sub/c.txt' "$sandbox_out"
	grep -qx 'cleaned' "$sandbox_out"
}

@test "busybox sh: busybox sh script.sh args" {
	cat >script.sh <<'EOS'
echo "argc $#"
for a in "$@"; do echo "<$a>"; done
shift; echo "after shift: $*"
f() { echo "f got $# args: $1"; return 3; }
f "x y" z; echo "f returned $?"
echo "\$0 is ${0##*/}"
EOS
	compare_native "$BUSYBOX" sh script.sh one "two words" "" three
	grep -qx '<two words>' "$sandbox_out"
	grep -qx 'f returned 3' "$sandbox_out"
	grep -qx '$0 is script.sh' "$sandbox_out"
}

@test "busybox sh: a #!/bin/busybox sh script run by execve (from a shell, and as the first program)" {
	printf '#!%s sh\necho "script args: $*"\necho "$0" | sed "s|.*/||"\nexit 6\n' "$BUSYBOX" >run.sh
	chmod +x run.sh
	bbsh './run.sh a "b c"; echo "status $?"'
	grep -qx 'script args: a b c' "$sandbox_out"
	grep -qx 'status 6' "$sandbox_out"
	compare_native ./run.sh x y
	[[ $native_status == 6 ]]
	bbsh 'exec ./run.sh replaced'
	[[ $native_status == 6 ]]
}

@test "busybox sh: read from pipes, while-read loops, kill of a background sleep" {
	bbsh 'echo "a b c" | { read x y; echo "[$y]"; }; seq 1 5 | while read n; do echo $((n*n)); done'
	grep -qx '\[b c\]' "$sandbox_out"
	bbsh '/bin/busybox sleep 10 & p=$!; kill $p; wait $p; echo "killed: $?"'
	grep -qx 'killed: 143' "$sandbox_out"
	bbsh '/bin/busybox sleep 10 & p=$!; kill -KILL $p; wait $p; echo "killed: $?"'
	grep -qx 'killed: 137' "$sandbox_out"
}

@test "bash-static: functions, arrays, arithmetic, command substitution" {
	bs 'fib() { local n=$1; (( n < 2 )) && { echo $n; return; }; echo $(( $(fib $((n-1))) + $(fib $((n-2))) )); }; fib 12'
	[[ $(<"$sandbox_out") == 144 ]]
	bs 'a=($(/bin/busybox seq 1 5)); echo "${#a[@]} ${a[*]}"; a+=( "$(echo six)" ); echo "${a[5]}"; declare -A h; for w in $(echo x y x z x); do h[$w]=$(( ${h[$w]:-0} + 1 )); done; for k in x y z; do echo "$k=${h[$k]}"; done'
	grep -qx 'x=3' "$sandbox_out"
	grep -qx '5 1 2 3 4 5' "$sandbox_out"
	bs 'x=$(echo "$(echo "$(echo deep)")"); echo $x; n=$(( (7 ** 3) % 17 + $(echo 4) )); echo $n'
	[[ $(<"$sandbox_out") == $'deep\n7' ]]
}

@test "bash-static: pipelines, PIPESTATUS, pipefail, lastpipe" {
	bs '/bin/busybox seq 1 1000 | /bin/busybox sort -r | /bin/busybox head -3; true | false | (exit 5); echo "${PIPESTATUS[@]}"'
	grep -qx '0 1 5' "$sandbox_out"
	bs 'set -o pipefail; (exit 2) | true; echo "pipefail $?"'
	grep -qx 'pipefail 2' "$sandbox_out"
	bs 'echo hidden | read v; echo "[$v]"; shopt -s lastpipe; echo seen | read v; echo "[$v]"'
	[[ $(<"$sandbox_out") == $'[]\n[seen]' ]]
}

@test "bash-static: read from a pipe, while-read loop, mapfile from a pipe" {
	bs 'printf "%s\n" a b c | while read -r l; do echo "line $l"; done; echo "x y" | { read a b; echo "$b$a"; }'
	grep -qx 'line c' "$sandbox_out"
	grep -qx 'yx' "$sandbox_out"
	bs '/bin/busybox seq 1 50 | { mapfile -t arr; echo "${#arr[@]} ${arr[49]}"; }'
	grep -qx '50 50' "$sandbox_out"
}

@test "bash-static: background jobs, wait \$!, wait" {
	bs '(exit 9) & p=$!; wait $p; echo "wait \$! = $?"; for i in 3 1 2; do ( /bin/busybox sleep 0.$((i * 3)); echo "job $i" ) & done; wait; echo done'
	[[ $(<"$sandbox_out") == $'wait $! = 9\njob 1\njob 2\njob 3\ndone' ]]
	# Not compared: "wait -n" when a job ended before it was called. bash's answer then
	# depends on whether its SIGCHLD handler ran first; with pvx's slower fork it is 3
	# or 4 from run to run (an open question, see the closing note of issue 6).
	bs '( exit 4 ) & p=$!; ( /bin/busybox sleep 0.2; exit 3 ) & wait $p; echo "first: $?"; wait; echo all'
	grep -qx 'first: 4' "$sandbox_out"
}

@test "bash-static: trap on signals and EXIT; kill -TERM of a background busybox sleep" {
	bs 'trap "echo got USR1" USR1; kill -USR1 $$; trap "echo exiting" EXIT; echo main'
	[[ $(<"$sandbox_out") == $'got USR1\nmain\nexiting' ]]
	bs '/bin/busybox sleep 10 & pid=$!; kill -TERM $pid; wait $pid; echo "status $?"'
	grep -qx 'status 143' "$sandbox_out"
	bs '/bin/busybox sleep 10 & pid=$!; kill -KILL $pid; wait $pid; echo "status $?"'
	grep -qx 'status 137' "$sandbox_out"
	bs 'trap "echo term handled; exit 7" TERM; ( /bin/busybox sleep 0.1; kill -TERM $$ ) & while :; do /bin/busybox sleep 0.05; done'
	[[ $native_status == 7 ]]
	COMPARE_ALLOW_EMPTY=1
	bs 'kill -TERM $$; echo not reached'
	[[ $native_status == 143 ]]
}

@test "bash-static: subshells, \$BASHPID, set -e, exec" {
	bs 'echo $( [[ $BASHPID != $$ ]] && echo "subshell has its own BASHPID" ); ( [[ $BASHPID != $$ ]] && echo "so does ( )" )'
	grep -qx 'subshell has its own BASHPID' "$sandbox_out"
	bs 'set -e; echo start; f() { false; echo "not in f"; }; f; echo nor here'
	[[ $native_status == 1 ]]
	bs 'exec /bin/busybox echo "replaced by exec"; echo not reached'
	[[ $(<"$sandbox_out") == 'replaced by exec' ]]
}

@test "bash-static: a script with #!/bin/bash-static run by execve" {
	printf '#!%s\nset -u\nsum=0\nfor x in "$@"; do sum=$((sum + x)); done\necho "sum=$sum n=$#"\nexit $((sum %% 256))\n' "$BASH_STATIC" >sum.sh
	chmod +x sum.sh
	compare_native ./sum.sh 1 2 3 400
	[[ $native_status == 150 ]]
	grep -qx 'sum=406 n=4' "$sandbox_out"
	bs './sum.sh 5 6; echo "status $?"'
	grep -qx 'status 11' "$sandbox_out"
}

@test "bash-static: process substitution <(...) (needs /dev/fd)" {
	bs 'while read -r l; do echo "got $l"; done < <(/bin/busybox seq 1 3); /bin/busybox cat <(echo from-procsub)'
	grep -qx 'from-procsub' "$sandbox_out"
}

@test "bash-static: read -t timeout (needs a timer)" {
	bs '( /bin/busybox sleep 1; echo late ) | { read -t 0.2 v; echo "read status $? [$v]"; }'
	grep -q '^read status 142 \[\]$' "$sandbox_out"
}

@test "busybox sh: /dev/fd (-> /proc/self/fd) shows the guest itself, not the sentry" {
	bbsh 'readlink /dev/fd/../exe; cat /dev/fd/../cmdline | tr "\0" " "; echo; ls /dev/fd/ | wc -l'
	assert_not_contains "$(<"$sandbox_out")" pvx
}

# A root holding only busybox (/bin/sh and /bin/busybox): no /dev, no /proc of its own.
bare_root() {
	R=$BATS_TEST_TMPDIR/bare
	mkdir -p "$R/bin" "$R/tmp"
	cp "$BUSYBOX" "$R/bin/busybox"
	ln -s busybox "$R/bin/sh"
}

@test "busybox sh in a root without /dev: null, zero, full and urandom are the host's; background jobs work" {
	bare_root
	PVX_OPTS=(--root "$R")
	pvx_run /bin/sh -c 'echo gone >/dev/null; echo "null $?"; busybox head -c 3 /dev/zero | busybox od -An -tx1
		busybox stat -c "%F %t,%T" /dev/null /dev/urandom
		echo x 2>/dev/null >/dev/full || echo "full: write failed"
		busybox sleep 0.1 & wait; echo "background $?"'
	[[ $status == 0 ]]
	[[ $output == *"null 0"* ]]
	[[ $output == *" 00 00 00"* ]]
	[[ $output == *"character special file 1,3"*"character special file 1,9"* ]]
	[[ $output == *"full: write failed"* ]]
	[[ $output == *"background 0"* ]]
	[[ $output != *"can't"* ]]
	# the root's own /dev, when it has one, is not replaced: a regular file stays a regular file
	mkdir "$R/dev" && echo mine >"$R/dev/null"
	pvx_run /bin/sh -c 'busybox cat /dev/null'
	[[ $output == mine ]]
}

# ls of the shell's fds: one the shell closes between ls's readdir and its lstat is "No such file" (seen in the
# VM: the pipeline's fd 3), as natively; only the first three entries are compared.
@test "busybox sh: cd into /proc, relative opens and getcwd there; top and ps read it" {
	bare_root
	PVX_OPTS=(--root "$R")
	# stdin /dev/null, outside the root: its fd link still lstats and reads (the host's name, as Linux's d_path)
	pvx_run /bin/sh -c 'cd /proc && busybox pwd -P && busybox head -c 3 stat && echo
		cd self/fd && busybox pwd -P | busybox sed "s/[0-9][0-9]*/PID/" && busybox ls 2>/dev/null | busybox sort -n | busybox head -3 | busybox tr "\n" " "
		echo; cd ../../sys/kernel && busybox cat ostype && busybox pwd -P; busybox readlink /proc/self/fd/0' </dev/null
	printf '%s\n' "${lines[@]}"	# shown if an assertion fails
	[[ $status == 0 ]]
	[[ ${lines[0]} == /proc ]]
	[[ ${lines[1]} == cpu ]]
	[[ ${lines[2]} == /proc/PID/fd ]]
	[[ ${lines[3]} == "0 1 2 " ]]
	[[ ${lines[4]} == Linux ]]
	[[ ${lines[5]} == /proc/sys/kernel ]]
	[[ ${lines[6]} == /dev/null ]]
	pvx_run /bin/busybox top -bn1
	[[ $status == 0 && ${lines[0]} == Mem:* ]]
	pvx_run /bin/busybox ps
	[[ $status == 0 && $output == *"/bin/busybox ps"* ]]
}
