// Package swar holds what the scanners share to test the eight bytes of a
// word at once (SIMD within a register): the word's load and the lane
// constants.
package swar

// The byte 0x01 and the byte 0x80 in every lane of a 64-bit word.
const (
	Lanes01 = 0x0101010101010101
	Lanes80 = 0x8080808080808080
)

// Load reads the first eight bytes of s as a little-endian word; the
// compiler makes it one load. The bound is checked once, up front, or it
// would be checked for every byte and the load not merged.
func Load(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
