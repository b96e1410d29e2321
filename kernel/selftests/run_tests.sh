#!/bin/bash
# Run every process_vm_exec selftest next to this script, kselftest style:
# each test's TAP output indented with "# ", one "ok/not ok" line per test.
# Exit status 0 only if all passed.  Used inside the test VM.
cd "$(dirname "$0")" || exit 2
tests=(vmexec_trap vmexec_fault ptrace_sysemu vmexec_syscall vmexec_fsgs
       vmexec_fpu vmexec_int80 vmexec_exit vmexec_badptr vmexec_threads)
n=0 failed=0
echo "TAP version 13"
echo "1..${#tests[@]}"
for t in "${tests[@]}"; do
	n=$((n + 1))
	echo "# selftests: process_vm_exec: $t"
	timeout 300 "./$t" 2>&1 | sed -u 's/^/# /'
	rc=${PIPESTATUS[0]}
	if [[ $rc -eq 0 ]]; then
		echo "ok $n selftests: process_vm_exec: $t"
	else
		echo "not ok $n selftests: process_vm_exec: $t # exit=$rc"
		failed=$((failed + 1))
	fi
done
echo "# process_vm_exec selftests: $((n - failed)) passed, $failed failed"
[[ $failed -eq 0 ]]
