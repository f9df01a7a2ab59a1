# Helpers of the off-CPU scripts (run-offcpu.sh, run-offcpu-view.sh),
# sourced after test-subr.sh.

# prog_field OUT NAME FIELD: a field of the program's line for thread NAME
prog_field() {
	awk -v n="$2" -v f="$3" '$1 == "thread" && $2 == n {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' "$1"
}

# within NAME GOT WANT PCT: |GOT - WANT| <= PCT % of WANT (status 1 when not)
within() {
	if awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d;
		exit !(w > 0 && d <= w * p / 100) }'; then
		pass "$1 ($2 vs $3, +-$4 %)"
	else
		fail "$1 ($2 vs $3, +-$4 %)"
		return 1
	fi
}

# within_cpu NAME GOT WANT PCT STOLEN: a cpu-clock sum GOT against a
# thread's CPU time WANT: |GOT - WANT| <= PCT % of WANT + STOLEN, the ns
# the kernel took from the CPUs meanwhile (irq, softirq, a hypervisor's
# steal), which cpu-clock counts and the thread's CPU time does not
within_cpu() {
	if awk -v g="$2" -v w="$3" -v p="$4" -v s="${5:-0}" 'BEGIN { d = g - w;
		if (d < 0) d = -d; exit !(w > 0 && d <= w * p / 100 + s) }'; then
		pass "$1 ($2 vs $3, +-$4 % + $5 ns taken by irq/steal)"
	else
		fail "$1 ($2 vs $3, +-$4 % + $5 ns taken by irq/steal)"
		return 1
	fi
}

# off_in FILE FUNC: blocked ns of offcpu-time samples whose stack has FUNC
# (FILE: lines of offcpu-samples.awk)
off_in() {
	awk -v fn="$2" '$1 == "offcpu-time" { for (i = 4; i <= NF; i++)
		if ($i == fn) { s += $3; break } } END { printf "%.0f\n", s }' "$1"
}
