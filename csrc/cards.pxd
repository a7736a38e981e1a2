# cython: language_level=3
"""Rain cards as bits of a 64-bit mask.

Card index = colour * 12 + (rank - 1); colour 0 = blue (trump), 1 = red, 2 = green.
So blue 1..12 are bits 0..11, red bits 12..23, green bits 24..35, and within a colour
a higher bit is a higher rank: the best card of a set is its highest bit.
"""
from libc.stdint cimport uint64_t, uint32_t

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil
    int __builtin_clzll(unsigned long long) nogil

cdef extern from *:
    """
    #if defined(__BMI2__)
    #include <immintrin.h>
    static inline int csl_select_bit(unsigned long long x, int n) {
        return __builtin_ctzll(_pdep_u64(1ULL << n, x));
    }
    static inline unsigned long long csl_select_mask(unsigned long long x, int n) {
        return _pdep_u64(1ULL << n, x);
    }
    static inline unsigned long long csl_select_many(unsigned long long x, unsigned long long positions) {
        return _pdep_u64(positions, x);
    }
    #else
    static inline int csl_select_bit(unsigned long long x, int n) {
        while (n-- > 0) x &= x - 1;
        return __builtin_ctzll(x);
    }
    static inline unsigned long long csl_select_mask(unsigned long long x, int n) {
        while (n-- > 0) x &= x - 1;
        return x & -x;
    }
    static inline unsigned long long csl_select_many(unsigned long long x, unsigned long long positions) {
        unsigned long long out = 0;
        for (; x; x &= x - 1, positions >>= 1)
            if (positions & 1) out |= x & -x;
        return out;
    }
    #endif
    """
    int csl_select_bit(unsigned long long x, int n) nogil
    unsigned long long csl_select_mask(unsigned long long x, int n) nogil
    unsigned long long csl_select_many(unsigned long long x, unsigned long long positions) nogil

cdef enum:
    N_COLOURS = 3
    MAX_RANK = 12
    N_RAIN = 36
    BLUE = 0
    RED = 1
    GREEN = 2


cdef inline uint64_t colour_mask(int colour) noexcept nogil:
    return (<uint64_t>0xFFF) << (12 * colour)

cdef inline int card_colour(int card) noexcept nogil:
    return card // 12

cdef inline int card_rank(int card) noexcept nogil:
    return card % 12 + 1

cdef inline uint64_t bit(int card) noexcept nogil:
    return (<uint64_t>1) << card

cdef inline int popcount(uint64_t x) noexcept nogil:
    return __builtin_popcountll(x)

cdef inline int lowest_card(uint64_t x) noexcept nogil:
    """Index of the lowest set bit; x must be non-zero."""
    return __builtin_ctzll(x)

cdef inline int highest_card(uint64_t x) noexcept nogil:
    """Index of the highest set bit; x must be non-zero."""
    return 63 - __builtin_clzll(x)

cdef inline int nth_card(uint64_t x, int n) noexcept nogil:
    """Index of the n-th lowest set bit (n counts from 0); x must have more than n bits."""
    return csl_select_bit(x, n)

cdef inline uint64_t nth_bit(uint64_t x, int n) noexcept nogil:
    """The n-th lowest set bit of x as a one-bit mask (n counts from 0); x must have more than n bits."""
    return csl_select_mask(x, n)

cdef inline uint64_t nth_bits(uint64_t x, uint64_t positions) noexcept nogil:
    """The set bits of x at the given positions: bit i of positions keeps the i-th lowest set
    bit of x (pdep). x must have more set bits than the highest position."""
    return csl_select_many(x, positions)

cdef inline uint64_t highest_bit(uint64_t x) noexcept nogil:
    """The highest set bit of x as a one-bit mask; x must be non-zero."""
    return (<uint64_t>1) << (63 - __builtin_clzll(x))

cdef inline uint64_t colour_mask_of_bit(uint64_t b) noexcept nogil:
    """The colour mask holding the card whose one-bit mask is b (branch-free)."""
    cdef int colour = <int>(b >= bit(12 * RED)) + <int>(b >= bit(12 * GREEN))
    return colour_mask(colour)

cdef inline uint64_t rain_in_use_mask(int ranks) noexcept nogil:
    """Cards of ranks 1..ranks in all three colours."""
    cdef uint64_t one = ((<uint64_t>1) << ranks) - 1
    return one | (one << 12) | (one << 24)
