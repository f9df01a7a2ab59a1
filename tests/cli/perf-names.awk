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
# mode=group (dwarf files with perf's "(inlined)" lines): as addr, but
# what is paired is a frame with its inlined lines, the run of lines at
# one address: a perf run is paired with the first unpaired sfprof run at
# its address whose real frame's DSO is the same (a run of "(inlined)"
# lines only, and no real frame, pairs with any run at its address), and
# the runs must be equal line for line.  A run counts as one frame; a
# differing run of several lines is never one a name rule explains.
#
# Prints one line per differing pair, "DIFF<TAB>perf line<TAB>sfprof line"
# (the frame text after the address column, with the address; a run's
# lines joined by " | "), then "TOTAL frames same differ perf_only
# sfprof_only" and, in group mode, "INLINED runs_with_inlined_lines
# inlined_lines" of perf's paired runs.
function save() {
	if (!started)
		return
	if (mode == "group")
		group_runs()
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
# the runs of lines at one address, of frames fr[1..nf], into fr[] again
# (joined by "\n"); nf changes
function group_runs(   i, k, a) {
	k = 0
	for (i = 1; i <= nf; i++) {
		a = addr_of(fr[i])
		if (k && addr_of(gr[k]) == a && gr_open)
			gr[k] = gr[k] "\n" fr[i]
		else
			gr[++k] = fr[i]
		# a real frame (not "(inlined)") closes its run
		gr_open = fr[i] ~ / \(inlined\)$/
	}
	for (i = 1; i <= k; i++)
		fr[i] = gr[i]
	nf = k
}
# the DSO of a run's real frame, "" when it has none
function run_dso(r,   n, l) {
	n = split(r, l, "\n")
	if (l[n] ~ / \(inlined\)$/)
		return ""
	return dso_of(l[n])
}
# does sfprof's frame (or run) l fit a perf frame of DSO d?
function dso_fits(l, d,   e) {
	if (mode != "group")
		return dso_of(l) == d
	e = run_dso(l)
	return d == "" || e == "" || e == d
}
function lines_of(r,   l) {
	return split(r, l, "\n")
}
function run_text(r,   n, l, i, t) {
	n = split(r, l, "\n")
	t = text_of(l[1])
	for (i = 2; i <= n; i++)
		t = t " | " text_of(l[i])
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
		delete skip
		for (j = 1; j <= np; j++) {
			if (j in skip)
				continue
			a = addr_of(pf[k, j])
			d = mode == "group" ? run_dso(pf[k, j]) : dso_of(pf[k, j])
			for (q = 1; q <= ns; q++)
				if (!(q in used) && addr_of(sf[k, q]) == a &&
				    dso_fits(sf[k, q], d))
					break
			if (q > ns) {
				ponly++
				continue
			}
			used[q] = 1
			# a chain whose first level is named as the frame's
			# symbol comes out as the frame's own line followed by
			# "(inlined)" lines at its address: two runs by the
			# rule above, one frame; joined when the other side's
			# run has their lines (either side, by addr2line's
			# state: the a2l-order rule)
			if (mode == "group" && pf[k, j] != sf[k, q]) {
				if (j < np && addr_of(pf[k, j + 1]) == a &&
				    run_dso(pf[k, j + 1]) == "" &&
				    lines_of(pf[k, j]) + lines_of(pf[k, j + 1]) == lines_of(sf[k, q])) {
					pf[k, j] = pf[k, j] "\n" pf[k, j + 1]
					skip[j + 1] = 1
					total--
				} else if (q < ns && !(q + 1 in used) &&
				    addr_of(sf[k, q + 1]) == a && run_dso(sf[k, q + 1]) == "" &&
				    lines_of(sf[k, q]) + lines_of(sf[k, q + 1]) == lines_of(pf[k, j])) {
					sf[k, q] = sf[k, q] "\n" sf[k, q + 1]
					used[q + 1] = 1
				}
			}
			if (mode == "group" && pf[k, j] ~ / \(inlined\)(\n|$)/) {
				inl_runs++
				inl_lines += gsub(/ \(inlined\)/, "&", pf[k, j])
			}
			if (pf[k, j] == sf[k, q])
				same++
			else {
				differ++
				if (mode == "group")
					print "DIFF\t" run_text(pf[k, j]) "\t" run_text(sf[k, q])
				else
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
	if (mode == "group")
		print "INLINED", inl_runs + 0, inl_lines + 0
}
