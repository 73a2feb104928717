/* ce_arith.c - the arithmetic helpers clang calls on Windows on ARM, which
 * no library here provides (Debian ships no compiler-rt builtins for
 * armv7-windows, and CE keeps its own in the floating point run-time).
 *
 * __rt_udiv64 and __rt_sdiv64 take the divisor first and return the
 * quotient; the compiler has already trapped a zero divisor. __rt_udiv
 * also takes the divisor first and returns the quotient in r0 and the
 * remainder in r1 (the compiler reads either): a 64-bit value with the
 * quotient in its low half does that under the ARM calling convention. */
#include <stdint.h>

uint64_t __rt_udiv(uint32_t divisor, uint32_t dividend);
uint64_t __rt_udiv64(uint64_t divisor, uint64_t dividend);
int64_t __rt_sdiv64(int64_t divisor, int64_t dividend);
double __u64tod(uint64_t v);

/* Shift and subtract, one quotient bit per step: no division instruction
 * or helper may be used to implement division. */
uint64_t __rt_udiv64(uint64_t divisor, uint64_t dividend) {
  uint64_t quotient = 0, rest = 0;
  int bit;
  for (bit = 63; bit >= 0; bit--) {
    rest = rest << 1 | (dividend >> bit & 1u);
    if (rest >= divisor) {
      rest -= divisor;
      quotient |= (uint64_t)1 << bit;
    }
  }
  return quotient;
}

uint64_t __rt_udiv(uint32_t divisor, uint32_t dividend) {
  uint32_t quotient = (uint32_t)__rt_udiv64(divisor, dividend);
  uint32_t rest = dividend - quotient * divisor;
  return (uint64_t)rest << 32 | quotient;
}

int64_t __rt_sdiv64(int64_t divisor, int64_t dividend) {
  uint64_t a = dividend < 0 ? 0 - (uint64_t)dividend : (uint64_t)dividend;
  uint64_t b = divisor < 0 ? 0 - (uint64_t)divisor : (uint64_t)divisor;
  uint64_t q = __rt_udiv64(b, a);
  return (dividend < 0) != (divisor < 0) ? (int64_t)(0 - q) : (int64_t)q;
}

/* Exact below 2^53; above, the sum of two exact halves rounds once more
 * than a direct conversion would (counters here never get that large). */
double __u64tod(uint64_t v) {
  return (double)(uint32_t)(v >> 32) * 4294967296.0 + (double)(uint32_t)v;
}
