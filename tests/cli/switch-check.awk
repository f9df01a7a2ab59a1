# Reads `sfprof script` (or `perf script`) output of tests/progs/stack-switch
# and checks every sample in leaf_spin against what the program knows (its
# header): leaf_spin, g0_work, switch_call, DEPTH g_rec, then g_entry and
# start_g (mode down) or run_up, main, and the C start-up ending at _start
# (mode up); mode nostack: spin_nostack, nostack_spin, DEPTH g_rec, run_up,
# main ... _start.  A stack that stops at switch_call (spin_nostack: the
# walk did not change stacks) is cut, not wrong; one that goes on must be
# exactly right.
# A stack that stops on the way (ran out of the copy of the other stack)
# is short: a prefix of the expected frames.
# Prints one line per process, in the order their samples first appear:
# "pid P samples N whole W cut C short S wrong X", and the first wrong
# stacks.
function flush(   i, want, got, ok, leaf) {
	leaf = mode == "nostack" ? "spin_nostack" : "leaf_spin"
	if (nf == 0 || fn[1] != leaf) {
		nf = 0
		return
	}
	if (!(pid in n))
		order[++npids] = pid
	n[pid]++
	got = fn[1]
	for (i = 2; i <= nf; i++)
		got = got " " fn[i]
	if (mode == "nostack")
		want = "spin_nostack nostack_spin"
	else
		want = "leaf_spin g0_work switch_call"
	for (i = 0; i < depth; i++)
		want = want " g_rec"
	if (mode == "down")
		want = want " g_entry start_g"
	else
		want = want " run_up main"
	if (mode != "down")
		want = want " "
	# whole: the expected frames (up: then the C start-up to _start);
	# short: a walk that ran out of what it had, a prefix of those
	if (mode == "down")
		ok = got == want
	else
		ok = index(got, want) == 1 && fn[nf] == "_start"
	if ((nf == 3 && fn[3] == "switch_call") ||
	    (nf == 1 && mode == "nostack"))
		cut[pid]++
	else if (ok)
		whole[pid]++
	else if (index(want, got " ") == 1 || index(got, want) == 1)
		short[pid]++
	else {
		wrong[pid]++
		if (++shown <= 3)
			print "wrong stack (pid " pid "): " got
	}
	nf = 0
}
/^[^ \t]/ { flush(); pid = $2; next }
/^$/ { flush(); next }
/^[ \t]/ {
	if ($0 ~ /\[kernel\.kallsyms\]/ || $0 ~ /\[unknown\]/ && $2 == "[unknown]")
		next
	s = $2
	sub(/\+0x[0-9a-f]+$/, "", s)
	sub(/@@.*$/, "", s)
	fn[++nf] = s
}
END {
	flush()
	for (i = 1; i <= npids; i++) {
		p = order[i]
		printf "pid %s samples %d whole %d cut %d short %d wrong %d\n",
			p, n[p], whole[p] + 0, cut[p] + 0, short[p] + 0,
			wrong[p] + 0
	}
}
