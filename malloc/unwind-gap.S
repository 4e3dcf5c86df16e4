/* SPDX-License-Identifier: MIT */
/*
 * One byte of zero-fill, read-only, linked into libuslab.so alone: the
 * input section that malloc/libuslab-unwind.lds stretches to the next
 * 64 KiB boundary between .rodata and the unwind tables. Being NOBITS and
 * not writable, it ends the read-only data's segment there without
 * making it writable, and the unwind tables get a segment (a mapping) of
 * their own (docs/page_alloc.md, "Fixed cost of a small program").
 */
	.section .uslab_unwind_gap, "a", @nobits
	.skip 1
	.section .note.GNU-stack, "", @progbits
