#!/bin/sh
# Deep stacks at the defaults (docs/record.md, "Deep stacks"): stacks far
# deeper than the 16 KiB stack copy (and than perf's largest, 64 KiB) reach
# _start with every frame right, and a workload whose outer frames change
# between samples never gets another path's outer frames.
# checks: 7
. "$(dirname "$0")/test-subr.sh"

DEEP=$SFP_BUILD/tests/progs/deep-stack
AWK=$(dirname "$0")/deep-check.awk
DEPTH=100

# 1. One deep path, 100 frames of ~1 KiB (~100 KiB of stack; 106 frames in
# all, under the readers' 127).  "Reaching the root": the sample's
# outermost user frame is _start and the frames under leaf_spin are exactly
# DEPTH rec_a, path_a, main (deep-check.awk).
sfp record -F 1000 -o "$TMP/c.data" -- "$DEEP" const $DEPTH 1500 \
	> /dev/null 2> "$TMP/c.err"
sfp script -i "$TMP/c.data" > "$TMP/c.script" 2> /dev/null
awk -v depth=$DEPTH -f "$AWK" "$TMP/c.script" > "$TMP/c.check"
set -- $(tail -1 "$TMP/c.check")	# deep N root R wrong W
if [ "${2:-0}" -ge 500 ] && [ $(($4 * 100)) -ge $(($2 * 99)) ] && [ "$6" = 0 ]; then
	pass "deep recursion at the defaults: $4 of $2 samples reach _start, every frame right"
else
	fail "deep recursion at the defaults: want >= 99% of >= 500 samples at _start and none wrong"
	cat "$TMP/c.check" | head -20 | sed 's/^/  /'
	grep -E 'deep stacks|unwind stops' "$TMP/c.err" | sed 's/^/  /'
fi

# The summary counts the walks that ran out of the copy and how each ended,
# and its counts add up.
line=$(grep 'deep stacks:' "$TMP/c.err")
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
# ran_out from_prev from_live truncated changed unreadable too_deep (1 MiB)
if [ -n "$line" ] && [ "${1:-0}" -ge 500 ] &&
   [ $(($2 + $3 + $4)) -eq "$1" ] && [ $(($5 + $6 + $7)) -eq "$4" ]; then
	pass "summary: walks that ran out of the copy, completed each way, adding up"
else
	fail "summary: walks that ran out of the copy, completed each way, adding up"
	echo "  $line"
fi

# --no-deep-stacks: the same program stays truncated (what the default
# mode gave before): proves the test reaches past the copy at all.
sfp record -F 1000 --no-deep-stacks -o "$TMP/n.data" -- "$DEEP" const $DEPTH 400 \
	> /dev/null 2> "$TMP/n.err"
sfp script -i "$TMP/n.data" > "$TMP/n.script" 2> /dev/null
set -- $(awk -v depth=$DEPTH -f "$AWK" "$TMP/n.script" | tail -1)
# (a sample taken while the recursion was still shallow fits in the copy
# and reaches _start: only those at the full depth must not)
if [ "${2:-0}" -ge 100 ] && [ "${8:-x}" = 0 ] && [ "$4" -le $(($2 / 50)) ] &&
   [ "$6" = 0 ] && ! grep -q 'deep stacks:' "$TMP/n.err"; then
	pass "--no-deep-stacks: none of $2 samples at the full depth reaches _start (the copy is too short)"
else
	fail "--no-deep-stacks: want every deep sample truncated, got: $*"
fi

# perf reads the file (the completed chains are the deferred records'
# user chains; perf 6.1 predates the deferred form, so the inline form).
if command -v perf > /dev/null; then
	sfp record -F 1000 --inline -o "$TMP/i.data" -- "$DEEP" const $DEPTH 600 \
		> /dev/null 2> "$TMP/i.err"
	if perf script -i "$TMP/i.data" > "$TMP/i.perf" 2> "$TMP/i.perr"; then
		set -- $(awk -v depth=$DEPTH -f "$AWK" "$TMP/i.perf" | tail -1)
		if [ "${2:-0}" -ge 200 ] && [ $(($4 * 100)) -ge $(($2 * 99)) ] &&
		   [ "$6" = 0 ]; then
			pass "perf script reads the completed chains: $4 of $2 reach _start, none wrong"
		else
			fail "perf script reads the completed chains: got $*"
		fi
	else
		fail "perf script on the --inline file: $(head -3 "$TMP/i.perr")"
	fi
else
	fail "perf is not installed (mk/deps.sh installs it)"
fi

# 2. Two deep paths alternating every 10 ms of CPU, rec_a/rec_b frames of
# the same size at the same addresses: a stack completed from the other
# path's outer frames (no seam check) shows rec_a under path_b or the
# reverse.  The recorder processes samples tens of ms after they were
# taken, so live reads often see the other path: they must be refused.
sfp record -F 1000 -o "$TMP/a.data" -- "$DEEP" alt $DEPTH 1500 10 \
	> /dev/null 2> "$TMP/a.err"
sfp script -i "$TMP/a.data" > "$TMP/a.script" 2> /dev/null
awk -v depth=$DEPTH -f "$AWK" "$TMP/a.script" > "$TMP/a.check"
set -- $(tail -1 "$TMP/a.check")
if [ "${2:-0}" -ge 500 ] && [ "$6" = 0 ] && [ "$4" -gt 0 ]; then
	pass "alternating deep paths: no stack with the other path's frames ($4 of $2 reach _start)"
else
	fail "alternating deep paths: want no wrong stack, got: $*"
	head -20 "$TMP/a.check" | sed 's/^/  /'
	grep -E 'deep stacks' "$TMP/a.err" | sed 's/^/  /'
fi

# Both completions were used on the alternating paths: the previous unwind
# within a phase, live memory at a phase's start.
line=$(grep 'deep stacks:' "$TMP/a.err")
set -- $(echo "$line" | sed 's/[^0-9 ]//g')
if [ "${2:-0}" -gt 0 ] && [ "${3:-0}" -gt 0 ]; then
	pass "alternating deep paths: completed from the previous unwind ($2) and from live memory ($3)"
else
	fail "alternating deep paths: want both ways used: $line"
fi

# A thread that exits: no crash, its unwind forgotten (ASan builds check
# the memory); many short-lived threads are the agent's and -a's case.
sfp record -F 1000 -o "$TMP/t.data" -- sh -c "for i in 1 2 3 4; do $DEEP const $DEPTH 100 & done; wait" \
	> /dev/null 2> "$TMP/t.err"
if grep -q 'deep stacks:' "$TMP/t.err"; then
	pass "four deep processes at once, exiting while recorded"
else
	fail "four deep processes at once: no deep-stacks line"
	tail -5 "$TMP/t.err" | sed 's/^/  /'
fi
