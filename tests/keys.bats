#!/usr/bin/env bats
# Keyrings (issue 15): add_key, request_key and keyctl on the sandbox's own
# keys, never the host's. Each guest mode against its native run (musl and
# glibc) where Linux's answer does not depend on the host (its user
# keyrings, root's larger quota, the garbage collector's timing), and
# sandbox-only checks of the quotas that bound the sentry's memory.

load helpers

# keys MODE: both builds of the keys guest in MODE against their native runs; skip where the host refuses keyctl.
keys() {
	local n
	n=$("$(guest keys)" "$1" 2>/dev/null | head -1)
	if [[ $n == "no keyctl here"* ]]; then
		skip "the host refuses keyctl natively: $n"
	fi
	compare_flavours 0 keys "$1"
}

@test "keys: user, logon and keyring keys; describe, read, update, search, link, move, setperm, revoke, timeout, invalidate" {
	keys basic
	has "read into 2 bytes: ret 5 buf ''" "add same desc updates: ok same yes" "cycle: EDEADLK" \
		"move replaces: ok" "revoked read: EKEYREVOKED" "revoked describe: EKEYREVOKED" "expired request: ENOKEY" "logon read: EOPNOTSUPP" \
		"unknown type: ENODEV" "asymmetric: EFAULT" "request with callout: ENOKEY or ENOENT" "negative read: ENOKEY" \
		"now positive: ok pos" "join named again: serial"
}

@test "keys: thread, process and session keyrings across threads, fork, KEYCTL_SESSION_TO_PARENT and exec" {
	keys procs
	has "new thread: thread keyring ok its own yes, process keyring same yes" "child: process keyring: ENOKEY" \
		"child: parent's thread key: ENOKEY" "parent: child's key: ENOKEY" "child: add into the old session by serial: EACCES" "session to parent: status 0" \
		"after exec: process keyring: ENOKEY" "after exec: session key: ok"
}

@test "keys hostile: bad pointers, huge and negative sizes, forged serials, deep chains, revoke racing readers" {
	keys hostile
	has "add bad payload: EFAULT" "add huge plen: EINVAL" "desc 4096: EINVAL" "payload into hole: EFAULT" \
		"serial INT_MIN: EINVAL" "readers saw a torn payload or a wrong error: no" "clear racing add: child status 0"
}

@test "keys: a guest that adds keys, links and sessions forever hits EDQUOT, and what it frees is given back" {
	pvx_run "$(guest keys)" quota
	echo "$output"
	[[ $status == 0 ]]
	n=$(sed -n 's/^keys until EDQUOT: //p' <<<"$output")
	# nobody's quota (a root run's guest is nobody): 200 keys, 20000 bytes of descriptions, payloads and links
	((n > 100 && n < 200))
	grep -qx "after clear: ok" <<<"$output"
	grep -q "^linking stopped: EDQUOT" <<<"$output"
	grep -qx "joined 20000 sessions; a key still fits: ok" <<<"$output"
	grep -qx "get persistent: EOPNOTSUPP" <<<"$output"
	grep -qx "user keyring again: ok new yes" <<<"$output"
	grep -qx "user session keyring again: ok" <<<"$output"
	grep -qx "capabilities: 2 a1 03 00" <<<"$output"
}

@test "keys: searches and cycle checks of a lattice of keyrings (20^6 paths) visit each keyring once" {
	PVX_TIMEOUT=60 pvx_run "$(guest keys)" lattice
	echo "$output"
	[[ $status == 0 ]]
	grep -qx "lattice: 1900 links" <<<"$output"
	grep -qx "search the lattice: ENOKEY" <<<"$output"
	grep -qx "link its top under its bottom: EDEADLK" <<<"$output"
	grep -qx "link its top under the middle: EDEADLK" <<<"$output"
}

@test "keys: /proc/keys shows what the reader may view; /proc/key-users and /proc/sys/kernel/keys the quotas" {
	pvx_run "$(guest keys)" proc
	echo "$output"
	[[ $status == 0 ]]
	grep -Eq '^/proc/keys: [0-9a-f]{8} I--Q--- +1 +[0-9]+m 3f010000 +[0-9]+ +[0-9]+ keyring +proc-ring: 2$' <<<"$output"
	grep -Eq '^/proc/keys: [0-9a-f]{8} I--Q--- +1 perm 3f010000 +[0-9]+ +[0-9]+ user +proc-visible: 5$' <<<"$output"
	! grep -q proc-hidden <<<"$output"
	grep -Eq '^/proc/key-users: +[0-9]+: +[0-9]+ [0-9]+/[0-9]+ [0-9]+/200 [0-9]+/20000$' <<<"$output"
	grep -qx "/proc/sys/kernel/keys/maxkeys: 200" <<<"$output"
	grep -qx "/proc/sys/kernel/keys/root_maxkeys: 1000000" <<<"$output"
	pvx_run "$BUSYBOX" sh -c 'zcat /proc/config.gz | grep CONFIG_KEYS; ls /proc | grep key'
	[[ $output == $'CONFIG_KEYS=y\nkey-users\nkeys' ]] || fail_msg "$output"
}

@test "keys: pvx syscalls says what add_key, request_key and keyctl leave out" {
	require_pvx
	run "$PVX" syscalls
	grep -E '^ *248 +add_key +partial' <<<"$output"
	grep -E '^ *249 +request_key +partial.*no upcall' <<<"$output"
	grep -E '^ *250 +keyctl +partial.*GET_PERSISTENT' <<<"$output"
}

@test "keys: a keyring looked up by serial outlives the call that replaces the revoked user keyrings (was a sentry use-after-free)" {
	pvx_run "$(guest keys)" retired
	echo "$output"
	[[ $status == 0 ]]
	grep -qx "user keyring after the replacements: ok" <<<"$output"
}
