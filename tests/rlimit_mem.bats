#!/usr/bin/env bats
# Issue 15, "Limits" and "/proc": RLIMIT_AS, RLIMIT_DATA and RLIMIT_STACK held as Linux's may_expand_vm and
# stack growth hold them, mremap's edge cases, /proc/PID/smaps, smaps_rollup and pagemap. Static guest
# tests/guest/rlimit_mem.c (musl and glibc) compared with its native run.

load helpers

setup() {
	require_pvx
	cd "$BATS_TEST_TMPDIR"
}

@test "RLIMIT_AS: mmap, PROT_NONE, MAP_FIXED over a mapping, mremap growth, brk, raising and lowering, as natively" {
	compare_flavours 0 rlimit_mem as
	has "mmap past the limit: ENOMEM" "MAP_FIXED over the 40 MiB: ok" "mremap growing past the limit: ENOMEM" \
		"one page at limit 0: ENOMEM" "brk at limit 0: ENOMEM"
}

@test "RLIMIT_DATA: private writable memory and brk, not shared, read-only or stack memory; mprotect; soft 0, as natively" {
	compare_flavours 0 rlimit_mem data
	has "private writable past the limit: ENOMEM" "mprotect it writable: ENOMEM" "shared writable is not data: ok" \
		"brk past the limit: old break" "brk 1 MiB: moved" \
		"mremap it to 48 MiB: ENOMEM" "mremap the read-only one to 96 MiB: ok" "soft 0: 8 MiB within hard: ok" "soft 0: 64 MiB past hard: ENOMEM"
}

@test "RLIMIT_STACK: a recursion past a lowered limit dies of SIGSEGV, one within lives, a raised limit lets it grow, as natively" {
	compare_flavours 0 rlimit_mem stack
	has "1 MiB limit, 512 KiB deep: exit 0" "1 MiB limit, 2 MiB deep: killed by signal 11" \
		"8 MiB limit, 16 MiB deep: killed by signal 11" "32 MiB limit, 24 MiB deep: exit 0" \
		"1 MiB deep, a read into an untouched array and a signal below: ok" "MAP_GROWSDOWN touched below: grew" \
		"a mapping 1.5 MiB below the stack, 256 KiB deep: exit 0" "a mapping 1.5 MiB below the stack, 1.5 MiB deep: killed by signal 11"
}

@test "RLIMIT_STACK at exec: the new stack holds to the limit from the start, as natively" {
	compare_flavours 0 rlimit_mem initial
	has "exec under 512 KiB, 1 MiB deep: killed by signal 11" "exec under 16 MiB, 12 MiB deep: exit 0" \
		"exec under 96 KiB, 32 KiB deep: exit 0" "exec under 96 KiB, 192 KiB deep: killed by signal 11"
}

@test "mremap: lengths that align to 0 or wrap, huge growth, across VMAs, fixed moves that wrap or overlap, as natively" {
	compare_flavours 0 rlimit_mem mremap
	has "new_len that aligns to 0: EINVAL" "fixed to an address that wraps: EINVAL" "old_len past its VMA, growing: EFAULT" \
		"still mapped: 1"
}

@test "hostile: lengths and brk requests that wrap or pass the top, limits a page short of infinity, prlimit on another process, as natively" {
	compare_flavours 0 rlimit_mem huge
	has "mmap of ~0: ENOMEM" "MAP_FIXED whose end wraps: ENOMEM" "brk(-4096): old break" "mmap under a huge limit: ok" \
		"child's 256 MiB mmap under 128 MiB: ENOMEM" "ours still maps 256 MiB: ok" "prlimit to a bad pointer: EFAULT"
}

@test "/proc/PID/smaps and smaps_rollup: Linux's fields in order, the guest's sizes, resident, locked and shared numbers, flags, the rollup the sum, as natively" {
	compare_flavours 0 rlimit_mem smaps
	has "Size 64 Rss 20 Pss 20 Anonymous 20 Private_Dirty 20 Swap 0 Locked 0" "VmFlags: rd wr mr mw me ac " \
		"locked: Rss 64 Locked 64 VmFlags: rd wr mr mw me lo ac " "after a split: Size 16 Rss 16" \
		"rollup Rss: the sum" "rollup Pss_Anon+Pss_File+Pss_Shmem: Pss"
	grep -q '^stack VmFlags: rd wr mr mw me gd ' "$sandbox_out"
}

@test "/proc/PID/pagemap: present after touching, not before or after MADV_DONTNEED, offsets and counts Linux refuses, the top, another process's, as natively" {
	compare_flavours 0 rlimit_mem pagemap
	has "untouched: 00000000" "touched 0 2 5: 10100100" "after MADV_DONTNEED: 00000000" "offset 4: EINVAL" \
		"count 12: EINVAL" "negative offset: EINVAL" "across the top: 8" "far beyond: 0" "last offset: -22" \
		"child's: 0100, ours: 0000" "child's after it exited: 0"
}

@test "/proc/PID/pagemap never shows a host frame number; smaps and pagemap hold no host address" {
	pvx_run "$(guest rlimit_mem)" pfn
	[[ $status == 0 && $output == "present 1, pfn bits: zero" ]] || fail_msg "$output"
	# every range smaps names is the guest's: below the stub, as /proc/PID/maps says
	pvx_run "$BUSYBOX" awk 'FNR == 1 { f++ } f == 1 && /^[0-9a-f]+-[0-9a-f]+ / { s[$1] = 1; n++ } f == 2 { m[$1] = 1 }
		END { for (r in s) if (!(r in m)) print "not in maps: " r; print n " ranges" }' /proc/self/smaps /proc/self/maps
	[[ $status == 0 && $output =~ ^[0-9]+\ ranges$ && $output != "0 ranges" ]] || fail_msg "$output"
}

@test "hostile: a mapped file whose long name carries smaps lines and a fake range forges nothing in smaps_rollup" {
	local long dir name
	long=$(printf 'x%.0s' {1..200})
	dir=$BATS_TEST_TMPDIR/$long/$long/$long	# past 512 bytes, where a line read in pieces would start anew
	name='1000-2000 rw-p 00000000 00:00 0
Rss:         9999999 kB'
	mkdir -p "$dir"
	printf 'data' >"$dir/$name"
	chmod -R a+rX "$BATS_TEST_TMPDIR/$long"
	pvx_run "$(guest rlimit_mem)" named "$dir/$name"
	[[ $status == 0 && $output == "rollup Rss: sane" ]] || fail_msg "$output"
}
