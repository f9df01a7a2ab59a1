# SPDX-License-Identifier: MIT
# A C header of the field numbers of a .proto file, so that an encoder
# writing the wire format by hand (src/export/pprof.c) takes its numbers
# from the schema protobuf-c decodes with, not from a copy of its own.
# Field `memory_start = 2;` of message Mapping becomes
# MAPPING_MEMORY_START = 2.  Only what proto3 messages need: one level of
# messages, no nested types; a oneof only as a message's last member (the
# oneof's closing brace ends the message here: AnyValue's in OTLP).
BEGIN { print "/* Generated from " src " by mk/proto-fields.awk. */"; print "enum {" }
/^[ \t]*message[ \t]+[A-Za-z0-9_]+/ { msg = toupper($2); next }
/^[ \t]*}/ { msg = ""; next }
msg != "" && /=[ \t]*[0-9]+[ \t]*;/ {
	line = $0
	sub(/[ \t]*\/\/.*/, "", line)
	n = split(line, w, /[ \t=;]+/)
	num = ""; name = ""
	for (i = 1; i <= n; i++) {
		if (w[i] ~ /^[0-9]+$/) { num = w[i]; name = w[i - 1] }
	}
	if (num != "")
		printf "\t%s_%s = %s,\n", msg, toupper(name), num
}
END { print "};" }
