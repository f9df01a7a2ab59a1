/*
 * Three FDEs over one 64-byte function, written out by hand because gas
 * never makes FDEs that overlap: [f, f+64) with a push at f+1, then
 * [f+16, f+48) inside it and [f, f+32) at the same start, both empty.
 * The first one added wins (tests/unit/test-cfi-build.c).  Link with
 * -Wl,--no-eh-frame-hdr: ld refuses a search table over overlapping FDEs.
 */
	.text
	.globl	f
	.type	f, @function
f:
.Lf:
	.rept	64
	nop
	.endr
	.size	f, 64

	.section .eh_frame,"a",@progbits
.Lcie:
	.long	.Lcie_end - .Lcie_id	/* length */
.Lcie_id:
	.long	0			/* CIE id */
	.byte	1			/* version */
	.string	"zR"			/* augmentation */
	.uleb128 1			/* code alignment */
	.sleb128 -8			/* data alignment */
	.uleb128 16			/* return address column */
	.uleb128 1			/* augmentation data length */
	.byte	0x1b			/* FDE pointers: pcrel sdata4 */
	.byte	0x0c, 7, 8		/* DW_CFA_def_cfa rsp+8 */
	.byte	0x90, 1			/* DW_CFA_offset rip, cfa-8 */
	.balign	8, 0
.Lcie_end:

.Lfde1:
	.long	.Lfde1_end - .Lfde1_cie
.Lfde1_cie:
	.long	.Lfde1_cie - .Lcie
	.long	.Lf - .
	.long	64
	.uleb128 0
	.byte	0x41			/* DW_CFA_advance_loc 1 */
	.byte	0x0e, 16		/* DW_CFA_def_cfa_offset 16 */
	.balign	8, 0
.Lfde1_end:

.Lfde2:
	.long	.Lfde2_end - .Lfde2_cie
.Lfde2_cie:
	.long	.Lfde2_cie - .Lcie
	.long	.Lf + 16 - .
	.long	32
	.uleb128 0
	.balign	8, 0
.Lfde2_end:

.Lfde3:
	.long	.Lfde3_end - .Lfde3_cie
.Lfde3_cie:
	.long	.Lfde3_cie - .Lcie
	.long	.Lf - .
	.long	32
	.uleb128 0
	.balign	8, 0
.Lfde3_end:
	.long	0			/* terminator */
