package msl

import "fmt"

// intPow writes the statements computing dst = x^y for integers, by
// repeated squaring in 64-bit unsigned arithmetic: the low bits of the
// product are those of T's wrapping product, as the CPU reference's, for
// every compute type (int, uint, long), without signed overflow. A
// negative exponent, an error on the CPU, gives 1 (a kernel cannot fail).
func intPow(dst, ct, x, y string) string {
	return fmt.Sprintf(`    %[1]s %[2]s;
    {
        ulong pb = ulong(long(%[3]s)), pr = 1ul;
        for (long pe = long(%[4]s); pe > 0l; pe >>= 1) {
            if ((pe & 1l) != 0l) { pr *= pb; }
            pb *= pb;
        }
        %[2]s = %[1]s(long(pr));
    }
`, ct, dst, x, y)
}
