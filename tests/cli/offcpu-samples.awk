# One line per sample of `perf script` / `sfprof script` output:
#   EVENT TID PERIOD FRAME...          (frames leaf first, names only)
# A frame's name is its symbol without +0xOFF; unresolved ones are "?".
# A sample still carrying its deferred cookie gets the frame "(cookie)"
# followed by the cookie's value, so that entries can be counted.
function flush() {
	if (insample)
		print ev, tid, period frames
	insample = 0
	frames = ""
}
/^[^\t]/ {
	flush()
	# "COMM  TID[/PID] [CPU] SECS.USECS:  PERIOD EVENT:"
	if (!match($0, / +[0-9]+(\/[0-9]+)? +(\[[0-9]+\] +)?[0-9]+\.[0-9]+: +[0-9]+ +[^ :]+(:[^ ]*)?:/))
		next
	h = substr($0, RSTART, RLENGTH)
	n = split(h, f, / +/)
	# f[1] empty (leading blanks), f[2] tid, [cpu], time, period, event:
	tid = f[2]; sub(/\/.*/, "", tid)
	ev = f[n]; sub(/:$/, "", ev)
	period = f[n - 1]
	insample = 1
	next
}
/^\t/ && insample {
	sym = $2
	if ($0 ~ /\(cookie\)/) {
		frames = frames " (cookie) " $1
		next
	}
	sub(/\+0x[0-9a-f]+$/, "", sym)
	if (sym == "" || sym ~ /^\(/ || sym ~ /^\[unknown\]/)
		sym = "?"
	frames = frames " " sym
	next
}
/^$/ { flush() }
END { flush() }
