/* Stand-ins for the export functions of IREE's CPU executables
   (iree_hal_executable_dispatch_v0_t: int fn(environment, dispatch_state,
   workgroup_state)), which IREE's newest local-task driver calls directly for
   each workgroup. dispatch_thunks.cpp hands an executable an array of these in
   place of its own function table.

   A dispatch function's arguments do not say which export it is, so the
   thunks are told apart by their place: thunk i, 16 bytes at
   gtap_hal_dispatch_thunks + 16 * i, loads i into eax and jumps to
   gtap_hal_dispatch_entry, which moves the three arguments one register up,
   puts i first, and jumps to gtap_hal_dispatch_thunk(i, environment,
   dispatch_state, workgroup_state). To that function it is an ordinary call
   from the driver (the driver's return address is on top of the stack), and
   its int result goes straight back to the driver. eax and rcx are
   caller-saved and carry no argument of a three-argument function. */
    .text

    .globl  gtap_hal_dispatch_thunks
    .hidden gtap_hal_dispatch_thunks
    .globl  gtap_hal_dispatch_thunks_end
    .hidden gtap_hal_dispatch_thunks_end
    .p2align 4
gtap_hal_dispatch_thunks:
    .set    thunk_index, 0
    .rept   8192                    /* kDispatchThunks in dispatch_thunks.cpp */
    .byte   0xb8                    /* movl $thunk_index, %eax */
    .long   thunk_index
    .byte   0xe9                    /* jmp gtap_hal_dispatch_entry (rel32: every thunk the same size) */
    .long   gtap_hal_dispatch_entry - (. + 4)
    .fill   6, 1, 0xcc
    .set    thunk_index, thunk_index + 1
    .endr
gtap_hal_dispatch_thunks_end:

    .type   gtap_hal_dispatch_entry, @function
gtap_hal_dispatch_entry:
    .cfi_startproc
    movq    %rdx, %rcx              /* workgroup_state */
    movq    %rsi, %rdx              /* dispatch_state */
    movq    %rdi, %rsi              /* environment */
    movl    %eax, %edi              /* the thunk's index */
    jmp     gtap_hal_dispatch_thunk
    .cfi_endproc
    .size   gtap_hal_dispatch_entry, .-gtap_hal_dispatch_entry

    .section .note.GNU-stack,"",@progbits
