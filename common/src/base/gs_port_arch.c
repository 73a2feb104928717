/* gs_port_arch.c - the CPU the program was built for, from the compiler's
 * own macros; the same on every operating system, so one file serves the
 * port layer of all of them. */
#include "gs_port.h"

const char *gs_port_architecture(void) {
#if defined(__x86_64__) || defined(_M_X64) || defined(_M_AMD64)
  return "x86_64";
#elif defined(__i386__) || defined(_M_IX86)
  return "x86";
#elif defined(__aarch64__) || defined(_M_ARM64)
  return "arm64";
#elif defined(__ARM_ARCH_5TE__) || defined(__ARM_ARCH_5TEJ__)
  return "armv5te";
#elif defined(__ARM_ARCH_6__) || defined(__ARM_ARCH_6K__) || defined(__ARM_ARCH_6Z__) || \
      defined(__ARM_ARCH_6ZK__)
  return "armv6";
#elif defined(__ARM_ARCH_7A__) || defined(__ARM_ARCH_7__)
  return "armv7";
#elif defined(__arm__) || defined(_M_ARM)
  return "arm";
#elif defined(__mips__) || defined(_M_MRX000)
  return "mips";
#elif defined(__SH4__) || defined(_M_SH)
  return "sh";
#elif defined(__powerpc64__)
  return "ppc64";
#elif defined(__powerpc__) || defined(_M_PPC)
  return "ppc";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__riscv)
  return "riscv32";
#else
  return "unknown";
#endif
}
