# exp over a block of doubles, four at a time, giving the very numbers libm's
# scalar exp gives. glibc (2.28 on) computes exp(x) as 2^(k/128) * e^r with a 128-entry
# table and a degree-5 polynomial (the algorithm of ARM's optimized-routines); on a CPU
# with FMA its compiled form is a fixed sequence of fused and plain operations, and the
# same sequence on vector lanes rounds every lane as the scalar code does. Lanes outside
# the sequence's range (|x| >= 512, NaN, infinities) go to libm's exp; |x| < 2^-54 gives
# 1 + x, as libm does. The table is made here from its definition (2^(k/128) = H (1 + T),
# at 80 digits), and at import a check against libm on a spread of arguments turns the
# vector path off where this libm is another (musl, an older glibc, no FMA): the numbers
# stay libm's everywhere, only the speed differs. tests/test_fastexp.py holds them equal.

cdef extern from *:
    """
    #include <immintrin.h>
    #include <math.h>
    #include <stdint.h>
    #include <string.h>
    static uint64_t csl_exp_tab[256];   /* tab[2k]: T[k]'s bits; tab[2k+1]: H[k]'s bits - (k << 45) */
    static int csl_exp_vector = 0;      /* 1 once the import check found the vector lanes equal to libm */

    #if defined(__AVX2__) && defined(__FMA__)
    #define CSL_EXP_LANES 1
    static inline double csl_double(uint64_t b) { double x; memcpy(&x, &b, 8); return x; }
    #define CSL_EXP_INV_LN2_N csl_double(0x40671547652b82feULL)
    #define CSL_EXP_NEG_LN2_HI_N csl_double(0xbf762e42fefa0000ULL)
    #define CSL_EXP_NEG_LN2_LO_N csl_double(0xbd0cf79abc9e3b3aULL)
    #define CSL_EXP_C2 csl_double(0x3fdffffffffffdbdULL)
    #define CSL_EXP_C3 csl_double(0x3fc555555555543cULL)
    #define CSL_EXP_C4 csl_double(0x3fa55555cf172b91ULL)
    #define CSL_EXP_C5 csl_double(0x3f81111167a4d017ULL)
    #define CSL_EXP_SHIFT csl_double(0x4338000000000000ULL)

    /* exp on four lanes; *redo: the lanes libm's scalar exp must redo (out of range). */
    static inline __m256d csl_exp4(__m256d x, int* redo) {
        __m256i top = _mm256_and_si256(_mm256_srli_epi64(_mm256_castpd_si256(x), 52), _mm256_set1_epi64x(0x7ff));
        __m256i tiny = _mm256_cmpgt_epi64(_mm256_set1_epi64x(0x3c9), top);
        __m256i big = _mm256_cmpgt_epi64(top, _mm256_set1_epi64x(0x407));
        __m256d kd = _mm256_fmadd_pd(x, _mm256_set1_pd(CSL_EXP_INV_LN2_N), _mm256_set1_pd(CSL_EXP_SHIFT));
        __m256i ki = _mm256_castpd_si256(kd);
        kd = _mm256_sub_pd(kd, _mm256_set1_pd(CSL_EXP_SHIFT));
        __m256d r = _mm256_fmadd_pd(kd, _mm256_set1_pd(CSL_EXP_NEG_LN2_HI_N), x);
        r = _mm256_fmadd_pd(kd, _mm256_set1_pd(CSL_EXP_NEG_LN2_LO_N), r);
        __m256i idx = _mm256_slli_epi64(_mm256_and_si256(ki, _mm256_set1_epi64x(0x7f)), 1);
        __m256d tail = _mm256_castsi256_pd(_mm256_i64gather_epi64((const long long*)csl_exp_tab, idx, 8));
        __m256i sbits = _mm256_add_epi64(_mm256_i64gather_epi64((const long long*)(csl_exp_tab + 1), idx, 8),
                                         _mm256_slli_epi64(ki, 45));
        __m256d t1 = _mm256_fmadd_pd(r, _mm256_set1_pd(CSL_EXP_C3), _mm256_set1_pd(CSL_EXP_C2));
        __m256d rt = _mm256_add_pd(r, tail);
        __m256d r2 = _mm256_mul_pd(r, r);
        __m256d t2 = _mm256_fmadd_pd(r, _mm256_set1_pd(CSL_EXP_C5), _mm256_set1_pd(CSL_EXP_C4));
        __m256d tmp = _mm256_fmadd_pd(t1, r2, rt);
        tmp = _mm256_fmadd_pd(_mm256_mul_pd(r2, r2), t2, tmp);
        __m256d scale = _mm256_castsi256_pd(sbits);
        __m256d y = _mm256_fmadd_pd(scale, tmp, scale);
        *redo = _mm256_movemask_pd(_mm256_castsi256_pd(big));
        return _mm256_blendv_pd(y, _mm256_add_pd(x, _mm256_set1_pd(1.0)), _mm256_castsi256_pd(tiny));
    }
    #endif

    /* x[j] = exp(x[j]) for j < n, libm's numbers. */
    static inline void csl_exp_block(double* x, int n) {
        int j = 0;
    #ifdef CSL_EXP_LANES
        double in[4], out[4];
        int redo, l;
        if (csl_exp_vector) {
            for (; j + 4 <= n; j += 4) {
                _mm256_storeu_pd(out, csl_exp4(_mm256_loadu_pd(x + j), &redo));
                if (redo) {
                    memcpy(in, x + j, sizeof(in));
                    for (l = 0; l < 4; l++)
                        if ((redo >> l) & 1) out[l] = exp(in[l]);
                }
                memcpy(x + j, out, sizeof(out));
            }
        }
    #endif
        for (; j < n; j++) x[j] = exp(x[j]);
    }

    /* x[j] = exp(x[j] - top) for j < n, top the largest x[j] (at least -1e300): a row of
       log-weights turned in place into weights scaled by the largest. */
    static inline void csl_scaled_row(double* x, int n) {
        double top = -1e300;
        int j = 0;
    #ifdef CSL_EXP_LANES
        double lanes[4];
        int l;
        if (n >= 4) {
            __m256d best = _mm256_set1_pd(-1e300);
            for (; j + 4 <= n; j += 4) best = _mm256_max_pd(best, _mm256_loadu_pd(x + j));
            _mm256_storeu_pd(lanes, best);
            for (l = 0; l < 4; l++) if (lanes[l] > top) top = lanes[l];
        }
    #endif
        for (; j < n; j++) if (x[j] > top) top = x[j];
        for (j = 0; j < n; j++) x[j] -= top;
        csl_exp_block(x, n);
    }

    static inline int csl_exp_lanes_built(void) {
    #ifdef CSL_EXP_LANES
        return 1;
    #else
        return 0;
    #endif
    }
    """
    uint64_t csl_exp_tab[256]
    int csl_exp_vector
    void csl_exp_block(double* x, int n) nogil
    void csl_scaled_row(double* x, int n) nogil
    int csl_exp_lanes_built() nogil


def _fill_exp_table():
    """csl_exp_tab from its definition: 2^(k/128) = H[k] (1 + T[k]), H the nearest double."""
    from decimal import Decimal, localcontext
    import struct
    with localcontext() as ctx:
        ctx.prec = 80
        ln2 = Decimal(2).ln()
        for k in range(128):
            v = (ln2 * k / 128).exp()
            high = float(v)
            tail = float(v / Decimal(high) - 1)
            csl_exp_tab[2 * k] = struct.unpack("<Q", struct.pack("<d", tail))[0]
            csl_exp_tab[2 * k + 1] = (struct.unpack("<Q", struct.pack("<d", high))[0] - (k << 45)) % (1 << 64)


def _exp_check_arguments():
    """Arguments the import check compares: a dense spread over the mixture's range, the
    edges of the vector lanes' range, and tiny and special values."""
    import math
    import random
    rng = random.Random(7)
    xs = [-745.5, -709.9, -512.0, -511.999, -100.25, -1.0, -0.5, 0.0, -0.0, 1e-300, -1e-17, 2.0 ** -54,
          -(2.0 ** -54), 2.0 ** -53, 1.0, 3.5, 511.9, 700.0, math.inf, -math.inf, math.nan]
    xs += [rng.uniform(-40.0, 0.0) for _ in range(16000)]
    xs += [-rng.expovariate(0.05) for _ in range(2000)]
    xs += [rng.uniform(-1e-6, 1e-6) for _ in range(100)]
    return xs


def _exp_check():
    """Turn the vector lanes on when they give libm's exp on every check argument."""
    global csl_exp_vector
    import struct
    cdef double buf[4]
    cdef int i, j
    if not csl_exp_lanes_built():
        return
    xs = _exp_check_arguments()
    csl_exp_vector = 1
    for i in range(0, len(xs) - 3, 4):
        for j in range(4):
            buf[j] = xs[i + j]
        csl_exp_block(buf, 4)
        for j in range(4):
            want = _libm_exp(xs[i + j])
            if struct.pack("<d", buf[j]) != struct.pack("<d", want):
                csl_exp_vector = 0
                return


cdef double _libm_exp(double x) noexcept:
    return exp(x)


def exp_block(values):
    """exp of each value through the block path (tests compare it with libm's exp)."""
    cdef int n = len(values), i
    cdef double* buf = <double*>malloc(max(n, 1) * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    try:
        for i in range(n):
            buf[i] = values[i]
        csl_exp_block(buf, n)
        return [buf[i] for i in range(n)]
    finally:
        free(buf)


def exp_lanes_in_use():
    """Whether csl_exp_block runs on vector lanes here (built with AVX2 and FMA, and equal
    to this libm's exp on the import check)."""
    return bool(csl_exp_vector)


def exp_lanes_built():
    """Whether this build has the vector lanes (compiled for a CPU with AVX2 and FMA)."""
    return bool(csl_exp_lanes_built())


_fill_exp_table()
_exp_check()
