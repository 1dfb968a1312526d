"""Tables typed by hand from the shared reference, for tests that check the code against independent truth."""

from __future__ import annotations

# pica-formats.md §1.2: index of a pixel inside its 8x8 tile, MORTON[y][x] (y = row from the first stored row)
MORTON = [
    [0, 1, 4, 5, 16, 17, 20, 21],
    [2, 3, 6, 7, 18, 19, 22, 23],
    [8, 9, 12, 13, 24, 25, 28, 29],
    [10, 11, 14, 15, 26, 27, 30, 31],
    [32, 33, 36, 37, 48, 49, 52, 53],
    [34, 35, 38, 39, 50, 51, 54, 55],
    [40, 41, 44, 45, 56, 57, 60, 61],
    [42, 43, 46, 47, 58, 59, 62, 63],
]
