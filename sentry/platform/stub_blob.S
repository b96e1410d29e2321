/* The stub binary (built from stub/), embedded in pvx; see stub_image.c. */
	.section .rodata
	.balign 16
	.globl pvx_stub_blob, pvx_stub_blob_end
pvx_stub_blob:
	.incbin "stub/pvx-stub"
pvx_stub_blob_end:
	.section .note.GNU-stack,"",@progbits
