// A kernel_config.h as `mixtd package` writes it into DIR/include/, for the
// zoo network `tiny`, so that hls/host builds and its --help runs in the
// normal build. Where the numbers come from:
//   mixtd solve tiny --device zc706 -o t.yaml && mixtd gen-rtl t.yaml -o t
//   t/mixtd_top.sv: "Input: 768 words per frame, 3 per beat; output: 10 words
//   per frame, 2 per beat"; `mixtd package t.yaml -o p`: p/data/weights.bin is
//   3,440 bytes in 12 segments; the exponents are sim::quantise(design, seed 1)'s
//   QNetwork input_exp and the out_exp of its output layer (fc).
#pragma once

#define MIXTD_KERNEL_NAME "mixtd_kernel"
#define MIXTD_MM2S_NAME "mixtd_mm2s"
#define MIXTD_S2MM_NAME "mixtd_s2mm"
#define MIXTD_MM2S_WEIGHTS_NAME "mixtd_mm2s_weights"
#define MIXTD_WEIGHT_BYTES 3440
#define MIXTD_WEIGHT_SEGMENTS 12

#define MIXTD_IN_WORDS_PER_FRAME 768
#define MIXTD_OUT_WORDS_PER_FRAME 10
#define MIXTD_IN_WORDS_PER_BEAT 3
#define MIXTD_OUT_WORDS_PER_BEAT 2
#define MIXTD_IN_TDATA_BITS 24
#define MIXTD_OUT_TDATA_BITS 16

#define MIXTD_IN_C 3
#define MIXTD_IN_H 16
#define MIXTD_IN_W 16
#define MIXTD_OUT_C 10
#define MIXTD_OUT_H 1
#define MIXTD_OUT_W 1

#define MIXTD_INPUT_EXP -5
#define MIXTD_OUTPUT_EXP -4
#define MIXTD_CLOCK_MHZ 200

#define MIXTD_REG_CTRL 0x00
#define MIXTD_REG_GIE 0x04
#define MIXTD_REG_IER 0x08
#define MIXTD_REG_ISR 0x0C
#define MIXTD_REG_ARG_FRAMES 0x10
#define MIXTD_REG_WEIGHT_STATUS 0x18
