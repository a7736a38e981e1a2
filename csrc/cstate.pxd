# cython: language_level=3
"""The C game state: one plain struct, copied by value for every determinization."""
from libc.stdint cimport uint64_t, uint8_t, int8_t, int32_t

cdef enum:
    MAX_PLAYERS = 5
    MAX_GROUPS = 3
    MAX_SKY = 36
    MAX_LINE = 9
    N_KINDS = 4
    KIND_CANDY = 0
    KIND_SPIDER = 1
    KIND_LEOPARD = 2
    KIND_STAR = 3
    SIDE_A = 0
    SIDE_B = 1
    STAR_A_TWICE = 0
    STAR_A_DOUBLE = 1

cdef enum:  # game phases
    PHASE_DEAL = 0
    PHASE_ALLOCATE = 1
    PHASE_WEATHER = 2
    PHASE_PLAY = 3
    PHASE_OVER = 4

cdef enum:  # score breakdown columns
    COL_CANDY = 0
    COL_SPIDER = 1
    COL_LEOPARD = 2
    COL_STAR = 3
    COL_WEATHER = 4
    COL_FACEDOWN = 5
    COL_TOTAL = 6
    N_SCORE_COLS = 7

ctypedef struct Config:
    int32_t n_players
    int32_t n_groups
    int32_t hand_size
    int32_t n_rounds
    int32_t line_size
    int32_t n_sky
    int32_t ranks
    int32_t first_seat
    int32_t group_size[MAX_GROUPS]
    int32_t group_start[MAX_GROUPS]
    uint64_t rain_in_use
    int32_t side[N_KINDS]
    int32_t star_a_mode
    uint8_t sky_kind[MAX_SKY]
    uint8_t sky_count[MAX_SKY]

ctypedef struct State:
    Config cfg
    int8_t phase
    int8_t round
    int8_t first_player
    int8_t to_move
    int8_t group
    int8_t trick_in_group
    int8_t line_pos
    int8_t leader
    int8_t n_in_trick
    int8_t led_colour
    int8_t last_winner
    int8_t trick_card[MAX_PLAYERS]
    uint64_t trick_mask
    int8_t sky_pos
    uint8_t allocated_mask
    uint8_t declared_mask
    uint8_t weather_done_mask
    uint8_t sky_order[MAX_SKY]
    uint64_t hand[MAX_PLAYERS]
    uint64_t pile[MAX_PLAYERS][MAX_GROUPS]
    uint64_t set_aside
    uint64_t played
    uint8_t round_won[MAX_PLAYERS]
    uint8_t round_elems[MAX_PLAYERS][N_KINDS]
    uint8_t elems[MAX_PLAYERS][N_KINDS]
    uint8_t faceup_cards[MAX_PLAYERS]
    uint8_t facedown_cards[MAX_PLAYERS]
    uint8_t good_weather[MAX_PLAYERS]
