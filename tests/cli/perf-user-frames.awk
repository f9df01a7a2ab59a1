# Compare the user frames of each sample in two perf-script outputs: the
# first perf's, the second sfprof's.  A frame is "addr (dso)"; kernel
# frames are ignored.  Prints "EQUAL PERF_GAVE_UP TOTAL", where PERF_GAVE_UP
# counts samples whose perf chain ends in perf's unwind-failure frame
# (ffffffffffffffff) after frames that are a prefix of sfprof's.
function save() { if (started) { if (fileno == 1) a[n] = cur; else b[n] = cur } }
FNR == 1 { save(); fileno++; n = 0; cur = ""; started = 0 }
/^[^\t]/ { save(); n++; cur = ""; started = 1; next }
/^\t/ { if ($0 ~ /\[kernel\.kallsyms\]\)$/) next; cur = cur "|" $1 " " $NF; next }
END {
	save(); eq = 0; gave = 0; bad = "|ffffffffffffffff ([unknown])"
	for (i = 1; i <= n; i++) {
		if (a[i] == b[i]) { eq++; continue }
		l = length(a[i]) - length(bad)
		if (l >= 0 && substr(a[i], l + 1) == bad &&
		    substr(b[i], 1, l) == substr(a[i], 1, l)) { gave++; continue }
		if (show-- > 0) print "DIFF " i ": " a[i] " <> " b[i] > "/dev/stderr"
	}
	print eq, gave, n
}
