#!/usr/bin/env bats
# Debian's bash-static, with builtins only (no fork/exec yet).

load helpers

setup() {
	require_pvx
	require_prog "$BASH_STATIC"
	cd "$BATS_TEST_TMPDIR"
}

bs() {
	compare_native "$BASH_STATIC" --norc --noprofile "$@"
}

@test "bash-static -c 'echo \$((6*7))' prints 42" {
	pvx_run "$BASH_STATIC" -c 'echo $((6*7))'
	assert_status 0
	[[ $output == 42 ]]
	bs -c 'echo $((6*7))'
}

@test "bash-static: loops, functions, arrays, strings" {
	bs -c 'f() { local n=$1 r=1; while ((n > 1)); do r=$((r*n)); n=$((n-1)); done; echo $r; }; f 10; f 20'
	[[ $(head -1 "$sandbox_out") == 3628800 ]]
	bs -c 'a=(zulu alpha mike); echo ${#a[@]} ${a[1]} ${a[@]:1}; s="Hello, World"; echo ${s^^} ${s,,} ${s/World/pvx} ${#s}'
	bs -c 'declare -A m=([x]=1 [y]=2); for k in x y; do echo $k=${m[$k]}; done; printf "%s|" {1..5} {a..c}; echo'
	bs -c 'x=5; [[ $x -gt 3 && abc == a* ]] && echo yes; case foo.txt in *.txt) echo txt;; esac'
}

@test "bash-static: exit statuses" {
	COMPARE_ALLOW_EMPTY=1
	bs -c 'exit 3'
	[[ $sandbox_status == 3 ]]
	bs -c 'set -e; false; echo not reached'
	[[ $sandbox_status == 1 ]]
	bs -c 'return 2 2>/dev/null || exit 4'
	[[ $sandbox_status == 4 ]]
}

@test "bash-static: read from stdin and from a file with builtins" {
	COMPARE_STDIN=$LINES
	bs -c 'n=0; while read -r a b; do n=$((n+1)); last=$b; done; echo "$n $last"'
	[[ $(<"$sandbox_out") == "1300 1299" ]]
	COMPARE_STDIN=/dev/null
	bs -c 'mapfile -t l < "$1"; echo ${#l[@]} "${l[42]}"' _ "$LINES"
	bs -c 'while read -r x; do echo "<$x>"; done < "$1"' _ "$TREE/b.txt"
}

@test "bash-static: runs a script file with arguments" {
	cat >script.sh <<'EOS'
echo "args: $# [$1] [$2]"
for f in "$@"; do [[ -e $f ]] && echo "exists: ${f##*/}" || echo "missing: ${f##*/}"; done
cd "${1%/*}" && echo "pwd ok: $([[ $PWD == "${1%/*}" ]] 2>/dev/null; echo)"
EOS
	# (the $(...) above would fork: keep the script fork-free)
	cat >script.sh <<'EOS'
echo "args: $# [$1] [$2]"
for f in "$@"; do if [[ -e $f ]]; then echo "exists: ${f##*/}"; else echo "missing: ${f##*/}"; fi; done
cd "${1%/*}" && echo "cd ok"; [[ $PWD == "${1%/*}" ]] && echo "PWD ok"
EOS
	bs script.sh "$TREE/a.txt" "$TREE/nope"
	grep -qx 'PWD ok' "$sandbox_out"
}

@test "bash-static: builtins that make syscalls (pwd, cd, test -r, printf -v, ulimit, umask-free)" {
	cd "$TREE"
	bs -c 'pwd; cd sub && pwd; cd /; pwd; [[ -r /etc/passwd ]] && echo readable; printf -v v "%03d" 7; echo $v; ulimit -n >/dev/null && echo ulimit-ok'
	[[ $(head -1 "$sandbox_out") == "$TREE" ]]
}

@test "bash-static: \$\$ is 1 inside the sandbox" {
	pvx_run "$BASH_STATIC" -c 'echo $$ $BASHPID'
	assert_status 0
	[[ $output == "1 1" ]]
}
