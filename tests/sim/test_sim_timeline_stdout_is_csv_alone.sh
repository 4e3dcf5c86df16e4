#!/usr/bin/env bash
# uslab sim --timeline -: the CSV owns standard output (uslab(1): "-" as a
# file to write is standard output), so `> t.csv` is a CSV file: its header
# first, then one row a sample, every row as many fields as the header;
# the report goes to standard error. Before, the 75 lines of the report
# came first on standard output, then the CSV. --result too.
. "$(dirname "$0")/../lib.sh"
"$U" gen rpmalloc -t 2 -b 500 -l 20 -o "$T/t.ustr" 2>/dev/null || fail "gen"
for extra in "" "--result"; do
	"$U" sim $extra --timeline - "$T/t.ustr" > "$T/t.csv" 2> "$T/err" || fail "sim $extra --timeline -: $(cat "$T/err")"
	head -1 "$T/t.csv" | grep -q '^time_ns,events,held_bytes,' ||
		fail "sim $extra --timeline -: the first line is not the CSV header: $(head -1 "$T/t.csv")"
	awk -F, 'NR == 1 { n = NF } NF != n || (NR > 1 && $1 !~ /^[0-9]+$/) { print NR ": " $0; exit 1 }' "$T/t.csv" ||
		fail "sim $extra --timeline -: not a CSV: line $(awk -F, 'NR == 1 { n = NF } NF != n { print NR; exit }' "$T/t.csv")"
	[ "$(wc -l < "$T/t.csv")" -gt 10 ] || fail "sim $extra --timeline -: $(wc -l < "$T/t.csv") lines"
	if [ -z "$extra" ]; then
		grep -q "^per cache" "$T/err" || fail "sim --timeline -: the report is not on stderr"
	else
		grep -q "res_peak=" "$T/err" || fail "sim --result --timeline -: the result line is not on stderr"
	fi
done
echo "sim --timeline -: standard output holds the CSV alone, the report on stderr"
