# Where sfprof's frame names differ from perf 6.1's on purpose (the rules
# of docs/perf-names.md), each differing line must be one of them, and
# sfprof's name must be the one an independent tool gives:
#
#  plt-stub   sfprof "NAME@plt+0xOFF", perf "[unknown]", "_init+0x..." or
#             another "...@plt+0x...": objdump -d labels the stub at the
#             address minus OFF "<NAME@plt>".
#  plt-header sfprof ".plt+0xOFF", perf "[unknown]" or "_init+0x...": the
#             address minus OFF is where readelf puts the .plt section,
#             and OFF is inside its 16-byte lazy-binding header.
#
# explain_names DIFFS: DIFFS holds perf-names.awk's DIFF lines; prints
# "EXPLAINED UNEXPLAINED RULE=COUNT,..." (the count of each rule that
# explained a pair, "-" for none) and each unexplained pair on stderr.
# Needs $TMP (scratch) and objdump / readelf.

# virtual address of file offset $2 in ELF $1 (its PT_LOAD segments)
file_off_to_vaddr() {
	readelf -lW "$1" 2>/dev/null | awk -v off=$((0x$2)) '
		$1 == "LOAD" {
			o = strtonum_($2); v = strtonum_($3); sz = strtonum_($5)
			if (off >= o && off < o + sz) { printf "%x\n", off - o + v; exit }
		}
		function strtonum_(h,   i, c, r) {
			sub(/^0x/, "", h); r = 0
			for (i = 1; i <= length(h); i++) {
				c = index("0123456789abcdef", substr(h, i, 1)) - 1
				r = r * 16 + c
			}
			return r
		}'
}

# objdump's PLT labels of ELF $1, "hexaddr name" lines, cached in $TMP
plt_labels() {
	f="$TMP/plt.$(printf '%s' "$1" | md5sum | cut -c1-12)"
	if [ ! -f "$f" ]; then
		objdump -d -j .plt -j .plt.sec -j .plt.got "$1" 2>/dev/null |
			sed -n 's/^0*\([0-9a-f][0-9a-f]*\) <\(.*\)>:$/\1 \2/p' > "$f"
	fi
	cat "$f"
}

# "hexaddr" of ELF $1's section $2
section_addr() {
	readelf -SW "$1" 2>/dev/null |
		awk -v s="$2" '{ sub(/^ *\[ *[0-9]+\] */, "") } $1 == s { sub(/^0*/, "", $3); print ($3 == "" ? "0" : $3); exit }'
}

# rule name for one pair, or nothing
name_rule() {
	p=$1 s=$2
	addr=${s%% *}
	dso=${s##*(}
	dso=${dso%)}
	pname=${p#* }
	pname=${pname% (*}
	sname=${s#* }
	sname=${sname% (*}
	[ "${p%% *}" = "$addr" ] && [ "${p##*(}" = "${s##*(}" ] || return 0
	[ -f "$dso" ] || return 0
	off=${sname##*+0x}
	base=${sname%+0x*}
	case "$pname" in
	"[unknown]"|_init+0x*|*@plt+0x*) ;;
	*) return 0 ;;
	esac
	va=$(file_off_to_vaddr "$dso" "$addr")
	[ -n "$va" ] || return 0
	start=$(printf '%x' $((0x$va - 0x$off)))
	case "$base" in
	.plt)
		case "$pname" in *@plt+0x*) return 0 ;; esac
		[ "$(section_addr "$dso" .plt)" = "$start" ] &&
			[ $((0x$off)) -lt 16 ] && echo plt-header
		;;
	*@plt)
		plt_labels "$dso" | grep -qxF "$start $base" && echo plt-stub
		;;
	esac
}

explain_names() {
	ok=0 bad=0 n_stub=0 n_header=0
	while IFS='	' read -r tag p s; do
		[ "$tag" = DIFF ] || continue
		r=$(name_rule "$p" "$s")
		case "$r" in
		plt-stub) n_stub=$((n_stub + 1)) ;;
		plt-header) n_header=$((n_header + 1)) ;;
		esac
		if [ -n "$r" ]; then
			ok=$((ok + 1))
		else
			bad=$((bad + 1))
			[ $bad -le 5 ] && printf '  perf:   %s\n  sfprof: %s\n' "$p" "$s" >&2
		fi
	done < "$1"
	echo "$ok $bad plt-stub=$n_stub,plt-header=$n_header"
}
