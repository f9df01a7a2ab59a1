#!/bin/sh
# record's command, run as a shell runs a job (docs/record.md, "The
# command"): in a process group of its own, so that --duration's SIGTERM
# and --kill-after's SIGKILL reach what it started too (a grandchild that
# ignores SIGTERM is not left behind); the terminal's foreground group
# while it runs, and the terminal ours again after; a command that cannot
# be started exits as the system's shell says (127 not found, 126 not
# executable); and FILE.old in the way is found before the command runs.
# checks: 10
. "$(dirname "$0")/test-subr.sh"

ok() { if [ "$2" = 1 ]; then pass "$1"; else fail "$1"; fi; }
show() { sed 's/^/  /' "$1" | head -6; }
# a pid that is gone, or a zombie nobody reaps (pid 1 here may not)
dead() {
	[ ! -e "/proc/$1/stat" ] ||
		[ "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = Z ]
}

# --- --duration ends the command's whole group ---------------------------
cat > "$TMP/gc.sh" <<'EOF'
#!/bin/sh
# a child that ignores SIGTERM, started by the command
sh -c 'trap "" TERM; echo $$ > "$0.pid"; while :; do sleep 0.2; done' "$0" &
wait
EOF
chmod +x "$TMP/gc.sh"
# Stopped by SIGINT once the grandchild has set its trap (no race with a
# loaded machine); --duration ends the command the same way (below).
"$SFPROF" record -q --kill-after 1 -o "$TMP/g.data" -- \
	"$TMP/gc.sh" > "$TMP/g.log" 2>&1 &
rpid=$!
i=0
while [ ! -s "$TMP/gc.sh.pid" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 0.2	# (the pid is written after the trap is set)
kill -INT $rpid
wait $rpid
rc=$?
gc=$(cat "$TMP/gc.sh.pid" 2>/dev/null)
if [ -z "$gc" ]; then
	fail "record: the command's child never started"
	show "$TMP/g.log"
else
	ok "record, stopped, --kill-after: a grandchild ignoring SIGTERM is killed, not orphaned" \
		$([ $rc = 0 ] && dead "$gc" && echo 1)
	dead "$gc" || { echo "  pid $gc still runs (exit $rc)"; kill -9 "$gc"; }
fi
"$SFPROF" record -q --duration 3 -o "$TMP/s.data" -- \
	sh -c 'sleep 60 & echo $! > "$0"; wait' "$TMP/sleep.pid" > "$TMP/s.log" 2>&1
rc=$?
sl=$(cat "$TMP/sleep.pid" 2>/dev/null)
ok "record --duration: a grandchild that takes SIGTERM ends with the command" \
	$([ $rc = 0 ] && [ -n "$sl" ] && dead "$sl" && echo 1)
[ -n "$sl" ] && ! dead "$sl" && kill -9 "$sl"

# --- on a terminal: the command is the foreground job ---------------------
# script(1) gives a pseudo-terminal whose foreground group is sfprof's;
# the command reads its own /proc stat: field 5 its group, 8 the
# terminal's foreground group.  After sfprof, the shell's next command
# must be in the foreground again.
if command -v script > /dev/null; then
	script -qec "'$SFPROF' record -q -o '$TMP/t.data' -- sh -c 'cat /proc/self/stat > \"\$0\"' '$TMP/in.stat'; cat /proc/self/stat > '$TMP/after.stat'" \
		/dev/null > "$TMP/t.log" 2>&1 < /dev/null
	fg_of() { sed 's/.*) //' "$1" | awk '{print ($3 == $6) ? "fg" : "bg"}'; }
	ok "record on a terminal: the command is the terminal's foreground group" \
		$([ -s "$TMP/in.stat" ] && [ "$(fg_of "$TMP/in.stat")" = fg ] && echo 1)
	ok "record on a terminal: the terminal is back in the foreground after" \
		$([ -s "$TMP/after.stat" ] && [ "$(fg_of "$TMP/after.stat")" = fg ] && echo 1)
	[ -s "$TMP/after.stat" ] || show "$TMP/t.log"
	# Ctrl-Z reaches the command (the foreground group); sfprof stops
	# with it, so that the job-control shell sees the job stopped; `fg`
	# continues both and the command ends.  A shell with `set -m` runs
	# the job (a session leader's own group would be orphaned, and the
	# kernel drops stop signals there).  The command waits for a file the
	# driver makes after the ^Z; a stopped command that nobody continues
	# never ends: timeout's 124.
	mkdir "$TMP/z"
	Z=$TMP/z
	cat > "$Z/drive.sh" <<EOF
i=0; while [ ! -s $Z/w.pid ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done
sleep 0.5
printf '\032'
sleep 1
touch $Z/go
i=0; while [ ! -e $Z/after.stat ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i+1)); done
EOF
	cat > "$Z/job.sh" <<EOF
set -m
'$SFPROF' record -q -o $Z/t.data -- sh -c 'echo \$\$ > $Z/w.pid; while [ ! -e $Z/go ]; do sleep 0.1; done; cat /proc/self/stat > $Z/in.stat'
echo "stopped \$?" > $Z/status
fg > /dev/null
echo "fg \$?" >> $Z/status
cat /proc/self/stat > $Z/after.stat
EOF
	sh "$Z/drive.sh" | timeout 60 script -qec "sh $Z/job.sh" /dev/null \
		> "$Z/log" 2>&1 3>&-
	rc=$?
	# a broken build leaves the command stopped and sfprof waiting on
	# it: end both (the command's group and its parent)
	w=$(cat "$Z/w.pid" 2>/dev/null)
	if [ $rc != 0 ] && [ -n "$w" ] && [ -e "/proc/$w/stat" ]; then
		rp=$(sed 's/.*) //' "/proc/$w/stat" | cut -d' ' -f2)
		kill -9 -- "-$w" 2>/dev/null
		[ "$rp" -gt 1 ] 2>/dev/null && kill -9 "$rp" 2>/dev/null
	fi
	tstp=148	# 128 + SIGTSTP (20 on Linux x86-64 and AArch64)
	ok "record on a terminal: Ctrl-Z stops sfprof with its command (exit $tstp seen), fg ends both" \
		$([ $rc = 0 ] && [ "$(cat "$Z/status" 2>/dev/null | tr '\n' ' ')" = "stopped $tstp fg 0 " ] &&
		  [ "$(fg_of "$Z/in.stat")" = fg ] && [ "$(fg_of "$Z/after.stat")" = fg ] && echo 1)
	[ $rc = 0 ] || { echo "  exit $rc"; cat "$Z/status" 2>/dev/null | sed 's/^/  /'; show "$Z/log"; }
else
	skip "record on a terminal" "script(1) not installed"
	skip "record on a terminal: terminal back" "script(1) not installed"
	skip "record on a terminal: Ctrl-Z" "script(1) not installed"
fi

# --- a command that cannot be started: the shell's status -----------------
echo 'echo hi' > "$TMP/noexec"
chmod 644 "$TMP/noexec"
mkdir "$TMP/adir"
shell_rc() { (cd "$TMP" && sh -c 'exec "$@"' sh "$@") > /dev/null 2>&1; echo $?; }
for cmd in /nonexistent/prog sfprof-no-such-command-here ./noexec ./adir; do
	want=$(shell_rc "$cmd")
	(cd "$TMP" && exec "$SFPROF" record -q -o "$TMP/x.data" -- "$cmd") \
		> "$TMP/x.log" 2>&1
	rc=$?
	case $want in
	126|127) ok "record -- $cmd: exit $rc, as sh's $want" \
			$([ $rc = "$want" ] && echo 1)
		 [ $rc = "$want" ] || show "$TMP/x.log" ;;
	*) fail "record -- $cmd: sh itself gave $want, not 126/127" ;;
	esac
done

# --- FILE.old in the way: said before the command runs ---------------------
echo precious > "$TMP/k.data"
mkdir "$TMP/k.data.old"
"$SFPROF" record -q -o "$TMP/k.data" -- sh -c 'echo ran > "$0"' "$TMP/ran" \
	> "$TMP/k.log" 2>&1
rc=$?
ok "record -o F with F.old a directory: exit 2 naming F.old, the command never ran, F kept" \
	$([ $rc = 2 ] && [ ! -e "$TMP/ran" ] &&
	  [ "$(cat "$TMP/k.data")" = precious ] &&
	  grep -q "$TMP/k.data.old is a directory" "$TMP/k.log" && echo 1)
[ $rc = 2 ] || { echo "  exit $rc"; show "$TMP/k.log"; }
