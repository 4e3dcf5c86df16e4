#!/usr/bin/env bash
# The library's initialised writable data (.data) stays small: it is
# file-backed, and the kernel maps it into every process 64 KiB at a time
# around the first touch (fault-around), so each large initialised object
# there is RSS a program pays for nothing. The bypass cache's 512 KiB of
# zero headers once sat in .data for one initialised name field: a process
# holding 1 MiB paid 1,172 KiB of RSS over glibc's (rss_tax; 880 after).
# What may be zero lives in .bss (untouched pages cost nothing, read ones
# are the zero page).
. "$(dirname "$0")/../lib.sh"
[ -f "$LIBUSLAB" ] || fail "$LIBUSLAB not built"
limit=$((64 * 1024))
hex=$(readelf -S -W "$LIBUSLAB" | sed -n 's/^ *\[ *[0-9]*\] \.data  *PROGBITS  *[0-9a-f]*  *[0-9a-f]*  *\([0-9a-f]*\) .*/\1/p')
[ -n "$hex" ] || fail "no .data section in $LIBUSLAB: $(readelf -S -W "$LIBUSLAB" | grep -F .data)"
size=$((16#$hex))
if [ "$size" -gt "$limit" ]; then
	big=$(nm -S --size-sort "$LIBUSLAB" | awk '$3 ~ /^[dD]$/ { print $4 " (0x" $2 " bytes)" }' | tail -3 | tr '\n' ' ')
	fail ".data is $size bytes, over $limit: the largest objects in it: $big"
fi
echo ".data of libuslab.so: $size bytes (at most $limit)"
