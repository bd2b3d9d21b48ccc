/* The IREE HAL front end's way into and out of a hooked vtable slot, for any
   signature: nothing of the call's arguments is copied or moved.

   A slot's thunk loads its Slot* into r11 and jumps to gtap_hal_enter_stub,
   with the caller's return address on top of the stack and the arguments in
   registers and on the stack above it, exactly as the caller left them.
   The stub saves the argument registers, asks gtap_hal_enter(slot, &return
   address, saved registers) for the function to run (the original), which
   may read the call's arguments from them and from the stack; it restores the registers
   and jumps to it. gtap_hal_enter may have replaced the return address with
   gtap_hal_exit_stub (keeping the real one on its own per-thread stack), so
   the original returns there; the exit stub keeps the return registers,
   asks gtap_hal_exit(rax) for the real return address, and returns to it. */
    .text

    .globl  gtap_hal_enter_stub
    .hidden gtap_hal_enter_stub
    .type   gtap_hal_enter_stub, @function
gtap_hal_enter_stub:
    .cfi_startproc
    /* rsp is 8 mod 16 here (just after a call): 200 bytes make it 0 mod 16. */
    subq    $200, %rsp
    .cfi_adjust_cfa_offset 200
    movaps  %xmm0, 0(%rsp)
    movaps  %xmm1, 16(%rsp)
    movaps  %xmm2, 32(%rsp)
    movaps  %xmm3, 48(%rsp)
    movaps  %xmm4, 64(%rsp)
    movaps  %xmm5, 80(%rsp)
    movaps  %xmm6, 96(%rsp)
    movaps  %xmm7, 112(%rsp)
    movq    %rdi, 128(%rsp)
    movq    %rsi, 136(%rsp)
    movq    %rdx, 144(%rsp)
    movq    %rcx, 152(%rsp)
    movq    %r8, 160(%rsp)
    movq    %r9, 168(%rsp)
    movq    %rax, 176(%rsp)
    movq    %r10, 184(%rsp)
    movq    %r11, %rdi              /* the slot */
    leaq    200(%rsp), %rsi         /* where the return address is (the stack arguments follow it) */
    movq    %rsp, %rdx              /* the saved registers: xmm0-7, then rdi rsi rdx rcx r8 r9 rax r10 */
    call    gtap_hal_enter
    movq    %rax, %r11              /* the function to run */
    movaps  0(%rsp), %xmm0
    movaps  16(%rsp), %xmm1
    movaps  32(%rsp), %xmm2
    movaps  48(%rsp), %xmm3
    movaps  64(%rsp), %xmm4
    movaps  80(%rsp), %xmm5
    movaps  96(%rsp), %xmm6
    movaps  112(%rsp), %xmm7
    movq    128(%rsp), %rdi
    movq    136(%rsp), %rsi
    movq    144(%rsp), %rdx
    movq    152(%rsp), %rcx
    movq    160(%rsp), %r8
    movq    168(%rsp), %r9
    movq    176(%rsp), %rax
    movq    184(%rsp), %r10
    addq    $200, %rsp
    .cfi_adjust_cfa_offset -200
    jmp     *%r11
    .cfi_endproc
    .size   gtap_hal_enter_stub, .-gtap_hal_enter_stub

    .globl  gtap_hal_exit_stub
    .hidden gtap_hal_exit_stub
    .type   gtap_hal_exit_stub, @function
gtap_hal_exit_stub:
    /* Reached by the original's return: rsp is 0 mod 16 (where the caller's
       call left it). rax:rdx and xmm0:xmm1 may hold the result. */
    subq    $48, %rsp
    movaps  %xmm0, 0(%rsp)
    movaps  %xmm1, 16(%rsp)
    movq    %rax, 32(%rsp)
    movq    %rdx, 40(%rsp)
    movq    %rax, %rdi              /* the result, for the record */
    call    gtap_hal_exit
    movq    %rax, %r11              /* the caller's return address */
    movaps  0(%rsp), %xmm0
    movaps  16(%rsp), %xmm1
    movq    32(%rsp), %rax
    movq    40(%rsp), %rdx
    addq    $48, %rsp
    jmp     *%r11
    .size   gtap_hal_exit_stub, .-gtap_hal_exit_stub

    .section .note.GNU-stack,"",@progbits
