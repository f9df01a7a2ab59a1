# Fold `perf script` / `sfprof script` output into folded stacks the way
# stackcollapse-perf.pl does, independently of sfprof's exporter:
#   comm;root;...;leaf COUNT       (unsorted; pipe through sort)
# Variables: user_only=1 drops kernel frames (kernel addresses are printed
# raw, 16 hex digits from ffff...), annotate=1 appends _[k] to them.
function basename(p) { sub(/.*\//, "", p); return p }
function flush() {
	if (!insample)
		return
	s = comm
	for (i = n; i >= 1; i--)
		s = s ";" fr[i]
	count[s]++
	insample = 0
	n = 0
}
/^[^\t]/ {
	flush()
	h = $0
	# comm is what precedes "  TID[/PID] [CPU] SECS.USECS:"
	sub(/ +[0-9]+(\/[0-9]+)? +(\[[0-9]+\] +)?[0-9]+\.[0-9]+: .*$/, "", h)
	sub(/^ +/, "", h)
	gsub(/;/, ":", h)
	gsub(/ /, "_", h)
	comm = h
	insample = 1
	next
}
/^\t/ {
	line = $0
	sub(/^\t */, "", line)
	addr = line
	sub(/ .*$/, "", addr)
	sub(/^[0-9a-f]+ /, "", line)
	# the DSO is the last parenthesised part
	dso = line
	sub(/^.* \(/, "", dso)
	sub(/\)$/, "", dso)
	sym = line
	sub(/ \([^(]*\)$/, "", sym)
	sub(/\+0x[0-9a-f]+$/, "", sym)
	kernel = length(addr) == 16 && addr ~ /^ffff/
	if (user_only && kernel)
		next
	if (sym == "[unknown]")
		sym = (dso == "[unknown]") ? "[unknown]" : "[" basename(dso) "]"
	gsub(/;/, ":", sym)
	if (annotate && kernel)
		sym = sym "_[k]"
	fr[++n] = sym
	next
}
/^$/ { flush() }
END {
	flush()
	for (s in count)
		print s, count[s]
}
