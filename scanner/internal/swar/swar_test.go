package swar

import "testing"

func TestLoadIsLittleEndian(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
	}{
		{"\x01\x02\x03\x04\x05\x06\x07\x08", 0x0807060504030201},
		{"abcdefgh-rest", 0x6867666564636261},
		{"\xff\x00\x00\x00\x00\x00\x00\x80", 0x80000000000000ff},
	} {
		if got := Load(tt.in); got != tt.want {
			t.Errorf("Load(%q) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}
