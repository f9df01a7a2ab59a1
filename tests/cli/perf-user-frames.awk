# Compare the user frames of each sample in two perf-script outputs.
# A frame is "addr (dso)"; kernel frames are ignored.  Prints "EQUAL TOTAL".
function save() { if (started) { if (fileno == 1) a[n] = cur; else b[n] = cur } }
FNR == 1 { save(); fileno++; n = 0; cur = ""; started = 0 }
/^[^\t]/ { save(); n++; cur = ""; started = 1; next }
/^\t/ { if ($0 ~ /\[kernel\.kallsyms\]\)$/) next; cur = cur "|" $1 " " $NF; next }
END { save(); eq = 0; for (i = 1; i <= n; i++) { if (a[i] == b[i]) eq++;
	else if (show-- > 0) print "DIFF " i ": " a[i] " <> " b[i] > "/dev/stderr" }
	print eq, n }
