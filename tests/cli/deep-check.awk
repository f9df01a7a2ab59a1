# Reads `sfprof script` output of tests/progs/deep-stack and checks every
# sample that has the program's deep frames (rec_a, rec_b, leaf_spin)
# against what the program knows (see its header): the rec frames are all
# of one letter, followed by that letter's path_, main and the C start-up
# down to _start; a sample in leaf_spin has exactly DEPTH of them.
# Prints: "deep N root R wrong W fullroot F" and the first wrong stacks;
# F: the samples in leaf_spin at the full depth that reach _start (R also
# counts samples taken while the recursion was still shallow).
function flush(   i, c, x, l, bad, leaf, last, j) {
	if (nf == 0)
		return
	c = 0; x = ""; leaf = 0; bad = ""; last = -1
	for (i = 1; i <= nf; i++) {
		if (fn[i] == "leaf_spin")
			leaf = 1
		if (fn[i] ~ /^rec_[ab]$/) {
			l = substr(fn[i], 5, 1)
			if (x == "")
				x = l
			else if (l != x)
				bad = "rec_a and rec_b in one stack"
			c++
			last = i
		}
	}
	if (x == "" && !leaf) {
		nf = 0
		return
	}
	deep++
	# A stack that stops short (truncated) is not wrong, only short;
	# one that reaches _start must be whole and right.
	if (fn[nf] == "_start" && leaf && c != depth)
		bad = bad " " c " rec frames under leaf_spin, want " depth
	if (last > 0 && last < nf && fn[last + 1] != "path_" x)
		bad = bad " rec_" x " under " fn[last + 1]
	if (fn[nf] == "_start") {
		if (!(last > 0 && fn[last + 1] == "path_" x && fn[last + 2] == "main"))
			bad = bad " reaches _start without path_" x " -> main"
		else
			root++
		if (leaf && c == depth)
			fullroot++
	}
	if (bad != "") {
		wrong++
		if (wrong <= 3) {
			print "wrong stack: " bad
			for (j = 1; j <= nf; j++)
				if (j < 4 || j > nf - 6)
					print "   " fn[j]
		}
	}
	nf = 0
}
/^[^ \t]/ { flush(); next }
/^$/ { flush(); next }
/^[ \t]/ {
	if ($0 ~ /\[kernel\.kallsyms\]/)
		next
	s = $2
	sub(/\+0x[0-9a-f]+$/, "", s)
	fn[++nf] = s
}
END {
	flush()
	printf "deep %d root %d wrong %d fullroot %d\n", deep, root, wrong, fullroot
}
