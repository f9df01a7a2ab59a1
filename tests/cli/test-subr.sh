# Helpers for CLI tests (sourced).  Each check prints PASS:/FAIL:/SKIP:.
#   check_eq NAME EXPECTED_FILE ACTUAL_FILE
#   check_rc NAME WANT_RC CMD...
#   skip NAME REASON
#   skip_rest NAME REASON      the rest of the script cannot run here: says
#                              SKIP-REST and exits 0 (tests/run-tests.sh
#                              counts the checks not printed as skips)
#   sfp [-e STATUS] ARGS...    $SFPROF ARGS, its exit status checked
#   bpf_defer_expected         can bpf-defer load here (root, BTF, kfunc, the
#                              verifier taking a task_work callback)?
# Every script starts with a "# checks: N" line: the number of
# PASS/FAIL/SKIP lines it prints (tests/run-tests.sh fails the script when
# fewer come out, as when a check silently prints nothing, or more, as
# when a new check hides a vanished one).
: "${SFPROF:?SFPROF must point at the sfprof binary}"
TMP=${SFP_TEST_TMP:-/tmp}/cli.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT
# The script's own stdout: sfp() says FAIL there whatever the call's
# stdout is redirected to.
exec 3>&1

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1"; }
skip() { echo "SKIP: $1 ($2)"; }
skip_rest() { echo "SKIP-REST: $1 ($2)"; exit 0; }

# sfp [-e STATUS] ARGS...: run $SFPROF ARGS with the caller's
# redirections and return its exit status.  A status other than STATUS
# (default 0), or a sanitizer's report on its stderr (ASan, LeakSanitizer,
# UBSan's "runtime error:", which may come after complete output and, with
# halt_on_error, an exit status of 1 that an invalid-input check would
# take for its own), prints a FAIL line naming the command on the
# script's stdout.  Where the call's stdout and stderr are one file, they
# stay one (in the order of the whole output, not interleaved).
sfp() {
	_sfp_want=0
	if [ "$1" = -e ]; then
		_sfp_want=$2
		shift 2
	fi
	_sfp_err=$(mktemp "$TMP/sfp.XXXXXX")
	if [ /proc/self/fd/1 -ef /proc/self/fd/2 ]; then
		"$SFPROF" "$@" > "$_sfp_err" 2>&1
		_sfp_rc=$?
		cat "$_sfp_err"
	else
		"$SFPROF" "$@" 2> "$_sfp_err"
		_sfp_rc=$?
		cat "$_sfp_err" >&2
	fi
	_sfp_san=$(grep -m1 -E 'runtime error:|LeakSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer' "$_sfp_err")
	if [ "$_sfp_rc" -ne "$_sfp_want" ] || [ -n "$_sfp_san" ]; then
		_sfp_cmd=$(echo "sfprof $*" | sed "s|$TMP/||g" | cut -c1-150)
		{
			echo "FAIL: $_sfp_cmd: exit $_sfp_rc, want $_sfp_want${_sfp_san:+ (sanitizer report)}"
			grep -E -A3 'runtime error:|Sanitizer' "$_sfp_err" | head -8 | sed 's/^/  /'
			[ -n "$_sfp_san" ] || tail -4 "$_sfp_err" | sed 's/^/  /'
		} >&3
	fi
	rm -f "$_sfp_err"
	return $_sfp_rc
}

# has [GREP OPTIONS] PATTERN: grep -q that reads all of its input (an
# early exit would kill the sfprof writing into the pipe with SIGPIPE).
has() {
	grep -c "$@" > /dev/null
}

# checker NAME CMD...: run a helper that prints PASS/FAIL lines itself
# (the browser scripts); a helper that crashes, is killed or times out
# (timeout's 124) without saying FAIL is a FAIL, and so is a time-out
# whatever it said.
checker() {
	_ck_name=$1
	shift
	"$@" > "$TMP/checker.out" 2>&1
	_ck_rc=$?
	cat "$TMP/checker.out"
	if [ $_ck_rc -eq 124 ]; then
		fail "$_ck_name: timed out"
	elif [ $_ck_rc -ne 0 ] && ! grep -q '^FAIL: ' "$TMP/checker.out"; then
		fail "$_ck_name: exited $_ck_rc without a FAIL line"
		grep -v '^PASS: ' "$TMP/checker.out" | tail -5 | sed 's/^/  /'
	fi
}

# Can `--call-graph bpf-defer` load here?  Decided from the system, never
# from sfprof's output: root (CAP_BPF + CAP_PERFMON), the kernel's BTF,
# and the kfunc and helpers the BPF object needs (src/bpf/defer.bpf.c,
# docs/record-bpf.md).  Sets BPF_WHY to what is missing.  Where this says
# yes, a bpf-defer that falls back to sframe is a FAIL.
bpf_defer_expected() {
	BPF_WHY=
	if [ "$(id -u)" != 0 ]; then
		BPF_WHY="not root"
	elif [ ! -r /sys/kernel/btf/vmlinux ]; then
		BPF_WHY="no kernel BTF (/sys/kernel/btf/vmlinux)"
	else
		for _f in bpf_task_work_schedule_resume_impl bpf_find_vma bpf_loop; do
			if ! grep -q " $_f\$" /proc/kallsyms; then
				BPF_WHY="the kernel lacks $_f (/proc/kallsyms)"
				break
			fi
		done
	fi
	[ -z "$BPF_WHY" ] && task_work_refused &&
		BPF_WHY="the kernel's verifier refuses a task_work callback in a perf_event program (tests/progs/task-work-probe.bpf.c)"
	[ -z "$BPF_WHY" ]
}

# Some 6.18 kernels have the kfunc but their verifier refuses its
# callback in any program that is not sleepable ("sleepable callback in
# a program that is not sleepable"), so bpf-defer cannot load there.
# The kernel says so when bpftool loads a minimal such program.  Only
# that answer counts as a refusal: any other failure to run the probe
# leaves bpf-defer expected (and its tests then fail, as they should).
# TW_PROBE_RC and TW_PROBE_LOG: bpftool's exit status and output (unset
# when the probe could not run).
task_work_refused() {
	unset TW_PROBE_RC TW_PROBE_LOG
	_obj="$SFP_BUILD/tests/progs/task-work-probe.bpf.o"
	[ -r "$_obj" ] || return 1
	_fs=$(mktemp -d "${TMPDIR:-/tmp}/sfp-bpffs.XXXXXX") || return 1
	if ! mount -t bpf bpf "$_fs" 2>/dev/null; then
		rmdir "$_fs"
		return 1
	fi
	_log=$(bpftool prog load "$_obj" "$_fs/probe" type perf_event 2>&1)
	_rc=$?
	TW_PROBE_RC=$_rc
	TW_PROBE_LOG=$_log
	rm -f "$_fs/probe"
	umount "$_fs"
	rmdir "$_fs"
	[ "$_rc" -ne 0 ] && printf '%s' "$_log" | grep -q 'failed callback verification'
}

check_eq() {
	if cmp -s "$2" "$3"; then
		pass "$1"
	else
		fail "$1"
		diff -u "$2" "$3" | head -30 | sed 's/^/  /'
	fi
}

check_rc() {
	name=$1 want=$2
	shift 2
	"$@" > "$TMP/rc.out" 2>&1
	rc=$?
	# (a sanitizer's report is a failure whatever the exit status)
	if [ "$rc" -eq "$want" ] &&
	   ! grep -qE 'runtime error:|LeakSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer' "$TMP/rc.out"; then
		pass "$name"
	else
		fail "$name"
		echo "  exit $rc, want $want; output:"
		head -10 "$TMP/rc.out" | sed 's/^/  /'
	fi
}

# perf record with cpu-clock into $1 (the other arguments are perf
# record's).  Now and then perf record on a shared machine ends without
# finishing its file (data size 0 in the header), so try up to three
# times, saying on stderr why an attempt failed.
rec() {
	out=$1
	shift
	for try in 1 2 3; do
		if perf record -q -e cpu-clock -o "$out" "$@" >"$TMP/rec.log" 2>&1 &&
		   [ "$(od -An -t u8 -j 48 -N 8 "$out" | tr -d ' ')" != 0 ]; then
			return 0
		fi
		echo "  perf record attempt $try failed:" >&2
		head -3 "$TMP/rec.log" | sed 's/^/    /' >&2
	done
	return 1
}

# Does the kernel defer user callchains (attr.defer_callchain, Linux
# 6.19+)?  Decided from the kernel's release, never from sfprof's own
# probe.  Sets KDEFER_WHY to the kernel's release where it does not.
kernel_defer_expected() {
	_rel=$(uname -r)
	_maj=${_rel%%.*}
	_rest=${_rel#*.}
	_min=${_rest%%[!0-9]*}
	KDEFER_WHY=
	if [ "$_maj" -lt 6 ] || { [ "$_maj" -eq 6 ] && [ "$_min" -lt 19 ]; }; then
		KDEFER_WHY="kernel $_rel predates defer_callchain (6.19)"
	fi
	[ -z "$KDEFER_WHY" ]
}
