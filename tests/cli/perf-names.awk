# Compare every frame line of two perf-script outputs of one file, the
# first perf's, the second sfprof's.  Samples are paired by their header
# (tid and time: a deferred file may deliver them in another order; the
# position when there is no time).
#
# mode=strict (fp and system-wide files, where both read the same recorded
# chain): the frames of a sample are paired by position; a sample missing
# from either side, or a frame only one side has, counts as extra.
# mode=addr (dwarf files, where each side unwinds the stack snapshot
# itself): a perf frame is paired with the first unpaired sfprof frame of
# the same sample with the same address and DSO; frames only one side found
# are the unwinders' business (perf-user-frames.awk) and are counted apart.
#
# Prints one line per differing pair, "DIFF<TAB>perf line<TAB>sfprof line"
# (the frame text after the address column, with the address), then
# "TOTAL frames same differ perf_only sfprof_only".
function save() {
	if (!started)
		return
	if (fileno == 1) {
		if (!(key in pn))
			order[++n] = key
		pn[key] = nf
		for (j = 1; j <= nf; j++)
			pf[key, j] = fr[j]
	} else {
		sn[key] = nf
		for (j = 1; j <= nf; j++)
			sf[key, j] = fr[j]
	}
}
function header_key(   i, tid) {
	for (i = 2; i <= NF; i++)
		if ($i ~ /^[0-9]+\.[0-9]+:$/)
			break
	if (i > NF)
		return "#" FNR
	tid = $(i - 1)
	if (tid ~ /^\[[0-9]+\]$/)
		tid = $(i - 2)
	return tid " " $i
}
function addr_of(l,   a) {
	a = l
	sub(/^[\t ]+/, "", a)
	sub(/ .*/, "", a)
	return a
}
function dso_of(l,   d) {
	d = l
	sub(/.*\(/, "", d)
	return d
}
function text_of(l,   t) {
	t = l
	sub(/^[\t ]+/, "", t)
	return t
}
BEGIN { if (mode == "") mode = "strict" }
FNR == 1 { save(); fileno++; nf = 0; started = 0; delete dup }
/^[^\t]/ { save(); key = header_key(); if (key in dup) key = key "#" (++dup[key]); else dup[key] = 0; nf = 0; started = 1; next }
/^\t/ { fr[++nf] = $0; next }
END {
	save()
	total = same = differ = ponly = sonly = 0
	for (i = 1; i <= n; i++) {
		k = order[i]
		np = pn[k]
		total += np
		if (!(k in sn)) {
			ponly += np
			continue
		}
		ns = sn[k]
		if (mode == "strict") {
			m = np < ns ? np : ns
			for (j = 1; j <= m; j++) {
				if (pf[k, j] == sf[k, j])
					same++
				else {
					differ++
					print "DIFF\t" text_of(pf[k, j]) "\t" text_of(sf[k, j])
				}
			}
			if (np > m) ponly += np - m
			if (ns > m) sonly += ns - m
			continue
		}
		delete used
		for (j = 1; j <= np; j++) {
			a = addr_of(pf[k, j]); d = dso_of(pf[k, j])
			for (q = 1; q <= ns; q++)
				if (!(q in used) && addr_of(sf[k, q]) == a &&
				    dso_of(sf[k, q]) == d)
					break
			if (q > ns) {
				ponly++
				continue
			}
			used[q] = 1
			if (pf[k, j] == sf[k, q])
				same++
			else {
				differ++
				print "DIFF\t" text_of(pf[k, j]) "\t" text_of(sf[k, q])
			}
		}
		for (q = 1; q <= ns; q++)
			if (!(q in used))
				sonly++
	}
	# samples only sfprof printed
	for (k in sn)
		if (!(k in pn))
			sonly += sn[k]
	print "TOTAL", total, same, differ, ponly, sonly
}
