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
    r.s = csl_wymix(seed ^ 0x2d358dccaa6c78a5ULL, 0x8bb84b93962eacc9ULL)

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

cdef inline double rng_unit(Rng* r) noexcept nogil:
    """Uniform double in [0, 1)."""
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)

cdef inline int rng_pick_card(Rng* r, uint64_t mask) noexcept nogil:
    """A uniformly random set bit of a non-empty mask."""
    return nth_card(mask, rng_below(r, popcount(mask)))
