# cython: language_level=3
"""The Candy Lab state in C: the box's tables and one position, fixed-size arrays only.

A line-by-line image of ``csl_ai.candylab.state.State`` and ``Catalogue``'s flat tables:
order cards and candy bars are small ids, a set of them a bitmask (42 and 27 bits); the
belt, the draw pile (top last) and each played stack are int8 arrays with a length.
Chance draws on ``rng``, the same splitmix64 stream as the Python state's, so a position
moved by either core draws the same outcomes.
"""
from libc.stdint cimport uint64_t, uint32_t, int8_t, int32_t

cdef enum:
    CL_ORDERS = 42
    CL_BARS = 27
    CL_MAX_SEATS = 4
    CL_FACE_UP = 3
    CL_MAX_RETURNED = 3
    CL_GOLDEN_SUGAR = 3
    CL_MAX_MOVES = 512

cdef enum:
    CL_WILD = 3

cdef enum:
    EFF_NONE = 0
    EFF_DRAW = 1
    EFF_DISCARD_HAND = 2
    EFF_RETURN_BAR = 3
    EFF_DISCARD_PLAYED = 4
    EFF_SWAP_HANDS = 5

cdef enum:
    PH_MAIN = 0
    PH_EFFECTS = 1
    PH_RETURNING = 2
    PH_DRAWING = 3
    PH_OVER = 4

cdef enum:
    END_NOT_OVER = 0
    END_LAST_BAR = 1
    END_LAST_CARD = 2

cdef enum:
    MV_PLAY = 0
    MV_GIVE_BACK = 1
    MV_STOP = 2
    MV_DRAW = 3
    MV_EFFECT = 4
    MV_LEFT = 0
    MV_RIGHT = 1
    MV_FACE_DOWN = 3
    MV_NONE = 255

# The box: each order card's colour sequence, size, points and kind (cards of one kind are
# interchangeable; order_first is the lowest id of the kind), each bar's colour, value,
# effect and kind. order_codes: bit c set when a run of order_len bars whose colours read
# c = c0 + 4 c1 + 16 c2 (left to right, wild = 3) fulfils the order, in either direction.
ctypedef struct ClCat:
    uint64_t order_codes[CL_ORDERS]
    int8_t order_len[CL_ORDERS]
    int8_t order_pattern[CL_ORDERS][3]
    int8_t order_points[CL_ORDERS]
    int8_t order_type[CL_ORDERS]
    int8_t order_first[CL_ORDERS]
    int8_t bar_colour[CL_BARS]
    int8_t bar_value[CL_BARS]
    int8_t bar_effect[CL_BARS]
    int8_t bar_type[CL_BARS]

ctypedef struct ClState:
    const ClCat* cat
    int8_t players
    int8_t belt_len
    int8_t pile_len
    int8_t current
    int8_t phase
    int8_t returned
    int8_t draws_left
    int8_t golden
    int8_t end
    int8_t belt[CL_BARS]
    int8_t pile[CL_ORDERS]
    int8_t face_up[CL_FACE_UP]
    int8_t stack_len[CL_MAX_SEATS]
    int8_t stacks[CL_MAX_SEATS][CL_ORDERS]
    uint32_t bars[CL_MAX_SEATS]
    uint32_t pending
    uint64_t hands[CL_MAX_SEATS + 1]
    uint64_t box
    uint64_t box_public
    int32_t turn
    uint64_t rng
