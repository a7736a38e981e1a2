# cython: language_level=3
"""wyrand (Wang Yi, public domain): a 64-bit generator whose state advances by one add.

Passes BigCrush and PractRand; its serial dependency is a single addition, so playouts
are not held up waiting for random numbers. A value type: copying the struct forks the
stream, which keeps search threads independent and every result reproducible.
"""
from libc.stdint cimport uint64_t, uint32_t
from cards cimport popcount, nth_card

cdef extern from *:
    """
    static inline unsigned long long csl_wymix(unsigned long long a, unsigned long long b) {
        unsigned __int128 r = (unsigned __int128)a * b;
        return (unsigned long long)(r >> 64) ^ (unsigned long long)r;
    }
    """
    unsigned long long csl_wymix(unsigned long long a, unsigned long long b) nogil

ctypedef struct Rng:
    uint64_t s

cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    """Start a stream from a seed. SplitMix64's finaliser (Stafford's mix 13) spreads every
    seed bit over the whole state, so nearby seeds (0, 1, 2, ...) give unrelated streams;
    wyrand's own mixing alone left their first outputs' low bits measurably related."""
    cdef uint64_t z = seed + 0x9e3779b97f4a7c15ULL
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL
    r.s = z ^ (z >> 31)

cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    r.s += 0x2d358dccaa6c78a5ULL
    return csl_wymix(r.s, r.s ^ 0x8bb84b93962eacc9ULL)

cdef inline uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil:
    """Exactly uniform integer in [0, n) for n >= 1 (Lemire 2019, no division bias)."""
    cdef uint32_t x = <uint32_t>(rng_next(r) >> 32)
    cdef uint64_t m = <uint64_t>x * n
    cdef uint32_t low = <uint32_t>m
    cdef uint32_t threshold
    if low < n:
        threshold = (<uint32_t>(-n)) % n
        while low < threshold:
            x = <uint32_t>(rng_next(r) >> 32)
            m = <uint64_t>x * n
            low = <uint32_t>m
    return <uint32_t>(m >> 32)

cdef extern from *:
    """
    #define csl_unlikely(x) __builtin_expect(!!(x), 0)
    """
    bint csl_unlikely(bint x) nogil

cdef inline uint32_t _rng_redo_bits(Rng* r, uint32_t m, uint32_t n, int bits) noexcept nogil:
    """The rare rejection step of rng_below_bits12/16 (kept out of line: the hot loops stay small)."""
    cdef uint32_t low = (1u << bits) - 1
    cdef uint32_t threshold = (1u << bits) % n
    while (m & low) < threshold:
        m = <uint32_t>(rng_next(r) >> (64 - bits)) * n
    return m

cdef inline uint32_t rng_below_bits12(Rng* r, uint32_t x, uint32_t n) noexcept nogil:
    """Exactly uniform integer in [0, n) for 1 <= n <= 4096, made from x, 12 uniform random bits
    that the caller sliced off one rng_next (one 64-bit draw serves five picks).

    Lemire's method on a 12-bit word: reject when the low 12 bits of x * n fall below
    2**12 mod n; only then (probability under n / 4096) is a fresh number drawn."""
    cdef uint32_t m = x * n
    if csl_unlikely((m & 0xFFF) < n):
        m = _rng_redo_bits(r, m, n, 12)
    return m >> 12

cdef inline uint32_t rng_below_bits16(Rng* r, uint32_t x, uint32_t n) noexcept nogil:
    """Exactly uniform integer in [0, n) for 1 <= n <= 65535, made from x, 16 uniform random
    bits sliced off one rng_next (one 64-bit draw serves four picks); as rng_below_bits12."""
    cdef uint32_t m = x * n
    if csl_unlikely((m & 0xFFFF) < n):
        m = _rng_redo_bits(r, m, n, 16)
    return m >> 16

cdef inline double rng_unit(Rng* r) noexcept nogil:
    """Uniform double in [0, 1)."""
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)

cdef inline int rng_pick_card(Rng* r, uint64_t mask) noexcept nogil:
    """A uniformly random set bit of a non-empty mask."""
    return nth_card(mask, rng_below(r, popcount(mask)))
