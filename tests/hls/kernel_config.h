// The test's stand-in for the kernel_config.h that the U250 package generator
// writes: TDATA widths that divide neither 512 nor each other, the movers'
// least convenient case.
#ifndef MIXTD_TEST_KERNEL_CONFIG_H
#define MIXTD_TEST_KERNEL_CONFIG_H

#define MIXTD_IN_TDATA_BITS 24
#define MIXTD_OUT_TDATA_BITS 80

#endif  // MIXTD_TEST_KERNEL_CONFIG_H
