# Compare the user frames of each sample in two perf-script outputs: the
# first perf's, the second sfprof's.  A frame is "addr (dso)"; kernel
# frames are ignored.  Samples are paired by (tid, time) from their header
# lines, not by position: a deferred file delivers a sample when its
# CALLCHAIN_DEFERRED record arrives, so with several threads the order of
# the outputs differs while the samples are the same.  Prints
# "EQUAL PERF_GAVE_UP TOTAL", where PERF_GAVE_UP counts samples whose perf
# chain ends in perf's unwind-failure frame (ffffffffffffffff) after frames
# that are a prefix of sfprof's.  A sample missing from the second output
# counts as different.
function save() {
	if (!started)
		return
	if (fileno == 1) { if (!(key in a)) order[++n] = key; a[key] = cur }
	else b[key] = cur
}
function header_key(   i, tid) {
	for (i = 2; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/)
			break
	if (i > NF)
		return FNR	# no time field: fall back to the position
	tid = $(i - 1)
	if (tid ~ /^\[[0-9]+\]$/)	# "[cpu]" between tid and time
		tid = $(i - 2)
	return tid " " $i
}
FNR == 1 { save(); fileno++; cur = ""; started = 0 }
/^[^\t]/ { save(); key = header_key(); cur = ""; started = 1; next }
/^\t/ { if ($0 ~ /\[kernel\.kallsyms\]\)$/) next; cur = cur "|" $1 " " $NF; next }
END {
	save(); eq = 0; gave = 0; bad = "|ffffffffffffffff ([unknown])"
	for (i = 1; i <= n; i++) {
		k = order[i]
		if ((k in b) && a[k] == b[k]) { eq++; continue }
		l = length(a[k]) - length(bad)
		if ((k in b) && l >= 0 && substr(a[k], l + 1) == bad &&
		    substr(b[k], 1, l) == substr(a[k], 1, l)) { gave++; continue }
		if (show-- > 0) print "DIFF " k ": " a[k] " <> " ((k in b) ? b[k] : "(missing)") > "/dev/stderr"
	}
	print eq, gave, n
}
