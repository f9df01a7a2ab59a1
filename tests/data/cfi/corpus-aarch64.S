/* SPDX-License-Identifier: MIT */
/*
 * AArch64 functions with hand-written CFI for the gas --gsframe
 * comparison (tests/unit/test-cfi-gas.c): the shapes compilers rarely
 * emit.  None of them is called; they only have to assemble and link.
 */
	.text

/* Frame record, then CFA on FP; PAC-signed RA (A key) around it. */
	.globl	a64_fp_frame
	.type	a64_fp_frame, %function
a64_fp_frame:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov	x29, sp
	.cfi_def_cfa_register 29
	nop
	ldp	x29, x30, [sp], 32
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	a64_fp_frame, .-a64_fp_frame

/* Early return: remember/restore_state around an epilogue, with the sign
 * state flipped inside (restore_state brings the signed state back). */
	.globl	a64_remember
	.type	a64_remember, %function
a64_remember:
	.cfi_startproc
	paciasp
	.cfi_negate_ra_state
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	cbz	x0, 1f
	.cfi_remember_state
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	ret
1:
	.cfi_restore_state
	nop
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	autiasp
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	a64_remember, .-a64_remember

/* Saves repeated to the same slot, callee-saved pairs that do not count. */
	.globl	a64_repeat
	.type	a64_repeat, %function
a64_repeat:
	.cfi_startproc
	stp	x29, x30, [sp, -48]!
	.cfi_def_cfa_offset 48
	.cfi_offset 29, -48
	.cfi_offset 30, -40
	stp	x19, x20, [sp, 16]
	.cfi_offset 19, -32
	.cfi_offset 20, -24
	nop
	.cfi_offset 30, -40
	nop
	ldp	x19, x20, [sp, 16]
	.cfi_restore 20
	.cfi_restore 19
	ldp	x29, x30, [sp], 48
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	a64_repeat, .-a64_repeat

/* FP saved without the RA: no SFrame form (gas skips the function). */
	.globl	a64_fp_no_ra
	.type	a64_fp_no_ra, %function
a64_fp_no_ra:
	.cfi_startproc
	str	x29, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	ldr	x29, [sp], 16
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	a64_fp_no_ra, .-a64_fp_no_ra

/* RA copied into another register: no SFrame form. */
	.globl	a64_ra_in_reg
	.type	a64_ra_in_reg, %function
a64_ra_in_reg:
	.cfi_startproc
	mov	x9, x30
	.cfi_register 30, 9
	nop
	mov	x30, x9
	.cfi_restore 30
	ret
	.cfi_endproc
	.size	a64_ra_in_reg, .-a64_ra_in_reg

/* RA saved alone (no frame record), below a big frame: 2-byte offsets. */
	.globl	a64_large_frame
	.type	a64_large_frame, %function
a64_large_frame:
	.cfi_startproc
	sub	sp, sp, #4096
	.cfi_def_cfa_offset 4096
	str	x30, [sp, 8]
	.cfi_offset 30, -4088
	sub	sp, sp, #65536
	.cfi_def_cfa_offset 69632
	nop
	add	sp, sp, #65536
	.cfi_def_cfa_offset 4096
	ldr	x30, [sp, 8]
	.cfi_restore 30
	add	sp, sp, #4096
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	a64_large_frame, .-a64_large_frame

/* A body over 256 bytes: FRE start offsets need 2 bytes. */
	.globl	a64_long
	.type	a64_long, %function
a64_long:
	.cfi_startproc
	stp	x29, x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 29, -16
	.cfi_offset 30, -8
	.rept	100
	nop
	.endr
	ldp	x29, x30, [sp], 16
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	a64_long, .-a64_long

/* The sign state toggled twice with nothing between (back to unsigned). */
	.globl	a64_double_negate
	.type	a64_double_negate, %function
a64_double_negate:
	.cfi_startproc
	nop
	.cfi_negate_ra_state
	.cfi_negate_ra_state
	nop
	ret
	.cfi_endproc
	.size	a64_double_negate, .-a64_double_negate

/* CFA on x9 (not SP/FP): gas 2.40 records it as SP; sfprof skips it. */
	.globl	a64_cfa_x9
	.type	a64_cfa_x9, %function
a64_cfa_x9:
	.cfi_startproc
	mov	x9, sp
	.cfi_def_cfa_register 9
	nop
	.cfi_def_cfa_register 31
	ret
	.cfi_endproc
	.size	a64_cfa_x9, .-a64_cfa_x9

	.section .note.GNU-stack,"",%progbits
